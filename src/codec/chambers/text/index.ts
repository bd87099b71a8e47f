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
 *  8 — one stream, model 4 (text)   9 — as 5, model 4
 * 10 — one stream, model 5 (binary) 11 — as 5, model 5
 * 12 — one stream, model 6 (records) 13 — as 5, model 6
 * 14 — one stream, model 7 (text)   15 — as 5, model 7
 * 16 — one stream, model 8 (binary) 17 — as 5, model 8
 * 18 — one stream, model 9 (records) 19 — as 5, model 9
 * Models 7-9 are 4-6 with larger tables and APMs (entropy/cm-tables.ts). The encoder writes
 * 14-19; 1-13 (written by earlier versions) still decode.
 */
const LAYOUTS: Record<number, { model: CmModel; split: PrimeFrom | null }> = {
  1: { model: 1, split: null },
  2: { model: 1, split: "adjacent" },
  3: { model: 2, split: null },
  4: { model: 2, split: "adjacent" },
  5: { model: 2, split: "head" },
  6: { model: 3, split: null },
  7: { model: 3, split: "head" },
  8: { model: 4, split: null },
  9: { model: 4, split: "head" },
  10: { model: 5, split: null },
  11: { model: 5, split: "head" },
  12: { model: 6, split: null },
  13: { model: 6, split: "head" },
  14: { model: 7, split: null },
  15: { model: 7, split: "head" },
  16: { model: 8, split: null },
  17: { model: 8, split: "head" },
  18: { model: 9, split: null },
  19: { model: 9, split: "head" },
};
/** the layouts the encoder writes, per model: [one stream, two segments] */
const WRITES: Partial<Record<CmModel, [number, number]>> = { 7: [14, 15], 8: [16, 17], 9: [18, 19] };
/**
 * The encoder picks the profile (7 text, 8 binary, 9 records) by coding the input's
 * first SAMPLE bytes with each candidate and keeping the smallest (x86 executables: 8 without a
 * trial). An input of at most SAMPLE bytes coded as one stream keeps the trial's output itself.
 */
export const SAMPLE = 1 << 16;
/** data classes whose trial leaves out the binary profile (sparse contexts lose 2-6 % on text) */
const TEXTUAL: ReadonlySet<string> = new Set(["text", "csv", "json"]);
/**
 * Typed arrays (the router tries this chamber after their typed chamber at max): the full coding
 * is skipped when the trial's output, scaled to the input's length, is over GIVE_UP × the typed
 * chamber's size. The trial codes a cold model's first 64 KiB, so it overestimates. Measured on
 * the corpus's typed files (scaled trial / typed chamber): where context mixing won in full, 0.61
 * (alp_food_prices_tw.f64, −36 %), 0.90-0.91 (book12_token_rank_ids.i32, city_temp_x10.i32,
 * elf_City-temp.f32: −6 to −8 %), 1.23-1.24 (alp_city_temperature_f_tw.f64, elf_City-temp.f64:
 * −5 to −6 %); where it lost, 1.18 (synth_random_walk.i32, +11 %), 1.02 (synth_small_range), 1.32-1.33
 * (alp_bitcoin_transactions_f_tw.f64, elf_Stocks-USA.f64), 1.79 (elf_Air-pressure.f64). Skipping
 * saves about 1.3 CPU-s per MB.
 */
const TYPED: ReadonlySet<string> = new Set(["int32", "timestamps", "float64", "float32"]);
export const GIVE_UP = 1.25;

/** the candidates' outputs on the sample, coded at once on the pool; returns the smallest's index */
async function pick(data: Uint8Array, models: CmModel[]): Promise<{ model: CmModel; out: Uint8Array }> {
  const sample = data.subarray(0, Math.min(data.length, SAMPLE));
  const outs = await cmEncodeAll(models.map((model) => ({ input: sample, colEnds: null, primeLen: 0, model })));
  let best = 0;
  for (let i = 1; i < outs.length; i++) if (outs[i]!.length < outs[best]!.length) best = i;
  return { model: models[best]!, out: outs[best]! };
}

/** two segments, coded at once */
async function encodeSegments(data: Uint8Array, model: CmModel): Promise<Uint8Array> {
  const cut = splitPoint(data.length); // data ≥ SPLIT_MIN, so PRIME < cut < length
  const [a, b] = await cmEncodeAll(segmentJobs(data, cut, model, "head"));
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
  summary:
    "context mixing (orders 0-5, word or sparse or record contexts, match model, 4+1 mixers, 3 SSE) + arithmetic coder",
  accepts: () => true,
  async encode(input, ctx) {
    const x86 = isExecutable(input);
    const data = x86 ? x86Encode(input) : input;
    // binary and CSV-like inputs lose more to the split than prose, markup and code
    const split = ctx.dataClass === "text" && splitsWell(data);
    const candidates: CmModel[] = x86 ? [8] : TEXTUAL.has(ctx.dataClass ?? "") ? [7, 9] : [7, 9, 8];
    let model = candidates[0]!;
    let payload: Uint8Array | null = null;
    if (candidates.length > 1) {
      const best = await pick(data, candidates);
      model = best.model;
      if (!split && data.length <= SAMPLE) payload = best.out;
      else if (
        ctx.toBeat !== undefined &&
        TYPED.has(ctx.dataClass ?? "") &&
        (best.out.length * data.length) / SAMPLE > GIVE_UP * ctx.toBeat
      )
        return null;
    }
    const [one, two] = WRITES[model]!;
    if (!payload)
      payload = split
        ? await encodeSegments(data, model)
        : (await cmEncodeAll([{ input: data, colEnds: null, primeLen: 0, model }]))[0]!;
    return { params: Uint8Array.of(split ? two : one, x86 ? 1 : 0), payload };
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
