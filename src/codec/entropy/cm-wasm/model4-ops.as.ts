// Context-mixing models 4-6 (model4.as.ts): lookup tables and the inlined operations of the bit loop
// (model3-ops.as.ts plus the found-context mask, the second mixing layer and the slower counters).
// Integer arithmetic only (no float64 in the loop), so the coded bits depend on nothing but the
// input; the mixers use WebAssembly SIMD (i32x4).

export const N_HASHED: i32 = 7;
/** mixer inputs: o0, o1, 7 hashed contexts, match (2), bias — three i32x4 vectors */
export const N_IN: i32 = 12;
/** mixer learning rate (w += s * err * LR / 2^16, err in 1/4096): profiles 0 and 2; 2 × LR in profile 1, 64 in profile 3 (model 3) */
export const LR: i32 = 48;
/** weights are 1.0 = 65536 and stay within ±8.0, so a product with an input never overflows */
const WMAX: i32 = (1 << 19) - 1;

export let STRETCH: usize = 0; // i16[4096]
export let SQUASH: usize = 0; // i16[4096]
export let APM_ROW: usize = 0; // u16[24]
/** u16[1024]: 65536 / (n + 1.4), the adaptation rate of a counter seen n times */
export let DTI: usize = 0;
/** u16[16]: the rate of a 16-bit hashed counter by its 4-bit count (slower than 1/(n + 1.4) past 8) */
export let DTI16: usize = 0;
export let DTI16S: usize = 0;
const RATE16: usize = memory.data<u8>([0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 15, 18, 22, 27, 32]);
/** the hashed tables: 64-byte aligned, 2^bits u16 slots per context */
export let tab: usize = 0;
// the model's other tables (allocModel) and the current nibble's buckets
export let o0: usize = 0;
export let o1: usize = 0;
export let base: usize = 0;
export let hctx: usize = 0;
let hcur: usize = 0;
let gTouch: u32 = 0;
/** bit k: the bucket of hashed context k was found (not emptied) for the current nibble */
export let gHits: u32 = 0;
export let w: usize = 0;
export let w2: usize = 0;
export let w3: usize = 0;
export let w4: usize = 0;
export let wf: usize = 0;
export let mm: usize = 0;
export let mm2: usize = 0;
export let mtab: usize = 0;
export let t1: usize = 0;
export let t2: usize = 0;
export let t3: usize = 0;
export let gApmMask: i32 = 0;

export function setTablesOps(stretchT: usize, squashT: usize, apmRow: usize): void {
  STRETCH = stretchT;
  SQUASH = squashT;
  APM_ROW = apmRow;
  DTI = heap.alloc(2048);
  for (let i = 0; i < 1024; i++) store<u16>(DTI + ((<usize>i) << 1), <u16>(65536.0 / (<f64>i + 1.4)));
  DTI16S = heap.alloc(32);
  for (let i = 0; i < 16; i++) store<u16>(DTI16S + ((<usize>i) << 1), <u16>(65536.0 / (<f64>load<u8>(RATE16 + i) + 1.4)));
  DTI16 = DTI;
}

/**
 * All tables for 2^bits slots per context: the hashed ones (slot 0 of each 16-slot bucket is its
 * check word, 0 = empty), order 0 and 1, mixers, match model, APMs.
 */
export function allocModel(bits: i32, slow: bool, bigApm2: bool): void {
  DTI16 = slow ? DTI16S : DTI;
  const n = N_HASHED << bits;
  tab = (heap.alloc(((<usize>n) << 1) + 64) + 63) & ~63;
  for (let i = 0; i < n; i++) store<u16>(tab + ((<usize>i) << 1), (i & 15) === 0 ? 0 : 0x8000);
  o0 = heap.alloc(256 * 4);
  fill32(o0, 256, 0x80000000);
  o1 = heap.alloc(65536 * 4);
  fill32(o1, 65536, 0x80000000);
  base = heap.alloc(N_HASHED * 4);
  hctx = heap.alloc(N_HASHED * 4);
  hcur = heap.alloc(N_HASHED * 4);
  w = weights(256 * 4);
  w2 = weights(256);
  w3 = weights(256);
  w4 = weights(1024);
  wf = heap.alloc(256 * 16);
  for (let i = 0; i < 256 * 4; i++) store<i32>(wf + ((<usize>i) << 2), 16384);
  mm = heap.alloc(128 * 4);
  fill32(mm, 128, 0x80000000);
  mm2 = heap.alloc((1 << 18) * 4);
  fill32(mm2, 1 << 18, 0x80000000);
  const mbits = max(12, bits - 1);
  mtab = heap.alloc((<usize>1 << mbits) * 4);
  fill32(mtab, 1 << mbits, 0xffffffff);
  gApmMask = (1 << min(16, bits)) - 1;
  t1 = apmTable(gApmMask + 1);
  t2 = apmTable(bigApm2 ? 65536 : 4096);
  t3 = apmTable(256 * 65);
}

