import { fail } from "../errors.js";
import { ByteReader, ByteWriter } from "../format/varint.js";
import { BitWriter, SCRATCH_BITS, SCRATCH_SYMS16, scratchBytes } from "./bitio.js";
import { hasIntWasm, type Kernels, kernels, Layout } from "./int-wasm.js";
import {
  finishStream,
  ransDecode,
  ransDecodeCtx,
  ransEncode,
  ransEncodeCtx,
  ransEncodeU8,
  ransEncodeU16,
  ransTable,
} from "./rans.js";

/**
 * Integer sequence coder shared by the numeric chambers (zrw, delta, float).
 *
 * Values are safe integers with |v| < 2^50. A sequence is coded as
 *   transform byte (0 none, 1 delta, 2 delta-of-delta), the first `t` values raw (svarint),
 *   then the residuals with one of the residual kinds:
 *     0 const   — every residual equals one value (svarint)
 *     1 direct  — zigzag residual < alphabet, one rANS symbol per value (exact order-0 model)
 *     2 token   — rANS token (bit length + 2 mantissa bits, values < 16 literal) + raw low bits
 *     3 runs    — (value, run length) pairs, each sequence coded again (no nested runs)
 *     4 token-ctx — as token, but each token's rANS table is chosen by the previous token's
 *                   magnitude band (7 bands): volatility clustering in real series
 *     5 direct-unsigned — as direct, over the residuals themselves (all ≥ 0, no zigzag)
 */
export type Transform = 0 | 1 | 2;
export interface IntCodeOptions {
  /** transforms to try; default all three */
  transforms?: readonly Transform[];
  /** allow run-length coding; default true */
  runs?: boolean;
  /** only one residual kind (token) — fastest encode */
  fast?: boolean;
}

export const MAX_ABS = 2 ** 50;
const TWO32 = 4294967296;

/**
 * The residuals a coding may hold: zigzag values below ZIG_LIMIT (the token table's last bit
 * length, 53), and a constant (kind 0) below CONST_LIMIT in magnitude (what the decoder accepts).
 * Top-level residuals always fit (|v| < 2^50, so transform 2's are below 2^52 in magnitude); the
 * run values of the run-length kind are such residuals, and their transform-1 differences reach
 * ±2^53: that transform is skipped there when they do not fit (it could not be decoded, and its
 * context-token kind threw a TypeError).
 */
const ZIG_LIMIT = 2 ** 53;
const CONST_LIMIT = MAX_ABS * 4;

function bitLength(z: number): number {
  if (z < TWO32) return 32 - Math.clz32(z);
  return 64 - Math.clz32(Math.floor(z / TWO32));
}

// token tables
const TOKENS = 16 + 49 * 4; // k from 5..53
const TOK_BASE = new Float64Array(TOKENS);
const TOK_BITS = new Uint8Array(TOKENS);
for (let t = 0; t < 16; t++) TOK_BASE[t] = t;
for (let k = 5; k <= 53; k++) {
  for (let top = 0; top < 4; top++) {
    const t = 16 + (k - 5) * 4 + top;
    TOK_BASE[t] = 2 ** (k - 1) + top * 2 ** (k - 3);
    TOK_BITS[t] = k - 3;
  }
}

/** TOK_BASE as int32 for the tokens with ≤ 24 raw bits (bases < 2^27) */
const TOK_BASE_I = Int32Array.from(TOK_BASE, (b) => (b < 2 ** 31 ? b : 0));

/** context class of a token (its magnitude band), used by kind 4 */
const NCTX = 7;
const TOK_CLASS = new Uint8Array(TOKENS);
for (let t = 0; t < TOKENS; t++) {
  const bl = t < 16 ? 32 - Math.clz32(t) : ((t - 16) >> 2) + 5;
  TOK_CLASS[t] = t === 0 ? 0 : bl <= 2 ? 1 : bl <= 4 ? 2 : bl <= 6 ? 3 : bl <= 8 ? 4 : bl <= 11 ? 5 : 6;
}

function tokenOf(z: number): number {
  if (z < 16) return z;
  const k = bitLength(z);
  const top = Math.floor(z / 2 ** (k - 3)) & 3;
  return 16 + (k - 5) * 4 + top;
}

const zig = (v: number): number => (v >= 0 ? 2 * v : -2 * v - 1);
const unzig = (z: number): number => (z % 2 === 1 ? -(z + 1) / 2 : z / 2);

function residuals(values: ArrayLike<number>, n: number, t: Transform): Float64Array {
  const out = new Float64Array(Math.max(0, n - t));
  if (t === 0) for (let i = 0; i < n; i++) out[i] = values[i]!;
  else if (t === 1) for (let i = 1; i < n; i++) out[i - 1] = values[i]! - values[i - 1]!;
  else for (let i = 2; i < n; i++) out[i - 2] = values[i]! - 2 * values[i - 1]! + values[i - 2]!;
  return out;
}

