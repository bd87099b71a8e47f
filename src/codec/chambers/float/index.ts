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
 *  mode 3 (decimal of float32, width 8 only; written at balanced and max): float32 numbers
 *    printed with e decimals and read back as doubles. Below T(e), the smallest power of two whose
 *    float32 spacing 2^(k−23) exceeds 10^−e, the integer is n = v·10^e as in mode 0; at and above
 *    T the float32 grid is coarser than the decimals, so the integer is g0 + (float32 bits of
 *    |v| − float32 bits of T) with g0 = ceil(T·10^e), negated for negative v: one monotone dense
 *    integer per value, coded as in mode 0. The decoder turns g ≥ g0 back into v = roundHalfEven(f·10^e) / 10^e (f the
 *    float32 of those bits; half-even as printf rounds an exact tie). Values that do not come back
 *    bit for bit are exceptions, as in mode 0.
 *  Modes 0 and 3 set bit 7 of the e byte (FOLD) when every integer is ≥ 0 and they are stored
 *    folded, as unzigzag(g) (g even → g/2, odd → −(g+1)/2): the integer coder's zigzag then gives
 *    back g itself instead of 2g, whose always-zero low bit the token coder would pay one raw bit
 *    for per value (transform 0, independent values). The decoder zigzags them back.
 * params: [width 4|8, mode, e (| FOLD) | backend]
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

/** bit 7 of the e byte (modes 0 and 3): the integers are stored folded (see the header) */
export const FOLD = 0x80;

/** the largest finite float32's bits: a mode-3 integer decoding above it is corrupt */
const F32_MAX_BITS = 0x7f7fffff;

/** mode 3's grid for exponent e: T = 2^k, g0 = ceil(T·10^e) and T's float32 bits */
export interface F32Grid {
  p: number;
  T: number;
  g0: number;
  bT: number;
}

/** T(e) = the smallest power of two 2^k whose float32 spacing 2^(k−23) exceeds 10^−e (e ≤ 22) */
export function f32Grid(e: number): F32Grid {
  const p = POW10[e]!;
  let k = -126;
  // 2^(k−23)·10^e is exact (a power-of-two scaling), so is the comparison
  while (!(2 ** (k - 23) * p > 1)) k++;
  const T = 2 ** k;
  return { p, T, g0: Math.ceil(T * p), bT: (k + 127) * 2 ** 23 };
}

const F32 = new Float32Array(1);
const U32 = new Uint32Array(F32.buffer);

/**
 * Mode 3's value of integer g (the decoder's expression, which the encoder checks each value
 * against); NaN when g is out of the grid (above the largest finite float32, or not a number).
 */
export function f32DecimalValue(g: number, grid: F32Grid): number {
  const a = g < 0 ? -g : g;
  if (a < grid.g0) return g / grid.p;
  const bits = a - grid.g0 + grid.bT;
  if (!(bits <= F32_MAX_BITS)) return Number.NaN;
  U32[0] = bits;
  const y = F32[0]! * grid.p;
  let r = Math.round(y);
  // an exact tie rounds to even (printf's rounding of the float32's exact value)
  if (r - y === 0.5 && r % 2 !== 0) r -= 1;
  const v = r / grid.p;
  return g < 0 ? -v : v;
}

/** mode 3's integer for v (checked by the caller with f32DecimalValue); NaN when there is none */
function f32DecimalInt(v: number, grid: F32Grid): number {
  const a = v < 0 ? -v : v;
  if (a < grid.T) return Math.round(v * grid.p);
  F32[0] = a; // NaN and ±∞ give bits above F32_MAX_BITS
  const bits = U32[0]!;
  if (bits > F32_MAX_BITS) return Number.NaN;
  const g = grid.g0 + (bits - grid.bT);
  return v < 0 ? -g : g;
}

/**
 * Mode 3 on a sample (the values pickExponent samples): the share that round-trips, the share
 * that round-trips at or above T (where mode 3 saves over mode 0), and the share of the values at
 * or above T that round-trip (decimals of float64 values there are exceptions in mode 3).
 */
