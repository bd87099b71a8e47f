import { fail } from "../errors.js";

export function asInt32(bytes: Uint8Array): Int32Array {
  const n = bytes.length >>> 2;
  if (bytes.byteOffset % 4 === 0) return new Int32Array(bytes.buffer, bytes.byteOffset, n);
  return new Int32Array(bytes.slice(0, n * 4).buffer);
}
export function int32Bytes(values: ArrayLike<number>, n: number): Uint8Array {
  const out = new Int32Array(n);
  let bad = 0;
  for (let i = 0; i < n; i++) {
    const v = values[i]!;
    const x = v | 0;
    bad |= x === v ? 0 : 1;
    out[i] = x;
  }
  if (bad) fail("codec_corrupt", "decoded value outside int32");
  return new Uint8Array(out.buffer);
}
export function checkLen(out: Uint8Array, rawLen: number): Uint8Array {
  if (out.length !== rawLen) fail("codec_corrupt", `decoded ${out.length} bytes, expected ${rawLen}`);
  return out;
}
/**
 * A sample of three `slice`-byte slices, at 1/8, 1/2 and 7/8 of the input; the input itself when
 * it is not longer than the three (the trials of the general chamber and of level fast).
 */
export function threeSlices(b: Uint8Array, slice: number): Uint8Array {
  if (b.length <= 3 * slice) return b;
  const out = new Uint8Array(3 * slice);
  [1 / 8, 1 / 2, 7 / 8].forEach((f, k) => {
    const at = Math.min(b.length - slice, Math.floor(b.length * f));
    out.set(b.subarray(at, at + slice), k * slice);
  });
  return out;
}
/** transpose fixed records of `stride` bytes into byte lanes; the tail stays in place */
export function transpose(data: Uint8Array, stride: number): Uint8Array {
  const rows = Math.floor(data.length / stride);
  const out = new Uint8Array(data.length);
  for (let lane = 0; lane < stride; lane++) {
    const base = lane * rows;
    for (let r = 0; r < rows; r++) out[base + r] = data[r * stride + lane]!;
  }
  out.set(data.subarray(rows * stride), rows * stride);
  return out;
}
export function untranspose(data: Uint8Array, stride: number): Uint8Array {
  const rows = Math.floor(data.length / stride);
  const out = new Uint8Array(data.length);
  for (let lane = 0; lane < stride; lane++) {
    const base = lane * rows;
    for (let r = 0; r < rows; r++) out[r * stride + lane] = data[base + r]!;
  }
  out.set(data.subarray(rows * stride), rows * stride);
  return out;
}