/** the residuals' coding (leading kind byte), or null when one of them is beyond ZIG_LIMIT */
function encodeResidualKinds(res: Float64Array, opts: IntCodeOptions, depth: number): Uint8Array | null {
  const n = res.length;
  const w0 = new ByteWriter(16);
  if (n === 0) {
    w0.byte(0);
    w0.svarint(0);
    return w0.finish();
  }
  const zs = new Float64Array(n);
  let maxZ = 0;
  let allSame = true;
  const first = res[0]!;
  for (let i = 0; i < n; i++) {
    const v = res[i]!;
    if (v !== first) allSame = false;
    const z = zig(v);
    zs[i] = z;
    if (z > maxZ) maxZ = z;
  }
  if (!(maxZ < ZIG_LIMIT)) return null;
  if (allSame && Math.abs(first) < CONST_LIMIT) {
    w0.byte(0);
    w0.svarint(first);
    return w0.finish();
  }
  const cands: Uint8Array[] = [];
  // token mode
  {
    const w = new ByteWriter(n);
    w.byte(2);
    const toks = new Uint8Array(n);
    const bits = new BitWriter();
    for (let i = 0; i < n; i++) {
      const z = zs[i]!;
      const t = tokenOf(z);
      toks[i] = t;
      const nb = TOK_BITS[t]!;
      if (nb > 0) bits.write(z - TOK_BASE[t]!, nb);
    }
    let alpha = 0;
    for (let i = 0; i < n; i++) if (toks[i]! >= alpha) alpha = toks[i]! + 1;
    const bitBlock = bits.finish();
    w.block(ransEncode(toks, n, alpha));
    w.block(bitBlock);
    cands.push(w.finish());
    // kind 4: the same tokens, each coded with a table chosen by the previous token's band
    if (!opts.fast && n >= 2048) {
      const w4 = new ByteWriter(n);
      w4.byte(4);
      w4.uvarint(alpha);
      w4.block(ransEncodeCtx(toks, n, alpha, TOK_CLASS, NCTX));
      w4.block(bitBlock);
      cands.push(w4.finish());
    }
  }
  // direct alphabet over the residuals themselves when none is negative (no zigzag: the table has
  // no gaps at the odd symbols zigzag would leave empty)
  let minR = 0;
  let maxR = 0;
  for (let i = 0; i < n; i++) {
    const v = res[i]!;
    if (v < minR) minR = v;
    if (v > maxR) maxR = v;
  }
  if (!opts.fast && minR >= 0 && maxR < 65536 && maxR + 1 <= Math.max(64, n / 2)) {
    const w = new ByteWriter(n);
    w.byte(5);
    w.block(ransEncode(res, n, maxR + 1));
    cands.push(w.finish());
  }
  // direct alphabet
  if (!opts.fast && maxZ < 65536 && maxZ + 1 <= Math.max(64, n / 2)) {
    const w = new ByteWriter(n);
    w.byte(1);
    w.block(ransEncode(zs, n, maxZ + 1));
    cands.push(w.finish());
  }
  // runs
  if (!opts.fast && depth === 0 && opts.runs !== false) {
    let runs = 1;
    for (let i = 1; i < n; i++) if (res[i] !== res[i - 1]) runs++;
    if (runs <= n / 3) {
      const vals = new Float64Array(runs);
      const lens = new Float64Array(runs);
      let r = 0;
      vals[0] = res[0]!;
      lens[0] = 1;
      for (let i = 1; i < n; i++) {
        if (res[i] === res[i - 1]) lens[r] = lens[r]! + 1;
        else {
          r++;
          vals[r] = res[i]!;
          lens[r] = 1;
        }
      }
      for (let i = 0; i < runs; i++) lens[i] = lens[i]! - 1;
      const w = new ByteWriter(runs);
      // the run values are residuals (zigzag < ZIG_LIMIT, so transform 0 always fits them)
      w.byte(3);
      w.uvarint(runs);
      w.bytes(encodeIntsInner(vals, runs, { ...opts, transforms: [0, 1] }, depth + 1));
      w.bytes(encodeIntsInner(lens, runs, { ...opts, transforms: [0] }, depth + 1));
      cands.push(w.finish());
    }
  }
  let best = cands[0]!;
  for (const c of cands) if (c.length < best.length) best = c;
  return best;
}

