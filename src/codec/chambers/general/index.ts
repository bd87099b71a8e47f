import { backendDecode, brotliAsync, xzTuned, zstdCompress } from "../../backends.js";
import { fail } from "../../errors.js";
import { isX86Executable, x86Decode, x86Encode } from "../text/x86.js";
import type { Chamber, Level } from "../types.js";
import { threeSlices, transpose, untranspose } from "../util.js";

export interface BackendResult {
  backend: number;
  payload: Uint8Array;
}

/** zstd level of `fast`: the fastest setting whose output the transforms keep on the frontier */
export const FAST_ZSTD = 3;
/** zstd level of `balanced`: decodes at zstd speed (≥ 100 MB/s per core); -17 was tried: 35 % larger on kennedy.xls and larger than xz -9e overall */
export const BALANCED_ZSTD = 19;

/**
 * Best general backend for the level: fast → zstd -3; balanced → zstd -19, brotli-11 for text and
 * CSV (the JSON and float chambers' streams; the general chamber itself uses balancedBackend at
 * balanced; brotli -5 / -9 when zstd is not available); max →
 * min(brotli-11, xz with xz -9e's settings). brotli and xz
 * run on the thread pool, zstd on a worker thread for large inputs (backends.ts), so they overlap
 * with the caller's thread.
 */
export async function bestBackend(data: Uint8Array, level: Level, textual = false): Promise<BackendResult> {
  if (level === "max") {
    // xz with xz -9e's settings and a dictionary sized to the input (xzTuned): the same bytes within
    // 0.01 % of preset 6's on the corpus's small files, without preset 6's 8 MiB dictionary (about
    // 90 MB and 20 ms to set up even for 1 KB)
    const [b, x] = await Promise.all([brotliAsync(data, 11), xzTuned(data).catch(() => null)]);
    return x && x.length < b.length ? { backend: 3, payload: x } : { backend: 0, payload: b };
  }
  // text and CSV at balanced: brotli-11 (decodes at backend speed, like zstd); on the quick bench
  // corpus it is 3-13 % smaller than zstd -19 on every text file (-69 KB in all), and brotli-10
  // saves too little (-46 KB) to bring balanced onto the frontier
  if (level === "balanced" && textual) return { backend: 0, payload: await brotliAsync(data, 11) };
  const z = await zstdCompress(data, level === "fast" ? FAST_ZSTD : BALANCED_ZSTD).catch(() => null);
  if (z) return { backend: 2, payload: z };
  return { backend: 0, payload: await brotliAsync(data, level === "fast" ? 5 : 9) };
}

export const STRIDES = [0, 2, 4, 8] as const;

/** data classes coded as text by the general chamber (no byte lanes) */
const TEXTUAL: ReadonlySet<string> = new Set(["text", "csv"]);

/** share of ASCII digits in the first 64 KiB (and the middle 64 KiB) of a text */
export function digitShare(b: Uint8Array): number {
  const part = (from: number, to: number): [number, number] => {
    let d = 0;
    for (let i = from; i < to; i++) {
      const c = b[i]!;
      if (c >= 0x30 && c <= 0x39) d++;
    }
    return [d, to - from];
  };
  const S = 1 << 16;
  if (b.length <= 2 * S) {
    const [d, n] = part(0, b.length);
    return n ? d / n : 0;
  }
  const mid = b.length >> 1;
  const [d1, n1] = part(0, S);
  const [d2, n2] = part(mid, mid + S);
  return (d1 + d2) / (n1 + n2);
}

/** texts with at least this share of digits (numeric tables, logs of readings) may go to xz at balanced */
export const NUMERIC_TEXT = 0.5;

/**
 * The backend `balanced` runs, chosen by cheap signals (issue #24: per file no larger than
 * min(brotli-11, xz -9e) + 16 B, decoding ≥ 100 MB/s per core over the corpus):
 *  - text, CSV, JSON, other binaries and numeric arrays whose typed chamber lost: the smaller of
 *    brotli-11 and xz with xz -9e's settings (brotliOrXz), running in full only what a trial on a
 *    sample does not rule out (the bias of the trial per kind: TRIAL_BIAS);
 *  - x86 / x86-64 executables (ELF, PE): the x86 E8/E9 filter (text/x86.ts, params[2] = 1) then brotli-11: 3–5 %
 *    under xz -9e on the bench's executables and decoded ~6× faster than xz (xz with its BCJ filter
 *    is smaller still but decodes at ~25 MB/s per core here, which balanced's ≥ 100 MB/s over the
 *    corpus cannot afford on large ones); below SMALL_EXEC bytes xz with the BCJ filter is tried too;
 *  - compressed data: see the general chamber's encode (zstd -19).
 */
