import { backendDecode } from "../../backends.js";
import { SCRATCH_FLOAT_INTS, scratchBytes } from "../../entropy/bitio.js";
import { kernels, Layout } from "../../entropy/int-wasm.js";
import { decodeInts, encodeInts, encodeIntsFast, MAX_ABS, type WasmAt } from "../../entropy/intcoder.js";
import { fail } from "../../errors.js";
import { ByteReader, ByteWriter } from "../../format/varint.js";
import { bestBackend } from "../general/index.js";
import type { Chamber, Level } from "../types.js";
import { transpose, untranspose } from "../util.js";

/**
 * float: float64 / float32 little-endian arrays.
 *  mode 0 (decimal, ALP-like): one exponent e for the array; v = n / 10^e with n a safe integer
 *    whenever that round-trips bit-exactly, the integers go through the integer coder
 *    (delta/zigzag/rANS); the other values are exceptions (position gaps + raw bits).
 *  mode 1 (XOR + byte planes, Gorilla/Chimp-like): each value's bits XOR the previous value's,
 *    then the bytes are split into planes (transposition) and coded by the best general backend.
 *  mode 2 (byte planes without XOR), same backend.
 * params: [width 4|8, mode, e | backend]
 */
const POW10 = Array.from({ length: 23 }, (_, i) => 10 ** i);

function readFloats(input: Uint8Array, width: 4 | 8): Float64Array {
  const n = input.length / width;
  // typed views are little-endian on every platform Node supports (x64, arm64); an unaligned input
  // is copied first
  if (width === 8) {
    if (input.byteOffset % 8 === 0) return new Float64Array(input.buffer, input.byteOffset, n);
    return new Float64Array(input.slice().buffer, 0, n);
  }
  const f32 =
    input.byteOffset % 4 === 0
      ? new Float32Array(input.buffer, input.byteOffset, n)
      : new Float32Array(input.slice().buffer, 0, n);
  return Float64Array.from(f32);
}

/**
 * Whether v = n / 10^e exactly for a safe integer n below MAX_ABS (−0, NaN and ±∞ never are).
 * A boolean, not the integer: a double returned from a call is boxed on the heap, and this runs
 * ~20,000 times per array (decimalSplit computes n itself, with the same test).
 */
function isExact(v: number, e: number, width: 4 | 8): boolean {
  const p = POW10[e]!;
  const n = Math.round(v * p);
  if (!(Math.abs(n) < MAX_ABS) || Object.is(v, -0)) return false;
  const back = width === 4 ? Math.fround(n / p) : n / p;
  return back === v;
}

export function pickExponent(vals: Float64Array, width: 4 | 8): { e: number; hit: number } {
  const n = vals.length;
  const step = Math.max(1, Math.floor(n / 1024));
  const tot = n > 0 ? Math.floor((n - 1) / step) + 1 : 0;
  // the same test in WebAssembly (entropy/int-wasm.ts) over the sampled values, when it runs here
  const k = tot > 0 ? kernels(8 * tot + 16) : null;
  if (k) {
    const sample = new Float64Array(k.ex.memory.buffer, k.base, tot);
    for (let i = 0, j = 0; j < tot; i += step, j++) sample[j] = vals[i]!;
    let best = { e: 0, hit: -1 };
    for (let e = 0; e <= 18; e++) {
      const frac = k.ex.countExact(k.base, tot, POW10[e]!, width, MAX_ABS) / tot;
      if (frac > best.hit + 1e-9) best = { e, hit: frac };
      if (frac === 1) break;
    }
    return best;
  }
  let best = { e: 0, hit: -1 };
  for (let e = 0; e <= 18; e++) {
    let hit = 0;
    let tot = 0;
    for (let i = 0; i < n; i += step) {
      tot++;
      if (isExact(vals[i]!, e, width)) hit++;
    }
    const frac = tot ? hit / tot : 0;
    if (frac > best.hit + 1e-9) best = { e, hit: frac };
    if (frac === 1) break;
  }
  return best;
}