function encodeIntsInner(values: ArrayLike<number>, n: number, opts: IntCodeOptions, depth: number): Uint8Array {
  const transforms = opts.transforms ?? [0, 1, 2];
  let best: Uint8Array | null = null;
  for (const t of transforms) {
    if (t > n) continue;
    const res = encodeResidualKinds(residuals(values, n, t), opts, depth);
    if (!res) continue; // residuals beyond the token table: another transform codes these values
    const enc = withHead(values, n, t, res);
    if (!best || enc.length < best.length) best = enc;
  }
  if (!best) {
    const res = encodeResidualKinds(residuals(values, n, 0), opts, depth);
    // unreachable: the values coded here (|v| < 2^50, or residuals of such) fit transform 0
    if (!res) throw new RangeError("integers beyond the coder's range");
    best = withHead(values, n, 0, res);
  }
  return best;
}

/** one header byte = transform | residual kind << 2, then the t head values, then the residual body */
function withHead(values: ArrayLike<number>, n: number, t: Transform, res: Uint8Array): Uint8Array {
  const w = new ByteWriter(res.length + 16);
  w.byte(t | (res[0]! << 2));
  for (let i = 0; i < t && i < n; i++) w.svarint(values[i]!);
  w.bytes(res.subarray(1));
  return w.finish();
}

/** Encode n safe integers (|v| < 2^50). */
export function encodeInts(values: ArrayLike<number>, n: number, opts: IntCodeOptions = {}): Uint8Array {
  for (let i = 0; i < n; i++) {
    const v = values[i]!;
    if (!Number.isSafeInteger(v) || Math.abs(v) >= MAX_ABS) throw new RangeError(`value out of range at ${i}`);
  }
  return encodeIntsInner(values, n, opts, 0);
}

/**
 * Level fast: one pass over the values, typed arrays only, no trial encodings. The transform is
 * the one given, or (several given) the one the token coder would code smallest on a sample
 * (estimateTransform). The residuals are coded as kind 0 when constant; as kind 1 (exact order-0
 * rANS over the zigzag values) when `direct` is on and the alphabet is small against the count
 * (≤ DIRECT_MAX symbols, ≥ DIRECT_RATIO values per symbol: the finer model then saves more than
 * its larger table costs); else as kind 2 (token rANS + raw bits). Without the direct kind the
 * bytes are exactly encodeInts(values, n, { transforms: [chosen], fast: true }). No format change:
 * every earlier decoder reads them.
 */
export function encodeIntsFast(
  values: ArrayLike<number>,
  n: number,
  transforms: readonly Transform[] = [1],
  opts: { direct?: boolean; at?: WasmAt } = {},
): Uint8Array {
  // the WebAssembly loops (int-wasm.ts) when they run here: the same bytes
  if (values instanceof Int32Array || values instanceof Float64Array || hasIntWasm()) {
    const typed =
      values instanceof Int32Array || values instanceof Float64Array
        ? values
        : Float64Array.from({ length: n }, (_, i) => values[i]!);
    const out = encodeIntsFastWasm(typed, n, transforms, opts.direct !== false, opts.at);
    if (out) return out;
  }
  // two element kinds from here on (Int32Array, Float64Array): the hot loops stay monomorphic or
  // at most bimorphic, and a third kind cannot deoptimise them
  if (!(values instanceof Int32Array)) values = checkedF64(values, n);
  let t: Transform = transforms.length === 1 ? transforms[0]! : estimateTransform(values, n, transforms);
  if (t > n) t = 0;
  const m = n - t;
  const w = new ByteWriter(16);
  const { zs, toks } = scratch(m);
  if (m === 0 || zigzagResiduals(values, n, t, zs)) {
    // empty or constant residuals: kind 0
    w.byte(t);
    for (let i = 0; i < t; i++) w.svarint(values[i]!);
    w.svarint(m > 0 ? residualAt(values, t, t) : 0);
    return w.finish();
  }
  let body: Uint8Array[] | null = null;
  let kind = 2;
  const maxZ = opts.direct !== false && m >= DIRECT_MIN_VALUES ? maxOf(zs, m) : DIRECT_MAX;
  if (maxZ < DIRECT_MAX) {
    const syms = new Uint16Array(scratchBytes(SCRATCH_SYMS16, 2 * m).buffer, 0, m);
    const counts = histogram16(zs, syms, m, maxZ + 1);
    if (directPays(counts, m)) {
      kind = 1;
      body = [ransEncodeU16(syms, m, maxZ + 1, counts)];
    }
  }
  if (!body) {
    const tb = tokenBlocks(zs, toks, m);
    body = [tb.tok, tb.bits];
  }
  return assemble(w, values, t, kind, body);
}

