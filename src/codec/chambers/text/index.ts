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
import { PARALLEL_MIN_BYTES } from "../../window.js";
import type { Chamber } from "../types.js";
import { transpose, untranspose } from "../util.js";
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
 * 20 — one stream, model 10 (text)  21 — one stream, model 11 (binary)  22 — one stream, model 12
 * 23 — one stream, model 13 (text in whole UTF-8 characters)  24 — as 5, model 14
 * Models 7-9 are 4-6 with larger tables and APMs, models 10-12 are 7-9 with tables up to 2^22 slots
 * (entropy/cm-tables.ts). The encoder writes 20-22; 1-19 (written by earlier versions) still decode.
 *
 * Since codec library 1.4.0 the encoder splits text into two segments coded on two threads (layouts
 * 15, 17, 19) only from PARALLEL_MIN_BYTES (8 MiB), where every level uses every core; below, where
 * it split from 1 MiB before, one stream with the larger tables is 2.5 % smaller on
 * enwiki_sample.xml (1,308,599 → 1,276,620 B) and 1.7 % on bible.txt (703,952 → 691,762 B), for
 * about 1.7 times the wall time on a two-core machine (the same CPU time).
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
  20: { model: 10, split: null },
  21: { model: 11, split: null },
  22: { model: 12, split: null },
  23: { model: 13, split: null },
  24: { model: 14, split: "head" },
};
/** the layout the encoder writes, per model: one stream (models 10-12) or two segments (7-9) */
const WRITES: Partial<Record<CmModel, number>> = { 10: 20, 11: 21, 12: 22, 13: 23, 7: 15, 8: 17, 9: 19, 14: 24 };
/** the model of each profile's two segments (each segment ≥ 4 MiB: 2^21 slots, half the memory of 10-12's) */
const SEGMENT_MODEL: Partial<Record<CmModel, CmModel>> = { 10: 7, 11: 8, 12: 9, 13: 14 };
/** text of this size and more is split into two segments (prose, markup and code: splitsWell) */
export const SPLIT_FROM = PARALLEL_MIN_BYTES;
/**
 * The encoder picks the profile (10 text, 11 binary, 12 records) by coding SAMPLE bytes of the
 * input with each candidate and keeping the smallest (x86 executables: 11 without a trial). The
 * sample is the input's middle: its head is often a header, a preamble or blank (the fax image
 * calgary/pic starts with white rows: the head picked the binary profile, 43,694 B; the middle
 * picks records, 28,829 B). An input of at most SAMPLE bytes keeps the trial's output itself.
 */
export const SAMPLE = 1 << 16;
/** where the trial's sample starts: the middle SAMPLE bytes (the whole input when it is shorter) */
export const sampleStart = (n: number): number => Math.max(0, Math.floor((n - SAMPLE) / 2));
/**
 * Textual inputs whose sample has at least this share of bytes that start a 3- or 4-byte UTF-8
 * character (0xE0-0xF4: Chinese, Japanese, Korean, Thai, Indic scripts) also try model 13 (contexts
 * of whole characters). In the middle 64 KiB: genji_ja.txt 0.33 (model 13 wins, −9.7 %), the
 * Chinese-English dictionary cedict 0.076 (model 10 wins by 1.2 %), Russian and English prose 0
 * (Cyrillic letters take 2 bytes; on crime_and_punishment_ru.txt model 13 would lose 6.8 %).
 */