function xorPlanes(input: Uint8Array, width: 4 | 8, xor: boolean): Uint8Array {
  const data = Uint8Array.prototype.slice.call(input);
  if (xor) {
    for (let i = data.length - width; i >= width; i -= width)
      for (let b = 0; b < width; b++) data[i + b] = data[i + b]! ^ data[i - width + b]!;
  }
  return transpose(data, width);
}

function unXorPlanes(planes: Uint8Array, width: 4 | 8, xor: boolean): Uint8Array {
  const data = untranspose(planes, width);
  if (xor) {
    for (let i = width; i + width <= data.length; i += width)
      for (let b = 0; b < width; b++) data[i + b] = data[i + b]! ^ data[i - width + b]!;
  }
  return data;
}

export const float: Chamber<"float"> = {
  name: "float",
  slowDecode: false,
  summary: "float64/float32 arrays: decimal (ALP-like) → integer coder, or XOR + byte planes → backend",
  accepts: (b) => b.length % 4 === 0,
  async encode(input, ctx) {
    const width: 4 | 8 | null = input.length % 8 === 0 ? 8 : input.length % 4 === 0 ? 4 : null;
    if (!width) return null;
    return encodeWidth(input, width, ctx.level);
  },
  async decode(params, payload, rawLen, dctx) {
    if (params.length !== 3) fail("codec_bad_params", "float expects 3 parameter bytes");
    const width = params[0];
    const mode = params[1]!;
    if ((width !== 4 && width !== 8) || rawLen % width !== 0) fail("codec_bad_params", "bad float width");
    if (mode === 1 || mode === 2) {
      const planes = await backendDecode(params[2]!, payload, rawLen);
      return unXorPlanes(planes, width, mode === 1);
    }
    if (mode !== 0) fail("codec_bad_params", "unknown float mode");
    const e = params[2]!;
    if (e > 22) fail("codec_bad_params", "exponent out of range");
    void dctx;
    const n = rawLen / width;
    const r = new ByteReader(payload);
    const ints = decodeInts(r, n);
    const k = r.uvarintMax(n, "exception count");
    const gaps = decodeInts(r, k);
    const raw = r.bytes(k * width);
    if (r.remaining !== 0) fail("codec_corrupt", "trailing bytes in float payload");
    const out = new Uint8Array(rawLen);
    const p = POW10[e]!;
    // typed views are little-endian on every platform Node supports (x64, arm64)
    const view = width === 8 ? new Float64Array(out.buffer) : new Float32Array(out.buffer);
    for (let i = 0; i < n; i++) view[i] = ints[i]! / p;
    let pos = -1;
    for (let j = 0; j < k; j++) {
      pos += gaps[j]! + 1;
      if (!(pos >= 0 && pos < n)) fail("codec_corrupt", "exception position out of range");
      out.set(raw.subarray(j * width, j * width + width), pos * width);
    }
    return out;
  },
};

/**
 * The decimal split of the values with exponent e: ints[i] = n when v = n / 10^e exactly (the
 * previous integer at exceptions, so the series stays smooth), exception gaps and raw bytes.
 * Same results as isExact() per value, in one loop without per-value allocation. `ints` is a
 * scratch array, valid until the next call in this thread.
 */
function decimalSplit(
  input: Uint8Array,
  vals: Float64Array,
  e: number,
  width: 4 | 8,
): { ints: Float64Array; gaps: number[]; raw: Uint8Array; at?: WasmAt } {
  const n = vals.length;
  const p = POW10[e]!;
  const inWasm = decimalSplitWasm(input, vals, p, width);
  if (inWasm) return inWasm;
  // a scratch array: the caller codes the integers (synchronously) before the next split
  const ints = new Float64Array(scratchBytes(SCRATCH_FLOAT_INTS, 8 * n).buffer, 0, n);
  const gaps: number[] = [];
  const raw = new ByteWriter(16);
  let last = -1;
  let prev = 0;
  for (let i = 0; i < n; i++) {
    const v = vals[i]!;
    const x = Math.round(v * p);
    // NaN and ±∞ fail the magnitude test; −0 (the only value equal to 0 with 1/v < 0) is raw
    let ok = Math.abs(x) < MAX_ABS && (v !== 0 || 1 / v > 0);
    if (ok) ok = width === 8 ? x / p === v : Math.fround(x / p) === v;
    if (ok) {
      ints[i] = x;
      prev = x;
    } else {
      ints[i] = prev; // keep the integer series smooth at exceptions
      gaps.push(i - last - 1);
      last = i;
      raw.bytes(input.subarray(i * width, i * width + width));
    }
  }
  return { ints, gaps, raw: raw.finish() };
}

