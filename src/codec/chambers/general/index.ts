import { backendDecode, brotliAsync, xzTuned, zstdCompress } from "../../backends.js";
import { fail } from "../../errors.js";
import { isX86Executable, x86Decode, x86Encode } from "../text/x86.js";
import type { Chamber, Level } from "../types.js";
import { transpose, untranspose } from "../util.js";

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
 *  - text, CSV, JSON: the smaller of brotli-11 and xz (brotliOrXz), both in full for numeric text
 *    (≥ half digits) and texts ≥ 1 MiB, else after a trial on a sample (mostly brotli-11 alone);
 *  - x86 / x86-64 executables (ELF, PE): the x86 E8/E9 filter (text/x86.ts, params[2] = 1) then brotli-11: 3–5 %
 *    under xz -9e on the bench's executables and decoded ~6× faster than xz (xz with its BCJ filter
 *    is smaller still but decodes at ~25 MB/s per core here, which balanced's ≥ 100 MB/s over the
 *    corpus cannot afford); below SMALL_EXEC bytes xz with the BCJ filter is tried too;
 *  - other binaries and numeric arrays whose typed chamber lost: the smaller of brotli-11 and xz
 *    with xz -9e's settings, after a trial on a sample that skips the clear loser (record files,
 *    archives, object files and protobufs go either way);
 *  - compressed data: see the general chamber's encode (zstd -19 or brotli-11).
 */
async function balancedBackend(data: Uint8Array, dataClass: string): Promise<BackendResult & { x86?: boolean }> {
  if (TEXTUAL.has(dataClass) || dataClass === "json") {
    // numeric text (CSV of readings, number-heavy JSON) and long texts: xz's lead over brotli grows
    // with the input, which a sample trial mispredicts (elf_Air-pressure.csv, bible.txt), so both
    // run in full; shorter prose, code and JSON: the trial, which mostly leaves brotli-11 alone
    const full = data.length >= TRIAL_LONG_TEXT || digitShare(data) >= NUMERIC_TEXT;
    return brotliOrXz(data, !full);
  }
  if (dataClass === "binary" && isX86Executable(data)) {
    const [b, bcj] = await Promise.all([
      brotliAsync(x86Encode(data), 11),
      data.length < SMALL_EXEC ? xzTuned(data, { x86: true }).catch(() => null) : null,
    ]);
    // xz only when clearly smaller: it decodes several times slower than brotli
    return bcj && bcj.length < XZ_CLEAR_WIN * b.length
      ? { backend: 3, payload: bcj }
      : { backend: 0, payload: b, x86: true };
  }
  return brotliOrXz(data, true);
}

/** texts from this size up run both brotli-11 and xz in full at balanced */
export const TRIAL_LONG_TEXT = 1 << 20;
/** inputs up to this size run both brotli-11 and xz in full at balanced (no trial) */
export const TRIAL_FULL = 192 * 1024;
/** a backend whose trial output is within this share of the other's also runs in full */
export const TRIAL_MARGIN = 0.02;

/** three 32 KiB slices (at 1/8, 1/2 and 7/8 of the input) */
function trialSample(b: Uint8Array): Uint8Array {
  const S = 32 * 1024;
  const out = new Uint8Array(3 * S);
  [1 / 8, 1 / 2, 7 / 8].forEach((f, k) => {
    const at = Math.min(b.length - S, Math.floor(b.length * f));
    out.set(b.subarray(at, at + S), k * S);
  });
  return out;
}

/**
 * The smaller of brotli-11 and xz (xz -9e's settings), running in full only the backends a trial on
 * a 96 KiB sample does not rule out (the loser by more than TRIAL_MARGIN is skipped): binaries, numeric
 * text and numeric arrays whose typed chamber lost, where either backend may win by a few per cent.
 */
async function brotliOrXz(data: Uint8Array, trial: boolean): Promise<BackendResult> {
  let runB = true;
  let runX = true;
  if (trial && data.length > TRIAL_FULL) {
    const s = trialSample(data);
    const [sb, sx] = await Promise.all([brotliAsync(s, 11), xzTuned(s).catch(() => null)]);
    if (sx) {
      runB = sb.length < sx.length * (1 + TRIAL_MARGIN);
      runX = sx.length < sb.length * (1 + TRIAL_MARGIN);
    }
  }
  const [b, x] = await Promise.all([
    runB ? brotliAsync(data, 11) : null,
    runX ? xzTuned(data).catch(() => null) : null,
  ]);
  if (x && (!b || x.length < b.length)) return { backend: 3, payload: x };
  return { backend: 0, payload: b ?? (await brotliAsync(data, 11)) };
}

/** executables under this size also try xz with the BCJ filter at balanced */
export const SMALL_EXEC = 64 * 1024;
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
    // still shrinks (PDF, PNG: zstd -3 saves ≥ 2 %): the smaller of zstd -19 and
    // brotli-11, both fast to decode (xz is rarely ahead of both there: its edge is literal modelling)
    if (ctx.level === "balanced" && cls === "high_entropy") {
      const z3 = await zstdCompress(input, FAST_ZSTD).catch(() => null);
      if (z3 && z3.length < 0.98 * input.length) {
        const [z, b] = await Promise.all([
          zstdCompress(input, BALANCED_ZSTD).catch(() => null),
          brotliAsync(input, 11),
        ]);
        return z && z.length <= b.length
          ? { params: Uint8Array.of(2, 0), payload: z }
          : { params: Uint8Array.of(0, 0), payload: b };
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
