import { cmDecode, cmEncode } from "../../entropy/cm.js";
import { fail } from "../../errors.js";
import type { Chamber } from "../types.js";
import { isExecutable, x86Decode, x86Encode } from "./x86.js";

/** model version written in params[0]; a decoder refuses versions it does not know */
export const CM_VERSION = 1;

/**
 * text: UTF-8 text, XML, source code, CSV (and binary at max) — order-N context mixing
 * (entropy/cm.ts) into a binary arithmetic coder. Symmetric: decoding costs as much as encoding.
 * params: [model version, filter] — filter 1 = x86 E8/E9 call filter, used for ELF/PE inputs.
 */
export const text: Chamber = {
  name: "text",
  summary: "context mixing (orders 0-6, word, column, match model, 3 mixers, 3 SSE) + arithmetic coder",
  accepts: () => true,
  async encode(input) {
    const x86 = isExecutable(input);
    return { params: Uint8Array.of(CM_VERSION, x86 ? 1 : 0), payload: cmEncode(x86 ? x86Encode(input) : input) };
  },
  async decode(params, payload, rawLen, ctx) {
    if (params.length !== 2 || params[0] !== CM_VERSION || params[1]! > 1)
      fail("codec_bad_params", "unknown text model version or filter");
    if (rawLen > ctx.maxModelOutputBytes)
      fail("codec_too_large", `context-mixing stream of ${rawLen} bytes exceeds maxModelOutputBytes`);
    const out = cmDecode(payload, rawLen);
    return params[1] === 1 ? x86Decode(out) : out;
  },
};