/** header byte, the t head values, the block lengths, then the blocks: one exact-size array */
function assemble(
  w: ByteWriter,
  values: ArrayLike<number>,
  t: Transform,
  kind: number,
  body: Uint8Array[],
): Uint8Array {
  w.byte(t | (kind << 2));
  for (let i = 0; i < t; i++) w.svarint(values[i]!);
  for (const b of body) w.uvarint(b.length);
  // header and block lengths, then the blocks: one exact-size array
  const lens = body.map((b) => uvarintSize(b.length));
  const headLen = w.pos - lens.reduce((a, b) => a + b, 0);
  const out = new Uint8Array(w.pos + body.reduce((a, b) => a + b.length, 0));
  out.set(w.buf.subarray(0, headLen), 0);
  let o = headLen;
  let lp = headLen;
  for (let k = 0; k < body.length; k++) {
    out.set(w.buf.subarray(lp, lp + lens[k]!), o);
    lp += lens[k]!;
    o += lens[k]!;
    out.set(body[k]!, o);
    o += body[k]!.length;
  }
  return out;
}

/** values already in a WebAssembly instance's memory, at layout.vals (the float chamber's split) */
export interface WasmAt {
  k: Kernels;
  layout: Layout;
}

/**
 * encodeIntsFast with the loops in WebAssembly (int-wasm/fast.as.ts): the same decisions from the
 * same counts (the estimates, directPays and the frequency tables stay here), so the same bytes.
 * Null when WebAssembly does not run here.
 */
function encodeIntsFastWasm(
  values: Int32Array | Float64Array,
  n: number,
  transforms: readonly Transform[],
  direct: boolean,
  at: WasmAt | undefined,
): Uint8Array | null {
  let k: Kernels | null;
  let L: Layout;
  if (at) {
    k = at.k;
    L = at.layout;
  } else {
    k = kernels(new Layout(0, n).bytes + 16);
    if (!k) return null;
    L = new Layout(k.base, n);
  }
  const ex = k.ex;
  const f64in = values instanceof Float64Array ? 1 : 0;
  const width = f64in ? 8 : 4;
  if (!(values.buffer === ex.memory.buffer && values.byteOffset === L.vals))
    k.u8.set(new Uint8Array(values.buffer, values.byteOffset, n * width), L.vals);
  if (f64in) {
    const bad = ex.firstUnsafe(L.vals, n, MAX_ABS);
    if (bad >= 0) throw new RangeError(`value out of range at ${bad}`);
  }
  const mem = ex.memory.buffer;
  let t: Transform;
  if (transforms.length === 1) t = transforms[0]!;
  else {
    // estimateTransform's choice: the sampled token counts and raw bits come from WebAssembly
    const counts = new Uint32Array(mem, L.counts, TOKENS);
    t = transforms[0] ?? 1;
    let bestCost = Number.POSITIVE_INFINITY;
    for (const c of transforms) {
      let cost = ex.sampleTokens(L.vals, f64in, n, c, L.counts);
      let total = 0;
      for (let s = 0; s < TOKENS; s++) total += counts[s]!;
      for (let s = 0; s < TOKENS; s++) {
        const x = counts[s]!;
        if (x > 0) cost += x * Math.log2(total / x);
      }
      if (cost < bestCost) {
        bestCost = cost;
        t = c;
      }
    }
  }
  if (t > n) t = 0;
  const m = n - t;
  const w = new ByteWriter(16);
  if (m === 0 || ex.zigzagResiduals(L.vals, f64in, n, t)) {
    w.byte(t);
    for (let i = 0; i < t; i++) w.svarint(values[i]!);
    w.svarint(m > 0 ? residualAt(values, t, t) : 0);
    return w.finish();
  }
  let body: Uint8Array[] | null = null;
  let kind = 2;
  const maxZ = direct && m >= DIRECT_MIN_VALUES ? ex.maxZ() : DIRECT_MAX;
  if (maxZ < DIRECT_MAX) {
    ex.histogram16(L.vals, f64in, n, t, L.syms, L.counts, maxZ + 1);
    const counts = new Uint32Array(mem, L.counts, maxZ + 1).slice();
    if (directPays(counts, m)) {
      kind = 1;
      body = [ransWasm(k, L, 2, m, maxZ + 1, counts)];
    }
  }
  if (!body) {
    const bitsLen = ex.tokenBlocks(L.vals, f64in, n, t, L.syms, L.counts, L.tmp);
    const counts = new Uint32Array(mem, L.counts, TOKENS).slice();
    let alpha = TOKENS;
    while (alpha > 0 && counts[alpha - 1] === 0) alpha--;
    const tok = ransWasm(k, L, 1, m, alpha, counts);
    body = [tok, k.u8.subarray(L.tmp, L.tmp + bitsLen)];
  }
  return assemble(w, values, t, kind, body);
}

