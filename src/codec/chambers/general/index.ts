import { backendDecode, brotliAsync, xzCompress, zstdCompress } from "../../backends.js";
import { fail } from "../../errors.js";
import type { Chamber, Level } from "../types.js";
import { transpose, untranspose } from "../util.js";

export interface BackendResult {
  backend: number;
  payload: Uint8Array;
}

/**
 * Best general backend for the level: fast → brotli q5; balanced → min(brotli-11, zstd-19);
 * max → min(brotli-11, xz-9); all on the thread pool, so they overlap with the caller's thread.
 */
export async function bestBackend(data: Uint8Array, level: Level): Promise<BackendResult> {
  if (level === "fast") return { backend: 0, payload: await brotliAsync(data, 5) };
  if (level === "max") {
    const [b, x] = await Promise.all([brotliAsync(data, 11), xzCompress(data, 9).catch(() => null)]);
    return x && x.length < b.length ? { backend: 3, payload: x } : { backend: 0, payload: b };
  }
  const [b, z] = await Promise.all([brotliAsync(data, 11), zstdCompress(data, 19).catch(() => null)]);
  let best: BackendResult = { backend: 0, payload: b };
  if (z && z.length < best.payload.length) best = { backend: 2, payload: z };
  return best;
}

export const STRIDES = [0, 2, 4, 8] as const;

/**
 * general: the best of strong general backends, optionally after byte-lane transposition
 * (stride 2/4/8). params: [backend, stride].
 */
export const general: Chamber = {
  name: "general",
  summary: "best of brotli-11 / zstd-19 / xz-9 (by level), optional stride transposition",
  accepts: () => true,
  async encode(input, ctx) {
    const stride = ctx.stride ?? 0;
    const lanes = stride > 0 && ctx.level !== "fast" && input.length >= stride * 16;
    // the plain and the transposed input are coded at once (thread pool)
    const [plain, t] = await Promise.all([
      bestBackend(input, ctx.level),
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
