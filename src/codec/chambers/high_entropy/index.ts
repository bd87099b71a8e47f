import { fail } from "../../errors.js";
import { type Chamber, EMPTY } from "../types.js";

/** high_entropy: already-compressed or random data, stored as is (≈ zero time, fixed framing cost). */
export const highEntropy: Chamber<"high_entropy"> = {
  name: "high_entropy",
  slowDecode: false,
  summary: "already-compressed or random data: stored unchanged",
  accepts: () => true,
  async encode(input) {
    return { params: EMPTY, payload: input };
  },
  async decode(params, payload, rawLen) {
    if (params.length !== 0) fail("codec_bad_params", "stored takes no parameters");
    if (payload.length !== rawLen) fail("codec_corrupt", "stored payload length differs from the declared length");
    return payload.slice();
  },
};