/** ransEncodeU8 (width 1) / ransEncodeU16 (width 2) of the n symbols at L.syms, in WebAssembly */
function ransWasm(k: Kernels, L: Layout, width: 1 | 2, n: number, alphabet: number, counts: Uint32Array): Uint8Array {
  const { w, freqs, starts } = ransTable(counts, n, alphabet);
  const u32 = new Uint32Array(k.ex.memory.buffer);
  u32.set(freqs, L.freqs >> 2);
  u32.set(starts, L.starts >> 2);
  const p = k.ex.ransEncode(L.syms, width, n, L.freqs, L.starts, L.ransEnd);
  return finishStream(w, k.ex.state0(), k.ex.state1(), k.u8.subarray(p, L.ransEnd));
}

const uvarintSize = (v: number): number => {
  let n = 1;
  while (v >= 0x80) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
};

// the loops of encodeIntsFast live in small functions of their own: encodeIntsFast sees two
// element kinds and is deoptimised now and then, and a loop inside it would then run unoptimised

function maxOf(zs: Float64Array, m: number): number {
  let maxZ = 0;
  for (let i = 0; i < m; i++) maxZ = Math.max(zs[i]!, maxZ);
  return maxZ;
}

/** zs (all < alphabet) as 16-bit symbols, and their counts */
function histogram16(zs: Float64Array, syms: Uint16Array, m: number, alphabet: number): Uint32Array {
  const counts = new Uint32Array(alphabet);
  for (let i = 0; i < m; i++) {
    const z = zs[i]!;
    syms[i] = z;
    counts[z]!++;
  }
  return counts;
}

/** the direct kind at level fast: alphabets of at most this many symbols (SMALL_Z)… */
export const DIRECT_MAX = 4096;
/** …over at least this many values */
export const DIRECT_MIN_VALUES = 4096;

/**
 * Whether the exact order-0 model (kind 1) beats tokens + raw bits by at least 0.5 %, from the
 * histogram of the zigzag values: order-0 entropy plus about 12 bits of table per used symbol,
 * against the tokens' entropy plus their raw bits (both estimates within 0.2 % of the coded
 * sizes on random walks of 2·10^4–2.6·10^5 values; the margin covers the 15-bit frequencies'
 * rounding on wide flat alphabets).
 */
function directPays(counts: Uint32Array, m: number): boolean {
  const tokCounts = new Float64Array(TOKENS);
  let direct = 0;
  let raw = 0;
  let used = 0;
  for (let z = 0; z < counts.length; z++) {
    const c = counts[z]!;
    if (c === 0) continue;
    used++;
    direct += c * Math.log2(m / c);
    tokCounts[SMALL_TOK[z]!]! += c;
    raw += c * SMALL_NB[z]!;
  }
  let token = raw;
  for (let k = 0; k < TOKENS; k++) {
    const c = tokCounts[k]!;
    if (c > 0) token += c * Math.log2(m / c);
  }
  return direct + 12 * used < 0.995 * token;
}

/** the values as a Float64Array (the input itself when it is one), each a safe integer below 2^50 */
function checkedF64(values: ArrayLike<number>, n: number): Float64Array {
  const f = values instanceof Float64Array ? values : Float64Array.from({ length: n }, (_, i) => values[i]!);
  for (let i = 0; i < n; i++) {
    const v = f[i]!;
    if (!Number.isSafeInteger(v) || Math.abs(v) >= MAX_ABS) throw new RangeError(`value out of range at ${i}`);
  }
  return f;
}

const residualAt = (v: ArrayLike<number>, i: number, t: Transform): number =>
  t === 0 ? v[i]! : t === 1 ? v[i]! - v[i - 1]! : v[i]! - 2 * v[i - 1]! + v[i - 2]!;

/**
 * The transform whose residuals the token coder would code smallest, estimated over up to 16 runs
 * of 256 values spread over the input: raw bits plus the order-0 entropy of the tokens (the sum of
 * bit lengths alone favours differences of independent values, whose spread is wider). A few
 * thousand operations whatever n.
 */
export function estimateTransform(values: ArrayLike<number>, n: number, transforms: readonly Transform[]): Transform {
  const RUN = 256;
  const runs = Math.min(16, Math.max(1, Math.floor(n / RUN)));
  const stride = Math.floor(n / runs);
  let best: Transform = transforms[0] ?? 1;
  let bestCost = Number.POSITIVE_INFINITY;
  const counts = new Uint32Array(TOKENS);
  for (const t of transforms) {
    counts.fill(0);
    let raw = 0;
    let total = 0;
    for (let r = 0; r < runs; r++) {
      const a = Math.max(2, r * stride);
      const b = Math.min(n, a + RUN);
      for (let i = a; i < b; i++) {
        const x = residualAt(values, i, t);
        const tok = tokenOf(x >= 0 ? 2 * x : -2 * x - 1);
        counts[tok]!++;
        raw += TOK_BITS[tok]!;
        total++;
      }
    }
    let cost = raw;
    for (let k = 0; k < TOKENS; k++) {
      const c = counts[k]!;
      if (c > 0) cost += c * Math.log2(total / c);
    }
    if (cost < bestCost) {
      bestCost = cost;
      best = t;
    }
  }
  return best;
}

