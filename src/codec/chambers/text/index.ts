import { type CmModel, cmDecodeOffThread, cmEncodeAll } from "../../entropy/cm.js";
import {
  decodeSegments,
  type PrimeFrom,
  segmentJobs,
  splitPoint,
  splitsWell,
  writeSegments,
} from "../../entropy/cm-segments.js";
import { fail } from "../../errors.js";
import type { Chamber } from "../types.js";
import { isExecutable, x86Decode, x86Encode } from "./x86.js";

/**
 * Layouts written in params[0]; a decoder refuses layouts it does not know.
 *  1 — one stream, model 1          2 — two segments (entropy/cm-segments.ts), model 1
 *  3 — one stream, model 2          4 — two segments, model 2
 *  5 — two segments, model 2, segment 1 primed by the input's head (both decode at once)
 *  6 — one stream, model 3          7 — as 5, model 3
 * The encoder writes 6 and 7; 1-5 (written by earlier versions) still decode.
 */
const LAYOUTS: Record<number, { model: CmModel; split: PrimeFrom | null }> = {
  1: { model: 1, split: null },
  2: { model: 1, split: "adjacent" },
  3: { model: 2, split: null },
  4: { model: 2, split: "adjacent" },
  5: { model: 2, split: "head" },
  6: { model: 3, split: null },
  7: { model: 3, split: "head" },
};
const ONE_LAYOUT = 6;
const SPLIT_LAYOUT = 7;
const MODEL: CmModel = 3;

/** two segments, coded at once */
async function encodeSegments(data: Uint8Array): Promise<Uint8Array> {
  const cut = splitPoint(data.length); // data ≥ SPLIT_MIN, so PRIME < cut < length
  const [a, b] = await cmEncodeAll(segmentJobs(data, cut, MODEL, "head"));
  return writeSegments(data.length, cut, a!, b!);
}

/**
 * text: UTF-8 text, XML, source code, CSV (and binary at max) — order-N context mixing
 * (entropy/cm.ts) into a binary arithmetic coder. Symmetric: decoding costs as much as encoding.
 * params: [layout, filter] — filter 1 = x86 E8/E9 call filter, used for ELF/PE inputs.
 */
export const text: Chamber<"text"> = {
  name: "text",
  slowDecode: true,
  summary: "context mixing (orders 0-6, word, column, match model, 3 mixers, 3 SSE) + arithmetic coder",
  accepts: () => true,
  async encode(input, ctx) {
    const x86 = isExecutable(input);
    const data = x86 ? x86Encode(input) : input;
    // binary and CSV-like inputs lose more to the split than prose, markup and code
    const split = ctx.dataClass === "text" && splitsWell(data);
    return {
      params: Uint8Array.of(split ? SPLIT_LAYOUT : ONE_LAYOUT, x86 ? 1 : 0),
      payload: split
        ? await encodeSegments(data)
        : (await cmEncodeAll([{ input: data, colEnds: null, primeLen: 0, model: MODEL }]))[0]!,
    };
  },
  async decode(params, payload, rawLen, ctx) {
    const layout = params.length === 2 ? LAYOUTS[params[0]!] : undefined;
    if (!layout || params[1]! > 1) fail("codec_bad_params", "unknown text layout or filter");
    if (rawLen > ctx.maxModelOutputBytes)
      fail("codec_too_large", `context-mixing stream of ${rawLen} bytes exceeds maxModelOutputBytes`);
    const out = layout.split
      ? await decodeSegments(payload, rawLen, layout.model, layout.split)
      : await cmDecodeOffThread(payload, rawLen, null, null, layout.model);
    return params[1] === 1 ? x86Decode(out) : out;
  },
};