async function balancedBackend(data: Uint8Array, dataClass: string): Promise<BackendResult & { x86?: boolean }> {
  if (dataClass === "binary" && isX86Executable(data)) {
    const small = data.length < SMALL_EXEC;
    const [filtered, raw, bcj, xz] = await Promise.all([
      brotliAsync(x86Encode(data), 11),
      small ? brotliAsync(data, 11) : null,
      small ? xzTuned(data, { x86: true }).catch(() => null) : null,
      small ? xzTuned(data).catch(() => null) : null,
    ]);
    // the filter loses where the executable is mostly tables (gconv/GB18030.so: 92,814 B filtered,
    // 90,146 B as it is)
    const b = raw && raw.length < filtered.length ? { payload: raw, x86: false } : { payload: filtered, x86: true };
    const x = bcj && xz ? (bcj.length < xz.length ? bcj : xz) : (bcj ?? xz);
    // xz only when clearly smaller (it decodes several times slower than brotli), or where brotli
    // would be larger than xz -9e's bytes (the per-file bound)
    return x && (x.length < XZ_CLEAR_WIN * b.payload.length || (xz && b.payload.length > xz.length))
      ? { backend: 3, payload: x }
      : { backend: 0, payload: b.payload, x86: b.x86 };
  }
  return brotliOrXz(data, trialKind(data, dataClass));
}

/**
 * what the input is, for the trial. Numeric text (≥ half digits: CSV of readings, number-heavy
 * JSON): xz's lead grows with the input far beyond what a sample shows (nab_nyc_taxi.csv:
 * brotli-11 / xz 0.918 on the sample, 1.241 in full), so the trial may only rule brotli-11 out
 * (TRIAL_BIAS: never xz), and below TRIAL_LONG bytes it does not run at all (both in full): there
 * it would have ruled brotli-11 out on one numeric text of the corpus (elf_Stocks-USA.csv) for its
 * 0.12-0.2 CPU-s on each; from TRIAL_LONG up it saves brotli-11's CPU where xz leads (canada.json:
 * 1.028 on the sample, 1.142 in full, 4.3 CPU-s).
 */
export type TrialKind = "prose" | "json" | "binary" | "numeric" | "typed";

/**
 * The largest (brotli-11 / xz) on the whole input over the same on trialSample, per kind, on the
 * 92-file corpus (../shared/corpus; docs/codec.md "Balanced"), plus a margin: xz's lead grows with
 * the input (long matches beyond the sample, brotli's static dictionary helps a small sample more),
 * so the sample flatters brotli. Prose and code up to 1.075 (book2, lcet10, world192), JSON 1.112
 * (gsoc-2018), binaries 1.10 (kennedy.xls); numeric arrays whose typed chamber lost up to 1.57
 * (bible_the_positions.i32, synth_runs.i32 1.12): never brotli-11 alone. enwiki_sample.xml
 * (6 MB) reached 1.121 as prose, where brotli-11 alone still won (0.886 on the sample, 0.993 in full).
 */
export const TRIAL_BIAS: Record<TrialKind, number> = {
  prose: 1.08,
  json: 1.13,
  binary: 1.12,
  numeric: Number.POSITIVE_INFINITY,
  typed: Number.POSITIVE_INFINITY,
};
/**
 * below TRIAL_LONG bytes prose, JSON and binaries keep the bias of the trial before issue #24's
 * CPU work (2 %, both ways), which the corpus validated: brotli-11's lead on prose and JSON of this
 * size was at least 1.3 % wherever the trial ruled xz out (book1 0.981, plrabn12 0.987)
 */
export const TRIAL_BIAS_SHORT = 1.02;
/** from this size up the kind's TRIAL_BIAS applies (xz's lead grows with the input) */
export const TRIAL_LONG = 1 << 20;

/** xz alone when its sample output is this much smaller than brotli-11's (the sample never flattered xz by more than 4 % on the corpus, and never where it led by ≥ 1 %) */
export const TRIAL_XZ_LEAD = 1.01;

/** inputs up to this size run both brotli-11 and xz in full at balanced (no trial) */
export const TRIAL_FULL = 192 * 1024;