/**
 * Scratch arrays of the fast path, reused from call to call (a fresh 2 MB typed array costs about
 * as much as the loop that fills it); at most SCRATCH_KEEP values are kept between calls.
 */
const SCRATCH_KEEP = 1 << 19;
let scratchZ = new Float64Array(0);
let scratchT = new Uint8Array(0);
function scratch(m: number): { zs: Float64Array; toks: Uint8Array } {
  if (scratchZ.length >= m) return { zs: scratchZ, toks: scratchT };
  const zs = new Float64Array(m);
  const toks = new Uint8Array(m);
  if (m <= SCRATCH_KEEP) {
    scratchZ = zs;
    scratchT = toks;
  }
  return { zs, toks };
}

/** zigzag of a residual: int32 arithmetic when |r| < 2^30 (no data-dependent branch), else doubles */
const zigzag = (r: number): number =>
  r >= -1073741824 && r < 1073741824 ? ((r << 1) ^ (r >> 31)) >>> 0 : r >= 0 ? 2 * r : -2 * r - 1;

/**
 * Zigzag residuals of transform t (m = n - t of them) into zs; true when the residuals are all
 * equal. One loop per input kind keeps each loop's element loads monomorphic.
 */
function zigzagResiduals(values: ArrayLike<number>, n: number, t: Transform, zs: Float64Array): boolean {
  const m = n - t;
  const first = residualAt(values, t, t);
  let same = true;
  if (values instanceof Int32Array) {
    // int32 first and second differences are exact in doubles (|r| < 2^34)
    if (t === 0) {
      for (let i = 0; i < m; i++) {
        const r = values[i]!;
        same = same && r === first;
        zs[i] = ((r << 1) ^ (r >> 31)) >>> 0;
      }
    } else if (t === 1) {
      let prev = values[0]!;
      for (let i = 0; i < m; i++) {
        const v = values[i + 1]!;
        const r = v - prev;
        prev = v;
        same = same && r === first;
        zs[i] = zigzag(r);
      }
    } else {
      for (let i = 0; i < m; i++) {
        const r = values[i + 2]! - 2 * values[i + 1]! + values[i]!;
        same = same && r === first;
        zs[i] = zigzag(r);
      }
    }
  } else if (values instanceof Float64Array) {
    if (t === 0) {
      for (let i = 0; i < m; i++) {
        const r = values[i]!;
        same = same && r === first;
        zs[i] = zigzag(r);
      }
    } else if (t === 1) {
      let prev = values[0]!;
      for (let i = 0; i < m; i++) {
        const v = values[i + 1]!;
        const r = v - prev;
        prev = v;
        same = same && r === first;
        zs[i] = zigzag(r);
      }
    } else {
      for (let i = 0; i < m; i++) {
        const r = values[i + 2]! - 2 * values[i + 1]! + values[i]!;
        same = same && r === first;
        zs[i] = zigzag(r);
      }
    }
  } else {
    for (let i = 0; i < m; i++) {
      const r = residualAt(values, i + t, t);
      same = same && r === first;
      zs[i] = zigzag(r);
    }
  }
  return same;
}

/** 2^-k for the wide tokens (exact: a power of two) */
const INV_POW2 = Float64Array.from({ length: 64 }, (_, k) => 2 ** -k);

/** token and raw-bit count of every z < SMALL_Z (one table load instead of the bit-length arithmetic) */
const SMALL_Z = 1 << 12;
const SMALL_TOK = new Uint8Array(SMALL_Z);
const SMALL_NB = new Uint8Array(SMALL_Z);
for (let z = 0; z < SMALL_Z; z++) {
  SMALL_TOK[z] = tokenOf(z);
  SMALL_NB[z] = TOK_BITS[SMALL_TOK[z]!]!;
}

