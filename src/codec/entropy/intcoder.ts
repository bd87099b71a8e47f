import { fail } from "../errors.js";
import { ByteReader, ByteWriter } from "../format/varint.js";
import { BitWriter } from "./bitio.js";
import { ransDecode, ransDecodeCtx, ransEncode, ransEncodeCtx } from "./rans.js";

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

function encodeResidualKinds(res: Float64Array, opts: IntCodeOptions, depth: number): Uint8Array {
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
  if (allSame) {
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
    const enc = withHead(values, n, t, encodeResidualKinds(residuals(values, n, t), opts, depth));
    if (!best || enc.length < best.length) best = enc;
  }
  if (!best) {
    best = withHead(values, n, 0, encodeResidualKinds(residuals(values, n, 0), opts, depth));
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

/** tokens + LSB-first raw bits → signed residuals (inlined bit reader: the hot decode loop) */
function tokensToValues(toks: ArrayLike<number>, bits: Uint8Array, out: Float64Array): void {
  const n = out.length;
  let acc = 0;
  let cnt = 0;
  let p = 0;
  const end = bits.length;
  for (let i = 0; i < n; i++) {
    const t = toks[i]!;
    const nb = TOK_BITS[t]!;
    let z: number;
    if (nb === 0) {
      out[i] = (t >>> 1) ^ -(t & 1); // small tokens are the value itself: int zigzag
      continue;
    }
    if (nb <= 24) {
      while (cnt < nb) {
        acc |= (p < end ? bits[p]! : 0) << cnt;
        p++;
        cnt += 8;
      }
      // base < 2^27 here, so z fits an int32 and the zigzag stays in integer arithmetic
      const zi = TOK_BASE_I[t]! + (acc & ((1 << nb) - 1));
      acc >>>= nb;
      cnt -= nb;
      out[i] = (zi >>> 1) ^ -(zi & 1);
      continue;
    } else {
      // wide values: 24 bits at a time
      let v = 0;
      let mul = 1;
      let left = nb;
      while (left > 0) {
        const k = Math.min(24, left);
        while (cnt < k) {
          acc |= (p < end ? bits[p]! : 0) << cnt;
          p++;
          cnt += 8;
        }
        v += (acc & ((1 << k) - 1)) * mul;
        acc >>>= k;
        cnt -= k;
        mul *= 16777216;
        left -= k;
      }
      z = TOK_BASE[t]! + v;
    }
    out[i] = z % 2 === 1 ? -(z + 1) / 2 : z / 2;
  }
  if (p > end) fail("codec_corrupt", "raw bit stream overrun");
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

/** Decode n integers written by encodeInts. */
export function decodeInts(r: ByteReader, n: number): Float64Array {
  return decodeIntsInner(r, n, 0);
}