const TYPED_CLASSES: ReadonlySet<string> = new Set(["int32", "timestamps", "float64", "float32"]);

function trialKind(data: Uint8Array, dataClass: string): TrialKind {
  if (TYPED_CLASSES.has(dataClass)) return "typed";
  if (TEXTUAL.has(dataClass) || dataClass === "json") {
    if (digitShare(data) >= NUMERIC_TEXT) return "numeric";
    return dataClass === "json" ? "json" : dataClass === "csv" ? "numeric" : "prose";
  }
  return "binary";
}

/** three 32 KiB slices (at 1/8, 1/2 and 7/8 of the input) */
const trialSample = (b: Uint8Array): Uint8Array => threeSlices(b, 32 * 1024);

/**
 * Which of brotli-11 and xz to run in full on an input of `size` > TRIAL_FULL bytes, from r =
 * brotli-11 / xz on the sample: xz alone when r > TRIAL_XZ_LEAD, brotli-11 alone when r × the bias
 * (TRIAL_BIAS_SHORT below TRIAL_LONG bytes except for numeric arrays, else TRIAL_BIAS[kind]) < 1,
 * else both.
 */
export function trialDecision(r: number, kind: TrialKind, size: number): { brotli: boolean; xz: boolean } {
  if (r > TRIAL_XZ_LEAD) return { brotli: false, xz: true };
  const bias = size < TRIAL_LONG && kind !== "typed" && kind !== "numeric" ? TRIAL_BIAS_SHORT : TRIAL_BIAS[kind];
  if (r * bias < 1) return { brotli: true, xz: false };
  return { brotli: true, xz: true };
}

/**
 * The smaller of brotli-11 and xz (xz -9e's settings), running in full only the backends a trial on
 * a 96 KiB sample does not rule out (trialDecision).
 */
async function brotliOrXz(data: Uint8Array, kind: TrialKind): Promise<BackendResult> {
  let runB = true;
  let runX = true;
  // numeric text below TRIAL_LONG: both in full, no trial (see TrialKind); from TRIAL_LONG up the
  // trial may still rule brotli-11 out, never xz (canada.json: 1.028 on the sample, 1.142 in full)
  if (data.length > TRIAL_FULL && (kind !== "numeric" || data.length >= TRIAL_LONG)) {
    const s = trialSample(data);
    const [sb, sx] = await Promise.all([brotliAsync(s, 11), xzTuned(s).catch(() => null)]);
    if (sx) ({ brotli: runB, xz: runX } = trialDecision(sb.length / sx.length, kind, data.length));
  }
  const [b, x] = await Promise.all([
    runB ? brotliAsync(data, 11) : null,
    runX ? xzTuned(data).catch(() => null) : null,
  ]);
  if (x && (!b || x.length < b.length)) return { backend: 3, payload: x };
  return { backend: 0, payload: b ?? (await brotliAsync(data, 11)) };
}

/**
 * executables under this size also try brotli-11 without the x86 filter and xz with and without
 * the BCJ filter at balanced, so that none is over min(brotli-11, xz -9e) + 16 B. Up to 1 MiB xz's
 * slower decoding costs at most ~40 ms. /usr/bin/lz4 (211,592 B): x86 + brotli-11 84,519 B, over
 * `xz -9e`'s 83,440 B, where xz with BCJ gives 80,920 B; gconv/GB18030.so (182,520 B of tables):
 * x86 + brotli-11 92,814 B, brotli-11 alone 90,146 B (64 KiB and xz + BCJ only until issue #24's
 * per-file bound showed these). Above, x86 + brotli-11 stayed under xz -9e on every executable of
 * the benchmark.
 */
export const SMALL_EXEC = 1 << 20;
/**
 * ... and keep it only when it is at least 3 % smaller than x86 + brotli-11 (xz with BCJ is about 5 %
 * under xz -9e on executables, so brotli within 3 % of it stays under xz -9e's size)
 */
export const XZ_CLEAR_WIN = 0.97;
/** params[2] of the general chamber: 1 = x86 E8/E9 call filter applied before the backend */
const FILTER_X86 = 1;

/**
 * zstd level by data class at level fast, where it differs from FAST_ZSTD: prose and code (text)
 * at -4 — on the bench's quick corpus −17.6 KB (−1.7 %) on the files profiled as text, for +4
 * CPU-ms of ~60 (the price of fast staying under zstd -19's total bytes); -5 would save 25 KB
 * more for 7 ms more.
 */
