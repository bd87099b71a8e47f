import { CodecError } from "../../src/codec/index.js";

export const i32 = (vals: ArrayLike<number>): Uint8Array => new Uint8Array(Int32Array.from(vals as number[]).buffer);
export const f64 = (vals: ArrayLike<number>): Uint8Array => new Uint8Array(Float64Array.from(vals as number[]).buffer);
export const f32 = (vals: ArrayLike<number>): Uint8Array => new Uint8Array(Float32Array.from(vals as number[]).buffer);
export const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

/** deterministic xorshift32 */
export function rng(seed: number): () => number {
  let x = seed | 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

export async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "ok";
  } catch (e) {
    if (e instanceof CodecError) return e.code;
    throw e;
  }
}
