// The loops of the one-pass integer coder (level fast: entropy/intcoder.ts encodeIntsFast, rans.ts
// ransEncodeU8/U16) and of the float chamber's decimal split, in WebAssembly (AssemblyScript →
// fast.wasm, `npm run build:wasm`). Same results as the TypeScript loops they replace, bit for
// bit (test/codec/entropy/intcoder-wasm.test.ts compares both on every kind and transform).
//
// Why: a TypeScript loop runs interpreted until V8 has optimised it on a background thread, and
// is deoptimised and optimised again whenever an input takes a branch it had not seen; on a busy
// machine one 1 MiB array then cost 25-90 CPU-ms instead of 7. WebAssembly is compiled once when
// the module is created (no tiers to wait for, no deoptimisation).
//
// No allocation here: the host (int-wasm.ts) lays the arrays out in this module's memory and
// passes their addresses. Values: f64 safe integers (|v| < 2^50) or i32; residuals and their
// zigzag values in 64-bit integers (exact: |residual| < 2^52).

const L: u32 = 1 << 23;
const SCALE_BITS: u32 = 15;
const M: u32 = 1 << SCALE_BITS;

let gMax: u64 = 0;
let gX0: u32 = 0;
let gX1: u32 = 0;

/** largest zigzag value of the last zigzagResiduals call */
export function maxZ(): f64 {
  return <f64>gMax;
}
export function state0(): u32 {
  return gX0;
}
export function state1(): u32 {
  return gX1;
}
export function heapBase(): usize {
  return (__heap_base + 15) & ~15;
}

@inline
function valueAt(vals: usize, f64in: i32, i: i32): i64 {
  if (f64in) return <i64>load<f64>(vals + (<usize>i << 3));
  return <i64>load<i32>(vals + (<usize>i << 2));
}

@inline
function residual(vals: usize, f64in: i32, i: i32, t: i32): i64 {
  if (t == 0) return valueAt(vals, f64in, i);
  if (t == 1) return valueAt(vals, f64in, i) - valueAt(vals, f64in, i - 1);
  return valueAt(vals, f64in, i) - 2 * valueAt(vals, f64in, i - 1) + valueAt(vals, f64in, i - 2);
}

@inline
function zigzag(r: i64): u64 {
  return <u64>((r << 1) ^ (r >> 63));
}

/**
 * Whether the residuals of transform t (n - t of them) are all equal; their largest zigzag value
 * is kept for maxZ(). The passes below compute the residuals again instead of storing them: a
 * subtraction costs less than 8 bytes a value of memory to write, read and fault in.
 */
export function zigzagResiduals(vals: usize, f64in: i32, n: i32, t: i32): i32 {
  const m = n - t;
  let same: i32 = 1;
  let mx: u64 = 0;
  if (m > 0) {
    const first = residual(vals, f64in, t, t);
    if (f64in) {
      for (let i = t; i < n; i++) {
        const r = residual(vals, 1, i, t);
        same &= <i32>(r == first);
        const z = zigzag(r);
        if (z > mx) mx = z;
      }
    } else {
      for (let i = t; i < n; i++) {
        const r = residual(vals, 0, i, t);
        same &= <i32>(r == first);
        const z = zigzag(r);
        if (z > mx) mx = z;
      }
    }
  }
  gMax = mx;
  return same;
}

@inline
function countUp(counts: usize, s: u32): void {
  const c = counts + (<usize>s << 2);
  store<u32>(c, load<u32>(c) + 1);
}

/**
 * The zigzag residuals of transform t (all < alphabet) as u16 symbols syms[0..n-t), and their
 * counts (counts[0..alphabet) zeroed first).
 */
export function histogram16(vals: usize, f64in: i32, n: i32, t: i32, syms: usize, counts: usize, alphabet: i32): void {
  memory.fill(counts, 0, <usize>alphabet << 2);
  if (f64in) {
    for (let i = t; i < n; i++) {
      const z = <u32>zigzag(residual(vals, 1, i, t));
      store<u16>(syms + (<usize>(i - t) << 1), <u16>z);
      countUp(counts, z);
    }
  } else {
    for (let i = t; i < n; i++) {
      const z = <u32>zigzag(residual(vals, 0, i, t));
      store<u16>(syms + (<usize>(i - t) << 1), <u16>z);
      countUp(counts, z);
    }
  }
}

@inline
function tokenOf(z: u64): u32 {
  if (z < 16) return <u32>z;
  const k = <u32>(64 - clz<u64>(z));
  return 16 + (k - 5) * 4 + (<u32>(z >> (k - 3)) & 3);
}

/**
 * Tokens (bit length + 2 mantissa bits, < 16 literal) of the zigzag residuals of transform t into
 * toks[0..n-t), their counts (212 of them, zeroed first), and the raw low bits LSB-first into
 * bits; returns the bit block's length.
 */