const FAST_ZSTD_BY_CLASS: Record<string, number> = { text: 4 };

/** byte-lane width by data class at level fast (int32 arrays: 4) */
const FAST_LANES: Record<string, number> = { int32: 4 };

/**
 * general: the best of strong general backends, optionally after byte-lane transposition
 * (stride 2/4/8). params: [backend, stride].
 */
export const general: Chamber<"general"> = {
  name: "general",
  slowDecode: false,
  summary:
    "zstd -3 (fast), smaller of brotli-11 / xz -9e with an x86 filter for executables (balanced) or best of brotli-11 / xz-9 (max), optional stride transposition",
  accepts: () => true,
  async encode(input, ctx) {
    const stride = ctx.stride ?? 0;
    if (ctx.level === "fast") {
      // one pass: byte lanes of an int32 array's width (the router sends them here at fast), else
      // the bytes as they are
      const w = FAST_LANES[ctx.dataClass ?? ""] ?? 0;
      const lanes = w > 0 && input.length >= w * 16;
      const data = lanes ? transpose(input, w) : input;
      const zl = FAST_ZSTD_BY_CLASS[ctx.dataClass ?? ""];
      const z = zl ? await zstdCompress(data, zl).catch(() => null) : null;
      const b = z ? { backend: 2, payload: z } : await bestBackend(data, "fast");
      return { params: Uint8Array.of(b.backend, lanes ? w : 0), payload: b.payload };
    }
    const cls = ctx.dataClass ?? "binary";
    // balanced: no byte lanes (a UTF-8 text's "stride" is a coincidence of the sample, and xz's
    // position bits model records) except for compressed data, which keeps the path below unless it
    // still shrinks (PDF, PNG: zstd -3 saves ≥ 2 %): zstd -19 alone, fast to decode. brotli-11 was
    // run beside it until issue #24's CPU work: on the corpus zstd -19 is the smaller of the two on
    // every compressed file (alp_results.png 161,950 vs 165,387 B; paper-100k.pdf 80,720 vs 80,772)
    // and under xz -9e on both, for a tenth of brotli-11's CPU
    if (ctx.level === "balanced" && cls === "high_entropy") {
      const z3 = await zstdCompress(input, FAST_ZSTD).catch(() => null);
      if (z3 && z3.length < 0.98 * input.length) {
        const z = await zstdCompress(input, BALANCED_ZSTD).catch(() => null);
        return z
          ? { params: Uint8Array.of(2, 0), payload: z }
          : { params: Uint8Array.of(0, 0), payload: await brotliAsync(input, 11) };
      }
    }
    if (ctx.level === "balanced" && cls !== "high_entropy") {
      const b = await balancedBackend(input, cls);
      // the filter byte only when a filter ran: every other container keeps its 2 parameter bytes
      return {
        params: b.x86 ? Uint8Array.of(b.backend, 0, FILTER_X86) : Uint8Array.of(b.backend, 0),
        payload: b.payload,
      };
    }
    const textual = TEXTUAL.has(cls);
    const lanes = !textual && stride > 0 && input.length >= stride * 16;
    // the plain and the transposed input are coded at once (thread pool)
    const [plain, t] = await Promise.all([
      bestBackend(input, ctx.level, textual),
      lanes ? bestBackend(transpose(input, stride), ctx.level) : null,
    ]);
    let best = { params: Uint8Array.of(plain.backend, 0), payload: plain.payload };
    if (t && t.payload.length < best.payload.length)
      best = { params: Uint8Array.of(t.backend, stride), payload: t.payload };
    return best;
  },
  async decode(params, payload, rawLen) {
    // [backend, stride] or [backend, stride, filter] (filter 1 = x86 E8/E9, written since issue #24)
    if (params.length !== 2 && !(params.length === 3 && params[2] === FILTER_X86))
      fail("codec_bad_params", "general expects [backend, stride] or [backend, stride, 1]");
    const stride = params[1]!;
    if (!(STRIDES as readonly number[]).includes(stride)) fail("codec_bad_params", `bad stride ${stride}`);
    const out = await backendDecode(params[0]!, payload, rawLen);
    const bytes = stride ? untranspose(out, stride) : out;
    return params.length === 3 ? x86Decode(bytes) : bytes;
  },
};
