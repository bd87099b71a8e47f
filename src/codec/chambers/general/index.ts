import { backendDecode, brotliAsync, xzCompress, zstdCompress } from "../../backends.js";
import { fail } from "../../errors.js";
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
 * CSV (all decode at backend speed; brotli -5 / -9 when zstd is not available); max →
 * min(brotli-11, xz-9). brotli and xz
 * run on the thread pool, zstd on a worker thread for large inputs (backends.ts), so they overlap
 * with the caller's thread.
 */
export async function bestBackend(data: Uint8Array, level: Level, textual = false): Promise<BackendResult> {
  if (level === "max") {
    const [b, x] = await Promise.all([brotliAsync(data, 11), xzCompress(data, 9).catch(() => null)]);
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

/** data classes coded as text by the general chamber (no byte lanes; brotli-11 tried at balanced) */
const TEXTUAL: ReadonlySet<string> = new Set(["text", "csv"]);

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
    "zstd -3 (fast), zstd -19 (balanced; brotli-11 for text) or best of brotli-11 / xz-9 (max), optional stride transposition",
  accepts: () => true,
  async encode(input, ctx) {
    const stride = ctx.stride ?? 0;
    if (ctx.level === "fast") {
      // one pass: byte lanes of an int32 array's width (the router sends them here at fast), else
      // the bytes as they are
      const w = FAST_LANES[ctx.dataClass ?? ""] ?? 0;
      const lanes = w > 0 && input.length >= w * 16;
      const b = await bestBackend(lanes ? transpose(input, w) : input, "fast");
      return { params: Uint8Array.of(b.backend, lanes ? w : 0), payload: b.payload };
    }
    // text and CSV: byte lanes never pay (a UTF-8 text's "stride" is a coincidence of the sample)
    const textual = TEXTUAL.has(ctx.dataClass ?? "");
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
    if (params.length !== 2) fail("codec_bad_params", "general expects 2 parameter bytes");
    const stride = params[1]!;
    if (!(STRIDES as readonly number[]).includes(stride)) fail("codec_bad_params", `bad stride ${stride}`);
    const out = await backendDecode(params[0]!, payload, rawLen);
    return stride ? untranspose(out, stride) : out;
  },
};