export function tokenBlocks(vals: usize, f64in: i32, n: i32, t: i32, toks: usize, counts: usize, bits: usize): i32 {
  memory.fill(counts, 0, 212 << 2);
  let p = bits;
  let acc: u64 = 0;
  let cnt: u64 = 0;
  for (let i = t; i < n; i++) {
    const z = zigzag(f64in ? residual(vals, 1, i, t) : residual(vals, 0, i, t));
    let tok: u32;
    if (z < 16) tok = <u32>z;
    else {
      const k = 64 - clz<u64>(z);
      const nb = k - 3;
      tok = 16 + (<u32>k - 5) * 4 + (<u32>(z >> nb) & 3);
      acc |= (z & ((<u64>1 << nb) - 1)) << cnt;
      cnt += nb;
      // ≤ 7 pending + ≤ 50 new bits: store 8 bytes, keep the partial byte
      store<u64>(p, acc);
      const whole = cnt >> 3;
      p += <usize>whole;
      acc >>= whole << 3;
      cnt &= 7;
    }
    store<u8>(toks + <usize>(i - t), <u8>tok);
    countUp(counts, tok);
  }
  if (cnt > 0) {
    store<u8>(p, <u8>acc);
    p++;
  }
  return <i32>(p - bits);
}

/**
 * Token counts and raw bits of transform t over up to 16 runs of 256 values (intcoder.ts
 * estimateTransform): counts[0..212) are zeroed first; returns the raw bits.
 */
export function sampleTokens(vals: usize, f64in: i32, n: i32, t: i32, counts: usize): f64 {
  memory.fill(counts, 0, 212 << 2);
  let runs = n / 256;
  if (runs < 1) runs = 1;
  if (runs > 16) runs = 16;
  const stride = n / runs;
  let raw: f64 = 0;
  for (let r = 0; r < runs; r++) {
    let a = r * stride;
    if (a < 2) a = 2;
    let b = a + 256;
    if (b > n) b = n;
    for (let i = a; i < b; i++) {
      const tok = tokenOf(zigzag(residual(vals, f64in, i, t)));
      countUp(counts, tok);
      raw += tok < 16 ? 0 : <f64>(((tok - 16) >> 2) + 2);
    }
  }
  return raw;
}

/**
 * The two-state rANS stream of syms[0..n) (width 1 or 2 bytes per symbol), written backwards so
 * that it ends just before outEnd; returns its first byte's address (states in state0/state1).
 */
export function ransEncode(syms: usize, width: i32, n: i32, freqs: usize, starts: usize, outEnd: usize): usize {
  let p = outEnd;
  let x0: u32 = L;
  let x1: u32 = L;
  for (let i = n - 1; i >= 0; i--) {
    const s: usize = width == 1 ? <usize>load<u8>(syms + <usize>i) : <usize>load<u16>(syms + (<usize>i << 1));
    const f = load<u32>(freqs + (s << 2));
    const xmax = ((L >> SCALE_BITS) << 8) * f;
    let x = i & 1 ? x1 : x0;
    while (x >= xmax) {
      p--;
      store<u8>(p, <u8>x);
      x >>= 8;
    }
    const q = x / f;
    x = q * M + (x - q * f) + load<u32>(starts + (s << 2));
    if (i & 1) x1 = x;
    else x0 = x;
  }
  gX0 = x0;
  gX1 = x1;
  return p;
}

/**
 * The float chamber's decimal split with scale p = 10^e: ints[i] = round(v·p) where that divided
 * by p gives v back exactly (as float32 when width is 4), else the previous integer, and the
 * index goes to exc; returns the exception count. Math.round's rounding (halves up).
 */
export function decimalSplit(vals: usize, n: i32, p: f64, width: i32, maxAbs: f64, ints: usize, exc: usize): i32 {
  let k = 0;
  let prev: f64 = 0;
  for (let i = 0; i < n; i++) {
    const v = load<f64>(vals + (<usize>i << 3));
    const y = v * p;
    let x = Math.floor(y);
    if (y - x >= 0.5) x += 1;
    let ok = Math.abs(x) < maxAbs && (v != 0 || 1 / v > 0);
    if (ok) ok = width == 8 ? x / p == v : <f64>(<f32>(x / p)) == v;
    if (ok) {
      store<f64>(ints + (<usize>i << 3), x);
      prev = x;
    } else {
      store<f64>(ints + (<usize>i << 3), prev);
      store<i32>(exc + (<usize>k << 2), i);
      k++;
    }
  }
  return k;
}

/** the first index whose value is not a safe integer below maxAbs in magnitude, or -1 */
export function firstUnsafe(vals: usize, n: i32, maxAbs: f64): i32 {
  for (let i = 0; i < n; i++) {
    const v = load<f64>(vals + (<usize>i << 3));
    if (!(Math.abs(v) < maxAbs) || Math.floor(v) != v) return i;
  }
  return -1;
}

/**
 * How many of vals[0..count) are n / p exactly for an integer n below maxAbs in magnitude (as
 * float32 when width is 4; −0, NaN and ±∞ never are): the float chamber's exponent choice.
 */
export function countExact(vals: usize, count: i32, p: f64, width: i32, maxAbs: f64): i32 {
  let hit = 0;
  for (let i = 0; i < count; i++) {
    const v = load<f64>(vals + (<usize>i << 3));
    const y = v * p;
    let x = Math.floor(y);
    if (y - x >= 0.5) x += 1;
    if (!(Math.abs(x) < maxAbs) || (v == 0 && 1 / v < 0)) continue;
    if (width == 8 ? x / p == v : <f64>(<f32>(x / p)) == v) hit++;
  }
  return hit;
}