function tokenBlocks(zs: Float64Array, toks: Uint8Array, m: number): { tok: Uint8Array; bits: Uint8Array } {
  const counts = new Uint32Array(TOKENS);
  // raw bits: at most 50 per value, usually far fewer; grown when needed
  let cap = Math.max(64, m * 2);
  let out = scratchBytes(SCRATCH_BITS, cap); // copied out by the caller before the next call
  cap = out.length;
  let p = 0;
  let acc = 0;
  let cnt = 0;
  for (let i = 0; i < m; i++) {
    const z = zs[i]!;
    let tok: number;
    if (p + 8 > cap) {
      cap *= 2;
      const bigger = new Uint8Array(cap);
      bigger.set(out.subarray(0, p));
      out = bigger;
    }
    if (z < 2147483648) {
      const zi = z | 0;
      let nb: number;
      if (zi < SMALL_Z) {
        tok = SMALL_TOK[zi]!;
        nb = SMALL_NB[zi]!;
      } else {
        const k = 32 - Math.clz32(zi);
        nb = k - 3;
        tok = 16 + (k - 5) * 4 + ((zi >>> nb) & 3);
      }
      if (nb > 24) {
        acc |= (zi & 0xffffff) << cnt;
        cnt += 24;
        while (cnt >= 8) {
          out[p++] = acc & 0xff;
          acc >>>= 8;
          cnt -= 8;
        }
        acc |= ((zi >>> 24) & ((1 << (nb - 24)) - 1)) << cnt;
        cnt += nb - 24;
      } else {
        // ≤ 24 new bits on ≤ 7 pending ones: store 4 bytes, keep the whole ones (branch-free)
        acc |= (zi & ((1 << nb) - 1)) << cnt;
        cnt += nb;
      }
      out[p] = acc;
      out[p + 1] = acc >>> 8;
      out[p + 2] = acc >>> 16;
      out[p + 3] = acc >>> 24;
      const whole = cnt >> 3;
      p += whole;
      acc >>>= whole << 3;
      cnt &= 7;
    } else {
      // 2^31 ≤ z < 2^53: 32-bit halves; the nb = k - 3 raw bits go out as 24 + ≤ 24 + ≤ 2 bits,
      // the chunks BitWriter.write cuts them into
      const hi = Math.floor(z * INV_POW2[32]!);
      const lo = (z - hi * 4294967296) >>> 0;
      const k = hi === 0 ? 32 : 64 - Math.clz32(hi);
      const nb = k - 3;
      const top = nb >= 32 ? (hi >>> (nb - 32)) & 3 : ((lo >>> nb) | (hi << (32 - nb))) & 3;
      tok = 16 + (k - 5) * 4 + top;
      acc |= (lo & 0xffffff) << cnt;
      cnt += 24;
      out[p] = acc;
      out[p + 1] = acc >>> 8;
      out[p + 2] = acc >>> 16;
      out[p + 3] = acc >>> 24;
      let whole = cnt >> 3;
      p += whole;
      acc = acc >>> (whole << 3);
      cnt &= 7;
      const rem = nb - 24;
      const b1 = Math.min(rem, 24);
      acc |= (((lo >>> 24) | (hi << 8)) & ((1 << b1) - 1)) << cnt;
      cnt += b1;
      out[p] = acc;
      out[p + 1] = acc >>> 8;
      out[p + 2] = acc >>> 16;
      out[p + 3] = acc >>> 24;
      whole = cnt >> 3;
      p += whole;
      acc = acc >>> (whole << 3);
      cnt &= 7;
      if (rem > 24) {
        acc |= ((hi >>> 16) & ((1 << (rem - 24)) - 1)) << cnt;
        cnt += rem - 24;
        if (cnt >= 8) {
          out[p++] = acc;
          acc >>>= 8;
          cnt -= 8;
        }
      }
    }
    toks[i] = tok;
    counts[tok]!++;
  }
  // the last partial byte (out has ≥ 8 bytes of room past p: checked at the top of the loop)
  out[p] = acc;
  return { tok: tokenStream(toks, m, counts), bits: out.subarray(0, cnt > 0 ? p + 1 : p) };
}

function tokenStream(toks: Uint8Array, m: number, counts: Uint32Array): Uint8Array {
  let alpha = TOKENS;
  while (alpha > 0 && counts[alpha - 1] === 0) alpha--;
  return ransEncodeU8(toks, m, alpha, counts);
}

