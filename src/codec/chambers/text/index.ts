import { cmDecode, cmEncode } from "../../entropy/cm.js";
import { fail } from "../../errors.js";
import type { Chamber } from "../types.js";

/** model version written in params[0]; a decoder refuses versions it does not know */
export const CM_VERSION = 1;

/**
 * text: UTF-8 text, XML, source code, CSV — order-N context mixing (entropy/cm.ts) into a
 * binary arithmetic coder. Symmetric: decoding costs as much as encoding (~0.5 MB/s).
 */
export const text: Chamber = {
  name: "text",
  summary: "context mixing (orders 0-6, word, column, match model, 2 SSE) + arithmetic coder",
  accepts: () => true,
  async encode(input) {
    return { params: Uint8Array.of(CM_VERSION), payload: cmEncode(input) };
  },
  async decode(params, payload, rawLen, ctx) {
    if (params.length !== 1 || params[0] !== CM_VERSION) fail("codec_bad_params", "unknown text model version");
    if (rawLen > ctx.maxModelOutputBytes)
      fail("codec_too_large", `context-mixing stream of ${rawLen} bytes exceeds maxModelOutputBytes`);
    return cmDecode(payload, rawLen);
  },
};