/**
 * decimalSplit's loop in WebAssembly (entropy/int-wasm.ts): the integers are left where
 * encodeIntsFast reads its values (`at`), valid until the next WebAssembly call of this thread.
 * Null when WebAssembly does not run here.
 */
function decimalSplitWasm(
  input: Uint8Array,
  vals: Float64Array,
  p: number,
  width: 4 | 8,
): { ints: Float64Array; gaps: number[]; raw: Uint8Array; at: WasmAt } | null {
  const n = vals.length;
  const k = kernels(new Layout(0, n).bytes + 16);
  if (!k) return null;
  const layout = new Layout(k.base, n);
  // the floats go where the raw bits will be, the exception positions where the symbols will be
  // (both unused until the integers are coded)
  k.u8.set(new Uint8Array(vals.buffer, vals.byteOffset, 8 * n), layout.tmp);
  const count = k.ex.decimalSplit(layout.tmp, n, p, width, MAX_ABS, layout.vals, layout.syms);
  const mem = k.ex.memory.buffer;
  const exc = new Int32Array(mem, layout.syms, count);
  const gaps: number[] = new Array(count);
  const raw = new Uint8Array(count * width);
  let last = -1;
  for (let j = 0; j < count; j++) {
    const i = exc[j]!;
    gaps[j] = i - last - 1;
    last = i;
    raw.set(input.subarray(i * width, i * width + width), j * width);
  }
  return { ints: new Float64Array(mem, layout.vals, n), gaps, raw, at: { k, layout } };
}

/** level fast: the decimal mode when at least this share of the sampled values is decimal, else XOR planes (one encoding, no trial) */
export const FAST_DECIMAL_MIN = 0.9;

async function encodeWidth(input: Uint8Array, width: 4 | 8, level: Level) {
  const vals = readFloats(input, width);
  const n = vals.length;
  const { e, hit } = pickExponent(vals, width);
  const fast = level === "fast";
  const cands: { params: Uint8Array; payload: Uint8Array }[] = [];
  if (fast ? hit >= FAST_DECIMAL_MIN : hit >= 0.5) {
    const { ints, gaps, raw, at } = decimalSplit(input, vals, e, width);
    // fast: one pass, the transform whose residuals are cheapest on a sample (no trial encodings)
    const head = fast ? encodeIntsFast(ints, n, [0, 1, 2], { at }) : encodeInts(ints, n, {});
    const count = new ByteWriter(8);
    count.uvarint(gaps.length);
    const gapBytes = fast ? encodeIntsFast(gaps, gaps.length, [0]) : encodeInts(gaps, gaps.length, { transforms: [0] });
    const parts = [head, count.finish(), gapBytes, raw];
    const payload = new Uint8Array(parts.reduce((a, b) => a + b.length, 0));
    let o = 0;
    for (const part of parts) {
      payload.set(part, o);
      o += part.length;
    }
    cands.push({ params: Uint8Array.of(width, 0, e), payload });
    if (fast) return cands[0]!;
  }
  // byte planes only when the decimal mode does not cover nearly every value
  if (fast || hit < 0.99) {
    // plain byte planes (mode 2) are what the general chamber's stride transposition tries at
    // balanced and max, so only the XOR planes are coded here (mode 2 still decodes)
    const b = await bestBackend(xorPlanes(input, width, true), level);
    cands.push({ params: Uint8Array.of(width, 1, b.backend), payload: b.payload });
  }
  let best = cands[0]!;
  for (const c of cands) if (c.payload.length < best.payload.length) best = c;
  return best;
}