function decodeResiduals(r: ByteReader, n: number, depth: number, kind: number): Float64Array {
  const out = new Float64Array(n);
  if (kind === 0) {
    const c = r.svarint();
    if (Math.abs(c) >= MAX_ABS * 4) fail("codec_corrupt", "constant out of range");
    out.fill(c);
    return out;
  }
  if (kind === 1) {
    const sub = r.block();
    const zs = ransDecode(new ByteReader(sub), n, 65536);
    for (let i = 0; i < n; i++) out[i] = unzig(zs[i]!);
    return out;
  }
  if (kind === 5) {
    const sub = r.block();
    const vs = ransDecode(new ByteReader(sub), n, 65536);
    for (let i = 0; i < n; i++) out[i] = vs[i]!;
    return out;
  }
  if (kind === 2) {
    const tokBlock = r.block();
    const bitBlock = r.block();
    const toks = ransDecode(new ByteReader(tokBlock), n, TOKENS);
    tokensToValues(toks, bitBlock, out);
    return out;
  }
  if (kind === 4) {
    const alpha = r.uvarintMax(TOKENS, "token alphabet");
    const tokBlock = r.block();
    const bitBlock = r.block();
    const toks = ransDecodeCtx(new ByteReader(tokBlock), n, alpha, TOK_CLASS, NCTX);
    tokensToValues(toks, bitBlock, out);
    return out;
  }
  if (kind === 3 && depth === 0) {
    const runs = r.uvarintMax(n, "run count");
    const vals = decodeIntsInner(r, runs, depth + 1);
    const lens = decodeIntsInner(r, runs, depth + 1);
    let p = 0;
    for (let i = 0; i < runs; i++) {
      const len = lens[i]! + 1;
      if (!(len >= 1) || p + len > n) fail("codec_corrupt", "run lengths exceed the value count");
      out.fill(vals[i]!, p, p + len);
      p += len;
    }
    if (p !== n) fail("codec_corrupt", "run lengths do not cover the value count");
    return out;
  }
  return fail("codec_corrupt", `unknown residual kind ${kind}`);
}

/**
 * tokens + LSB-first raw bits → signed residuals (the hot decode loop). The raw bits are read as
 * a 32-bit little-endian word at the current byte, shifted by the bit offset: no data-dependent
 * branch for values of ≤ 24 raw bits (tokens < 16 have none: their mask is 0 and their base is
 * the token). The bits are copied once into a buffer with 8 zero bytes of padding; reading past
 * the real end is the same error as before (raw bit stream overrun).
 */
function tokensToValues(toks: ArrayLike<number>, bits: Uint8Array, out: Float64Array): void {
  const n = out.length;
  const end = bits.length;
  const padded = new Uint8Array(end + 8);
  padded.set(bits);
  const dv = new DataView(padded.buffer);
  const limit = end * 8;
  let bp = 0; // bit position
  for (let i = 0; i < n; i++) {
    const t = toks[i]!;
    const nb = TOK_BITS[t]!;
    if (nb <= 24) {
      if (bp > limit) break; // past the end (reported below); keeps the reads inside the padding
      const word = dv.getUint32(bp >>> 3, true);
      const zi = TOK_BASE_I[t]! + ((word >>> (bp & 7)) & ((1 << nb) - 1));
      bp += nb;
      out[i] = (zi >>> 1) ^ -(zi & 1);
      continue;
    }
    // wide values: 24 bits at a time, as BitWriter wrote them
    let v = 0;
    let mul = 1;
    let left = nb;
    while (left > 0) {
      if (bp > limit) break;
      const k = Math.min(left, 24);
      const word = dv.getUint32(bp >>> 3, true);
      v += ((word >>> (bp & 7)) & ((1 << k) - 1)) * mul;
      bp += k;
      mul *= 16777216;
      left -= k;
    }
    const z = TOK_BASE[t]! + v;
    out[i] = z % 2 === 1 ? -(z + 1) / 2 : z / 2;
  }
  if (bp > limit) fail("codec_corrupt", "raw bit stream overrun");
}

function decodeIntsInner(r: ByteReader, n: number, depth: number): Float64Array {
  const head = r.byte();
  const t = head & 3;
  if (t > 2) fail("codec_corrupt", `unknown transform ${t}`);
  const out = new Float64Array(n);
  for (let i = 0; i < Math.min(t, n); i++) out[i] = r.svarint();
  const res = decodeResiduals(r, Math.max(0, n - t), depth, head >> 2);
  if (t === 0) out.set(res.subarray(0, n));
  else if (t === 1) {
    for (let i = 1; i < n; i++) out[i] = out[i - 1]! + res[i - 1]!;
  } else {
    for (let i = 2; i < n; i++) out[i] = 2 * out[i - 1]! - out[i - 2]! + res[i - 2]!;
  }
  return out;
}

/**
 * Decode n integers written by encodeInts (or encodeIntsFast). Each is a safe integer below 2^50
 * in magnitude, as the encoders take them: a stream that decodes to anything else is corrupt
 * (crafted heads, constants or residuals whose sums leave the range).
 */
export function decodeInts(r: ByteReader, n: number): Float64Array {
  const out = decodeIntsInner(r, n, 0);
  if (!inRange(out)) fail("codec_corrupt", "decoded integer out of range");
  return out;
}

/** every value below MAX_ABS in magnitude (NaN and ±∞ are not; the decoded values are integers) */
function inRange(vs: Float64Array): boolean {
  for (let i = 0; i < vs.length; i++) if (!(Math.abs(vs[i]!) < MAX_ABS)) return false;
  return true;
}