export function sampleF32Decimal(vals: Float64Array, e: number): { hit: number; above: number; aboveHit: number } {
  const n = vals.length;
  const step = Math.max(1, Math.floor(n / 1024));
  const grid = f32Grid(e);
  let tot = 0;
  let hit = 0;
  let above = 0;
  let atT = 0;
  for (let i = 0; i < n; i += step) {
    tot++;
    const v = vals[i]!;
    if (Math.abs(v) >= grid.T) atT++;
    const g = f32DecimalInt(v, grid);
    if (!Number.isNaN(g) && (v !== 0 || 1 / v > 0) && f32DecimalValue(g, grid) === v) {
      hit++;
      if (Math.abs(v) >= grid.T) above++;
    }
  }
  return tot
    ? { hit: hit / tot, above: above / tot, aboveHit: atT ? above / atT : 0 }
    : { hit: 0, above: 0, aboveHit: 0 };
}

/** mode 3's split, as decimalSplit's: integers (the previous one at exceptions), gaps, raw bytes */
function f32DecimalSplit(
  input: Uint8Array,
  vals: Float64Array,
  e: number,
): { ints: Float64Array; gaps: number[]; raw: Uint8Array } {
  const n = vals.length;
  const grid = f32Grid(e);
  const ints = new Float64Array(scratchBytes(SCRATCH_FLOAT_INTS, 8 * n).buffer, 0, n);
  const gaps: number[] = [];
  const raw = new ByteWriter(16);
  let last = -1;
  let prev = 0;
  const { p, T, g0, bT } = grid;
  for (let i = 0; i < n; i++) {
    const v = vals[i]!;
    // f32DecimalInt and f32DecimalValue inlined (the same expressions); the general case below
    const a = v < 0 ? -v : v;
    let g: number;
    let ok: boolean;
    if (a < T) {
      g = Math.round(v * p);
      // −0 (the only value equal to 0 with 1/v < 0) is raw
      ok = (g < 0 ? -g : g) < g0 ? g / p === v && (v !== 0 || 1 / v > 0) : f32DecimalValue(g, grid) === v;
    } else {
      F32[0] = a; // NaN and ±∞ give bits above F32_MAX_BITS
      const bits = U32[0]!;
      ok = false;
      g = 0;
      if (bits <= F32_MAX_BITS) {
        const y = F32[0]! * p;
        let r = Math.round(y);
        if (r - y === 0.5 && r % 2 !== 0) r -= 1;
        ok = r / p === a;
        g = v < 0 ? -(g0 + (bits - bT)) : g0 + (bits - bT);
      }
    }
    if (ok) {
      ints[i] = g;
      prev = g;
    } else {
      ints[i] = prev;
      gaps.push(i - last - 1);
      last = i;
      raw.bytes(input.subarray(i * 8, i * 8 + 8));
    }
  }
  return { ints, gaps, raw: raw.finish() };
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
    if (mode !== 0 && mode !== 3) fail("codec_bad_params", "unknown float mode");
    if (mode === 3 && width !== 8) fail("codec_bad_params", "float mode 3 is for float64 only");
    const fold = (params[2]! & FOLD) !== 0;
    const e = params[2]! & ~FOLD;
    if (e > 22) fail("codec_bad_params", "exponent out of range");
    void dctx;
    const n = rawLen / width;
    const r = new ByteReader(payload);
    const ints = decodeInts(r, n);
    if (fold) unfoldInPlace(ints, n);
    const k = r.uvarintMax(n, "exception count");
    const gaps = decodeInts(r, k);
    const raw = r.bytes(k * width);
    if (r.remaining !== 0) fail("codec_corrupt", "trailing bytes in float payload");
    const out = new Uint8Array(rawLen);
    const p = POW10[e]!;
    // typed views are little-endian on every platform Node supports (x64, arm64)
    const view = width === 8 ? new Float64Array(out.buffer) : new Float32Array(out.buffer);
    if (mode === 3) {
      const { g0, bT } = f32Grid(e);
      // f32DecimalValue inlined (the same expressions)
      for (let i = 0; i < n; i++) {
        const g = ints[i]!;
        const a = g < 0 ? -g : g;
        if (a < g0) {
          view[i] = g / p;
          continue;
        }
        const bits = a - g0 + bT;
        if (!(bits <= F32_MAX_BITS)) fail("codec_corrupt", "float32 grid value out of range");
        U32[0] = bits;
        const y = F32[0]! * p;
        let r = Math.round(y);
        if (r - y === 0.5 && r % 2 !== 0) r -= 1;
        const v = r / p;
        view[i] = g < 0 ? -v : v;
      }
    } else for (let i = 0; i < n; i++) view[i] = ints[i]! / p;
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

/**
 * Mode 0 or 3's candidate: the integers, the exception count, the gaps and the raw exception
 * bytes. When no integer is negative they are also coded folded with transform 0 (FOLD): at
 * balanced and max as a second trial, the smaller kept; at fast (one pass, no trial encodings)
 * folded when foldPays says so on a sample, else the transform whose residuals are cheapest on a
 * sample. `ints` is overwritten when folded (at fast in WebAssembly memory, where `at` says
 * encodeIntsFast reads them). `onlyFolded` (values ≥ 0): the folded trial alone.
 */
function decimalCandidate(
  width: 4 | 8,
  mode: 0 | 3,
  e: number,
  ints: Float64Array,
  n: number,
  gaps: number[],
  raw: Uint8Array,
  fast: boolean,
  at?: WasmAt,
  onlyFolded = false,
): { params: Uint8Array; payload: Uint8Array } {
  const nonNegative = n > 0 && allNonNegative(ints, n);
  let head: Uint8Array;
  let fold = false;
  if (onlyFolded && nonNegative) {
    foldInPlace(ints, n);
    head = encodeInts(ints, n, { transforms: [0] });
    fold = true;
  } else if (fast) {
    fold = nonNegative && foldPays(ints, n);
    if (fold) foldInPlace(ints, n);
    head = encodeIntsFast(ints, n, fold ? [0] : [0, 1, 2], { at });
  } else {
    head = encodeInts(ints, n, {});
    if (nonNegative) {
      foldInPlace(ints, n);
      const folded = encodeInts(ints, n, { transforms: [0] });
      if (folded.length < head.length) {
        head = folded;
        fold = true;
      }
    }
  }
  return { params: Uint8Array.of(width, mode, fold ? e | FOLD : e), payload: decimalPayload(head, gaps, raw, fast) };
}

/**
 * Level fast, values ≥ 0: whether transform 0 over the folded values would cost the token coder
 * less than transforms 1 and 2 over the zigzagged differences (raw bits + order-0 token entropy,
 * as estimateTransform counts them, over 8 runs of 256 values; folded transform 0 always beats
 * zigzagged transform 0). Tokens: bit length and the two bits below the top.
 */
function foldPays(vals: Float64Array, n: number): boolean {
  const RUN = 256;
  const runs = Math.min(8, Math.max(1, Math.floor(n / RUN)));
  const stride = Math.floor(n / runs);
  const c0 = new Uint32Array(TOKEN_SLOTS);
  const c1 = new Uint32Array(TOKEN_SLOTS);
  const c2 = new Uint32Array(TOKEN_SLOTS);
  let raw0 = 0;
  let raw1 = 0;
  let raw2 = 0;
  let total = 0;
  for (let r = 0; r < runs; r++) {
    const a = Math.max(2, r * stride);
    const b = Math.min(n, a + RUN);
    for (let i = a; i < b; i++) {
      const x0 = vals[i]!;
      const x1 = x0 - vals[i - 1]!;
      const x2 = x1 - vals[i - 1]! + vals[i - 2]!;
      raw0 += tokenCount(c0, x0);
      raw1 += tokenCount(c1, 2 * Math.abs(x1) - +(x1 < 0));
      raw2 += tokenCount(c2, 2 * Math.abs(x2) - +(x2 < 0));
      total++;
    }
  }
  const folded = raw0 + entropyBits(c0, total);
  return folded < raw1 + entropyBits(c1, total) && folded < raw2 + entropyBits(c2, total);
}

const TOKEN_SLOTS = 16 + 64 * 4;

/** counts z's token (z ≥ 0) and returns its raw bits */
function tokenCount(counts: Uint32Array, z: number): number {
  if (z < 16) {
    counts[z]!++;
    return 0;
  }
  const k = z < 4294967296 ? 32 - Math.clz32(z) : Math.floor(Math.log2(z)) + 1;
  counts[16 + 4 * k + (Math.floor(z / 2 ** (k - 3)) & 3)]!++;
  return k - 3;
}

function entropyBits(counts: Uint32Array, total: number): number {
  let bits = 0;
  for (let k = 0; k < counts.length; k++) {
    const m = counts[k]!;
    if (m > 0) bits += m * Math.log2(total / m);
  }
  return bits;
}

/** ints[i] = zigzag(ints[i]), without a branch (FOLD's inverse) */
function unfoldInPlace(ints: Float64Array, n: number): void {
  for (let i = 0; i < n; i++) {
    const x = ints[i]!;
    ints[i] = 2 * Math.abs(x) - +(x < 0);
  }
}

function allNonNegative(ints: Float64Array, n: number): boolean {
  for (let i = 0; i < n; i++) if (ints[i]! < 0) return false;
  return true;
}

/** ints[i] = unzig(ints[i]) for values ≥ 0, without a branch (random parities mispredict) */
function foldInPlace(ints: Float64Array, n: number): void {
  for (let i = 0; i < n; i++) {
    const g = ints[i]!;
    const h = Math.floor(g * 0.5);
    const odd = g - 2 * h;
    ints[i] = h - odd * (2 * h + 1);
  }
}

/** the integer stream `head`, then the exception count, gaps and raw bytes */
function decimalPayload(head: Uint8Array, gaps: number[], raw: Uint8Array, fast: boolean): Uint8Array {
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
  return payload;
}

/** balanced and max try mode 3 when at least this share of the sampled values round-trips through it at or above T */
export const F32_ABOVE_MIN = 0.02;
/** and when at least this share of the sampled values at or above T round-trips (else they are float64 decimals) */
export const F32_ABOVE_HIT_MIN = 0.9;

/** level fast: the decimal mode when at least this share of the sampled values is decimal, else XOR planes (one encoding, no trial) */
export const FAST_DECIMAL_MIN = 0.9;

async function encodeWidth(input: Uint8Array, width: 4 | 8, level: Level) {
  const cands = await floatCandidates(input, width, level);
  let best = cands[0]!;
  for (const c of cands) if (c.payload.length < best.payload.length) best = c;
  return best;
}

/** the candidate encodings the level tries (one at fast); the chamber keeps the smallest */
export async function floatCandidates(
  input: Uint8Array,
  width: 4 | 8,
  level: Level,
): Promise<{ params: Uint8Array; payload: Uint8Array }[]> {
  const vals = readFloats(input, width);
  const n = vals.length;
  const { e, hit } = pickExponent(vals, width);
  const fast = level === "fast";
  const cands: { params: Uint8Array; payload: Uint8Array }[] = [];
  // mode 3 (float32 numbers printed with e decimals), at balanced and max: tried when the sampled
  // values at or above T round-trip through it. Not at fast: its split is a JavaScript loop (mode
  // 0's runs in WebAssembly), which on a cold process costs about 10 CPU-ms more per MiB
  const f3 = !fast && width === 8 && hit >= 0.5 ? sampleF32Decimal(vals, e) : null;
  const try3 = f3 !== null && f3.aboveHit >= F32_ABOVE_HIT_MIN && f3.above >= F32_ABOVE_MIN;
  let only3Folded = false;
  if (fast ? hit >= FAST_DECIMAL_MIN : hit >= 0.5) {
    const { ints, gaps, raw, at } = decimalSplit(input, vals, e, width);
    // independent non-negative values (folded transform 0 pays on a sample) that mode 3 covers as
    // widely: mode 3's folded integers are mode 0's without the digits the float32 grid fixes, so
    // only they are coded (one integer coding instead of four)
    only3Folded = try3 && f3.hit >= hit && n > 0 && allNonNegative(ints, n) && foldPays(ints, n);
    if (!only3Folded) cands.push(decimalCandidate(width, 0, e, ints, n, gaps, raw, fast, at));
    if (fast) return cands;
  }
  if (try3) {
    // after mode 0's integers are coded: the split reuses their scratch array
    const { ints, gaps, raw } = f32DecimalSplit(input, vals, e);
    cands.push(decimalCandidate(width, 3, e, ints, n, gaps, raw, false, undefined, only3Folded));
  }
  // byte planes only when the decimal mode does not cover nearly every value
  if (fast || hit < 0.99) {
    // plain byte planes (mode 2) are what the general chamber's stride transposition tries at
    // balanced and max, so only the XOR planes are coded here (mode 2 still decodes)
    const b = await bestBackend(xorPlanes(input, width, true), level);
    cands.push({ params: Uint8Array.of(width, 1, b.backend), payload: b.payload });
  }
  return cands;
}