export const CHARS_MIN_SHARE = 1 / 16;
/** the share of the sample's bytes that start a 3- or 4-byte UTF-8 character */
export function wideShare(sample: Uint8Array): number {
  let n = 0;
  for (const b of sample) if (b >= 0xe0 && b <= 0xf4) n++;
  return sample.length ? n / sample.length : 0;
}
/** data classes whose trial leaves out the binary profile (sparse contexts lose 2-6 % on text) */
const TEXTUAL: ReadonlySet<string> = new Set(["text", "csv", "json"]);
/**
 * Typed arrays (the router tries this chamber after their typed chamber at max): the full coding
 * is skipped when the trial's output, scaled to the input's length, is over GIVE_UP × the typed
 * chamber's size. The trial codes a cold model's 64 KiB, so it overestimates. Measured on the
 * corpus's typed files with the middle sample (scaled trial / typed chamber): where context mixing
 * won in full, 0.14 (calgary/pic), 0.79 (alp_food_prices_tw.f64, −36 %), 0.91-0.94
 * (book12_token_rank_ids.i32, city_temp_x10.i32, twitter_aapl_values.i32), 0.97-1.10
 * (elf_POI-lat.f64, alp_city_temperature_f_tw.f64, elf_City-temp.f32 and .f64); where it lost,
 * 0.65 (nyc_taxi_values.i32, +3 %), 0.97 (elf_Stocks-USA.f64, +11 %), 1.02 (synth_small_range),
 * 1.17-1.21 (synth_random_walk.i32, bible_the_positions.i32), 1.35 (alp_bitcoin_transactions_f_tw.f64),
 * 1.57 (nab_machine_temperature.f64); skipped though it would have won, 1.77 (elf_Air-pressure.f64,
 * −7 %: the cold model learns its values slowly). GIVE_UP = 1.15 keeps every win above and skips
 * the random walk and the positions (1.17-1.21, the most CPU spent for nothing: 3.3 CPU-s on the
 * random walk in the quick benchmark at 1.25). Skipping saves about 1.3 CPU-s per MB.
 */
const TYPED: ReadonlySet<string> = new Set(["int32", "timestamps", "float64", "float32"]);
export const GIVE_UP = 1.15;

/**
 * Byte lanes (params[1] = the stride): a binary or typed input whose profile found records of 2, 4
 * or 8 bytes is also tried transposed into lanes (chambers/util.ts `transpose`: every record's
 * first byte, then every second byte, …), each lane a run of similar bytes that the models' order-n
 * contexts then see together. The trial codes the middle sample's lanes with the same models as the
 * bytes as they are and keeps the smallest. /usr/lib/x86_64-linux-gnu/gconv/GB18030.so (182,520 B
 * of 16-bit conversion tables, stride 2): 78,358 B as an x86 executable, 41,187 B in lanes, where
 * the general chamber's lanes gave 46,404 B and `zpaq -m5` 41,534 B.
 */
export const LANE_STRIDES: readonly number[] = [2, 4, 8];
/** the lane stride to try for an input: the profile's, when it is one of LANE_STRIDES and the input has 16 records */
const laneStride = (stride: number | undefined, n: number): number =>
  stride !== undefined && LANE_STRIDES.includes(stride) && n >= 16 * stride ? stride : 0;

/** two segments, coded at once */
async function encodeSegments(data: Uint8Array, model: CmModel): Promise<Uint8Array> {
  const cut = splitPoint(data.length); // data ≥ SPLIT_FROM, so PRIME < cut < length
  const [a, b] = await cmEncodeAll(segmentJobs(data, cut, model, "head"));
  return writeSegments(data.length, cut, a!, b!);
}

/** one way to code the input: its bytes (x86-filtered or not) or its lanes, and the models to try */
interface Variant {
  /** params[1]: 0 none, 1 x86 filter, 2 / 4 / 8 lanes of that stride */
  filter: number;
  data: Uint8Array;
  /** the trial's sample of `data` */
  sample: Uint8Array;
  models: CmModel[];
}

/** every variant's models on its sample, coded at once on the pool; returns the smallest */
async function pick(variants: Variant[]): Promise<{ variant: Variant; model: CmModel; out: Uint8Array }> {
  const jobs = variants.flatMap((variant) => variant.models.map((model) => ({ variant, model })));
  const outs = await cmEncodeAll(
    jobs.map((j) => ({ input: j.variant.sample, colEnds: null, primeLen: 0, model: j.model })),
  );
  let best = 0;
  for (let i = 1; i < outs.length; i++) if (outs[i]!.length < outs[best]!.length) best = i;
  return { ...jobs[best]!, out: outs[best]! };
}

