import { cmDecode, cmEncode, cmEncodeAll } from "../../entropy/cm.js";
import { decodeSegments, segmentJobs, splitPoint, splitsWell, writeSegments } from "../../entropy/cm-segments.js";
import { fail } from "../../errors.js";
import type { Chamber } from "../types.js";
import { isExecutable, x86Decode, x86Encode } from "./x86.js";

/**
 * Model versions written in params[0]; a decoder refuses versions it does not know.
 *  1 — one context-mixing stream over the whole input (short or numeric text, binary).
 *  2 — two segments coded at once on two threads (entropy/cm-segments.ts).
 */
const V1 = 1;
const V2 = 2;

/** two segments, coded at once (v2) */
async function encodeSegments(data: Uint8Array): Promise<Uint8Array> {
  const cut = splitPoint(data.length)!;
  const [a, b] = await cmEncodeAll(segmentJobs(data, cut));
  return writeSegments(data.length, cut, a!, b!);
}

/**
 * text: UTF-8 text, XML, source code, CSV (and binary at max) — order-N context mixing
 * (entropy/cm.ts) into a binary arithmetic coder. Symmetric: decoding costs as much as encoding.
 * params: [model version, filter] — filter 1 = x86 E8/E9 call filter, used for ELF/PE inputs.
 */
export const text: Chamber = {
  name: "text",
  summary: "context mixing (orders 0-6, word, column, match model, 3 mixers, 3 SSE) + arithmetic coder",
  accepts: () => true,
  async encode(input, ctx) {
    const x86 = isExecutable(input);
    const data = x86 ? x86Encode(input) : input;
    // binary and CSV-like inputs lose more to the split than prose, markup and code
    const split = ctx.dataClass === "text" && splitsWell(data);
    return {
      params: Uint8Array.of(split ? V2 : V1, x86 ? 1 : 0),
      payload: split ? await encodeSegments(data) : cmEncode(data),
    };
  },
  async decode(params, payload, rawLen, ctx) {
    if (params.length !== 2 || (params[0] !== V1 && params[0] !== V2) || params[1]! > 1)
      fail("codec_bad_params", "unknown text model version or filter");
    if (rawLen > ctx.maxModelOutputBytes)
      fail("codec_too_large", `context-mixing stream of ${rawLen} bytes exceeds maxModelOutputBytes`);
    const out = params[0] === V1 ? cmDecode(payload, rawLen) : decodeSegments(payload, rawLen);
    return params[1] === 1 ? x86Decode(out) : out;
  },
};