/** the seven buckets of the next nibble: touch all (their misses overlap), then resolve each */
export function nibbleBuckets(c0: u32, bits: i32): void {
  const shift = 32 - bits;
  let touch: u32 = 0;
  for (let k = 0; k < N_HASHED; k++) {
    const hc = load<u32>(hctx + (<usize>k << 2));
    const h = c0 === 1 ? hc : h2(hc, c0);
    store<u32>(hcur + (<usize>k << 2), h);
    const ix = (k << bits) + <i32>((h >>> shift) & ~15);
    store<i32>(base + (<usize>k << 2), ix);
    touch += <u32>load<u16>(tab + ((<usize>ix) << 1));
  }
  gTouch = touch;
  gHits = 0;
  for (let k = 0; k < N_HASHED; k++)
    store<i32>(base + (<usize>k << 2), bucket(load<i32>(base + (<usize>k << 2)), load<u32>(hcur + (<usize>k << 2)), k));
}

// @ts-ignore: decorator
@inline export function stretch(p: i32): i32 {
  return <i32>load<i16>(STRETCH + ((<usize>p) << 1));
}
// @ts-ignore: decorator
@inline export function squash(d: i32): i32 {
  return d > 2047 ? 4095 : d < -2047 ? 1 : <i32>load<i16>(SQUASH + ((<usize>(d + 2048)) << 1));
}
// @ts-ignore: decorator
@inline export function h2(a: u32, b: u32): u32 {
  let h: u32 = (a * 0x9e3779b1) ^ ((b + 0x7f4a7c15) * 0x85ebca77);
  h ^= h >>> 15;
  h = h * 0xc2b2ae3d;
  return h ^ (h >>> 13);
}
/** a 32-bit counter (22-bit probability, 10-bit count) of a direct table, toward bit y */
// @ts-ignore: decorator
@inline export function upd(t: usize, i: i32, y: i32, limit: u32): void {
  const a = t + ((<usize>i) << 2);
  const v = load<u32>(a);
  const n = v & 1023;
  const p = <i32>(v >>> 10);
  const d = <i32>load<u16>(DTI + ((<usize>n) << 1));
  const np = y ? p + ((((4194303 - p) >> 7) * d) >> 9) : p - (((p >> 7) * d) >> 9);
  store<u32>(a, ((<u32>np) << 10) | (n < limit ? n + 1 : n));
}
/** a 16-bit counter (12-bit probability, 4-bit count) of the hashed tables, toward bit y */
// @ts-ignore: decorator
@inline export function upd16(i: i32, y: i32, limit: u32): void {
  const a = tab + ((<usize>i) << 1);
  const v = <u32>load<u16>(a);
  const n = v & 15;
  const p = <i32>(v >>> 4);
  const d = <i32>load<u16>(DTI16 + ((<usize>n) << 1));
  const np = y ? p + (((4095 - p) * d + 32768) >> 16) : p - ((p * d + 32768) >> 16);
  store<u16>(a, <u16>(((<u32>np) << 4) | (n < limit ? n + 1 : n)));
}
// @ts-ignore: decorator
@inline export function p16(i: i32): i32 {
  return stretch(<i32>(load<u16>(tab + ((<usize>i) << 1)) >>> 4));
}
// @ts-ignore: decorator
@inline export function p32(t: usize, i: i32): i32 {
  return stretch(<i32>(load<u32>(t + ((<usize>i) << 2)) >>> 20));
}
/** the mixer's output in the stretch domain: Σ w·s / 2^16 over 12 lanes */
// @ts-ignore: decorator
@inline export function dot(wp: usize, s0: v128, s1: v128, s2: v128): i32 {
  let a = i32x4.shr_s(i32x4.mul(s0, v128.load(wp, 0)), 4);
  a = i32x4.add(a, i32x4.shr_s(i32x4.mul(s1, v128.load(wp, 16)), 4));
  a = i32x4.add(a, i32x4.shr_s(i32x4.mul(s2, v128.load(wp, 32)), 4));
  const t =
    i32x4.extract_lane(a, 0) + i32x4.extract_lane(a, 1) + i32x4.extract_lane(a, 2) + i32x4.extract_lane(a, 3);
  return (t + 2048) >> 12;
}
// @ts-ignore: decorator
@inline function train4(wp: usize, off: usize, s: v128, ev: v128): void {
  const d = i32x4.shr_s(i32x4.add(i32x4.mul(s, ev), i32x4.splat(32768)), 16);
  const v = i32x4.add(v128.load(wp + off), d);
  v128.store(wp + off, i32x4.max_s(i32x4.splat(-WMAX), i32x4.min_s(i32x4.splat(WMAX), v)));
}
/** w += s · e / 2^16, rounded, clamped to ±WMAX */
// @ts-ignore: decorator
@inline export function train(wp: usize, s0: v128, s1: v128, s2: v128, e: i32): void {
  const ev = i32x4.splat(e);
  train4(wp, 0, s0, ev);
  train4(wp, 16, s1, ev);
  train4(wp, 32, s2, ev);
}
/** APM: interpolated 16-bit probability of row `row` at stretch point sp (see step) */
// @ts-ignore: decorator
@inline export function apmAt(a: usize, wt: i32): i32 {
  return <i32>((<u32>load<u16>(a) * <u32>(4096 - wt) + <u32>load<u16>(a, 2) * <u32>wt) >>> 16);
}
// @ts-ignore: decorator
@inline export function apmUpd(a: usize, g: i32): void {
  store<u16>(a, <u16>(<i32>load<u16>(a) + ((g - <i32>load<u16>(a)) >> 7)));
  store<u16>(a, <u16>(<i32>load<u16>(a, 2) + ((g - <i32>load<u16>(a, 2)) >> 7)), 2);
}