/** the trial's sample: the middle SAMPLE bytes (the whole input when it is shorter) */
const middle = (data: Uint8Array): Uint8Array =>
  data.subarray(sampleStart(data.length), sampleStart(data.length) + SAMPLE);

/**
 * text: UTF-8 text, XML, source code, CSV (and binary at max) — order-N context mixing
 * (entropy/cm.ts) into a binary arithmetic coder. Symmetric: decoding costs as much as encoding.
 * params: [layout, filter] — filter 1 = x86 E8/E9 call filter, used for ELF/PE inputs; 2, 4, 8 =
 * byte lanes of that stride (LANE_STRIDES; written since codec library 1.6.0, which earlier
 * decoders refuse as an unknown filter).
 */
export const text: Chamber<"text"> = {
  name: "text",
  slowDecode: true,
  summary:
    "context mixing (orders 0-5, word or sparse or record contexts, match model, 4+1 mixers, 3 SSE) + arithmetic coder",
  accepts: () => true,
  async encode(input, ctx) {
    const x86 = isExecutable(input);
    const plain = x86 ? x86Encode(input) : input;
    const textual = TEXTUAL.has(ctx.dataClass ?? "");
    const candidates: CmModel[] = x86 ? [11] : textual ? [10, 12] : [10, 12, 11];
    if (textual && !x86 && wideShare(middle(plain)) >= CHARS_MIN_SHARE) candidates.push(13);
    const variants: Variant[] = [{ filter: x86 ? 1 : 0, data: plain, sample: middle(plain), models: candidates }];
    const stride = textual ? 0 : laneStride(ctx.stride, input.length);
    if (stride) {
      // the lanes of the middle sample (its start aligned to a record)
      const from = sampleStart(input.length) - (sampleStart(input.length) % stride);
      variants.push({
        filter: stride,
        data: transpose(input, stride),
        sample: transpose(input.subarray(from, from + SAMPLE), stride),
        models: [10, 12, 11],
      });
    }
    let variant = variants[0]!;
    let model = candidates[0]!;
    let payload: Uint8Array | null = null;
    if (variants.length > 1 || candidates.length > 1) {
      const best = await pick(variants);
      ({ variant, model } = best);
      if (input.length <= SAMPLE) payload = best.out;
      else if (
        ctx.toBeat !== undefined &&
        TYPED.has(ctx.dataClass ?? "") &&
        (best.out.length * input.length) / SAMPLE > GIVE_UP * ctx.toBeat
      )
        return null;
    }
    const data = variant.data;
    if (!payload && data.length >= SPLIT_FROM && ctx.dataClass === "text" && splitsWell(data)) {
      model = SEGMENT_MODEL[model]!;
      payload = await encodeSegments(data, model);
    }
    payload ??= (await cmEncodeAll([{ input: data, colEnds: null, primeLen: 0, model }]))[0]!;
    return { params: Uint8Array.of(WRITES[model]!, variant.filter), payload };
  },
  async decode(params, payload, rawLen, ctx) {
    const layout = params.length === 2 ? LAYOUTS[params[0]!] : undefined;
    const filter = params[1]!;
    if (!layout || !(filter <= 1 || LANE_STRIDES.includes(filter)))
      fail("codec_bad_params", "unknown text layout or filter");
    if (rawLen > ctx.maxModelOutputBytes)
      fail("codec_too_large", `context-mixing stream of ${rawLen} bytes exceeds maxModelOutputBytes`);
    const out = layout.split
      ? await decodeSegments(payload, rawLen, layout.model, layout.split)
      : await cmDecodeOffThread(payload, rawLen, null, null, layout.model);
    return filter === 1 ? x86Decode(out) : filter > 1 ? untranspose(out, filter) : out;
  },
};