/**
 * The bucket (16 u16 slots: a check word, then 15 counters for a nibble) of a context whose
 * hash is h, at slot index i or its neighbour i ^ 16 (the same cache line): the one whose check
 * matches, else the one seen less often (count of its first counter), emptied for this context.
 */
export function bucket(i: i32, h: u32, ctx: i32): i32 {
  const chk = (h & 0x7fff) + 1;
  const a = tab + ((<usize>i) << 1);
  if (<u32>load<u16>(a) === chk) {
    gHits |= 1 << ctx;
    return i;
  }
  const j = i ^ 16;
  const b = tab + ((<usize>j) << 1);
  if (<u32>load<u16>(b) === chk) {
    gHits |= 1 << ctx;
    return j;
  }
  const k = (load<u16>(b, 2) & 15) < (load<u16>(a, 2) & 15) ? j : i;
  const c = tab + ((<usize>k) << 1);
  const e = i16x8.splat(<i16>0x8000);
  v128.store(c, e, 0);
  v128.store(c, e, 16);
  store<u16>(c, <u16>chk);
  return k;
}

export function fill32(p: usize, n: i32, v: u32): void {
  for (let i = 0; i < n; i++) store<u32>(p + ((<usize>i) << 2), v);
}
/** n weight rows (64 bytes apart) of 12 lanes at 0.15 */
export function weights(n: i32): usize {
  const p = heap.alloc(<usize>n << 6);
  for (let i = 0; i < n * 16; i++) store<i32>(p + ((<usize>i) << 2), (i & 15) < N_IN ? 9830 : 0);
  return p;
}
export function apmTable(n: i32): usize {
  const t = heap.alloc(<usize>n * 48);
  for (let i = 0; i < n; i++) memory.copy(t + <usize>i * 48, APM_ROW, 48);
  return t;
}

/** the final mixer: Σ w·d / 2^16 over the four first-layer outputs */
// @ts-ignore: decorator
@inline export function dot1(wp: usize, s: v128): i32 {
  const a = i32x4.shr_s(i32x4.mul(s, v128.load(wp, 0)), 4);
  const t =
    i32x4.extract_lane(a, 0) + i32x4.extract_lane(a, 1) + i32x4.extract_lane(a, 2) + i32x4.extract_lane(a, 3);
  return (t + 2048) >> 12;
}
// @ts-ignore: decorator
@inline export function train1(wp: usize, s: v128, e: i32): void {
  train4(wp, 0, s, i32x4.splat(e));
}
