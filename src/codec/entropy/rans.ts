import { fail } from "../errors.js";
import { type ByteReader, ByteWriter } from "../format/varint.js";
import { SCRATCH_RANS, scratchBytes } from "./bitio.js";

/**
 * Static order-0 rANS (two interleaved 32-bit states, byte renormalisation,
 * 15-bit frequencies). Symbols are integers in [0, alphabet). The frequency
 * table is written in front of the stream.
 */
export const SCALE_BITS = 15;
const M = 1 << SCALE_BITS;
const MASK = M - 1;
const L = 1 << 23;
/** largest alphabet the coder accepts */
export const MAX_ALPHABET = 1 << 16;

export function normalize(counts: Uint32Array, total: number): Uint32Array {
  const freqs = new Uint32Array(counts.length);
  if (total === 0) return freqs;
  let sum = 0;
  let best = 0;
  for (let s = 0; s < counts.length; s++) {
    const c = counts[s]!;
    if (c === 0) continue;
    let f = Math.floor((c * M) / total);
    if (f < 1) f = 1;
    freqs[s] = f;
    sum += f;
    if (c > counts[best]!) best = s;
  }
  // fix the sum: adjust the largest symbols first
  let diff = M - sum;
  if (diff > 0) freqs[best] = freqs[best]! + diff;
  else {
    while (diff < 0) {
      // take from the symbols with the largest frequencies
      let idx = 0;
      for (let s = 0; s < freqs.length; s++) if (freqs[s]! > freqs[idx]!) idx = s;
      const take = Math.min(-diff, freqs[idx]! - 1);
      if (take <= 0) break;
      freqs[idx] = freqs[idx]! - take;
      diff += take;
    }
  }
  return freqs;
}

export function writeFreqs(w: ByteWriter, freqs: Uint32Array, alphabet: number): void {
  w.uvarint(alphabet);
  let s = 0;
  while (s < alphabet) {
    const f = freqs[s]!;
    if (f === 0) {
      let run = 1;
      while (s + run < alphabet && freqs[s + run] === 0) run++;
      w.uvarint(0);
      w.uvarint(run - 1);
      s += run;
    } else {
      w.uvarint(f);
      s++;
    }
  }
}

export function readFreqs(r: ByteReader, maxAlphabet: number): { freqs: Uint32Array; alphabet: number } {
  const alphabet = r.uvarintMax(Math.min(maxAlphabet, MAX_ALPHABET), "alphabet");
  const freqs = new Uint32Array(alphabet);
  let s = 0;
  let sum = 0;
  while (s < alphabet) {
    const f = r.uvarintMax(M, "frequency");
    if (f === 0) {
      const run = r.uvarintMax(alphabet - s - 1, "zero run") + 1;
      s += run;
    } else {
      freqs[s++] = f;
      sum += f;
    }
  }
  if (alphabet > 0 && sum !== M) fail("codec_corrupt", "frequency table does not sum to scale");
  return { freqs, alphabet };
}

/** Encode symbols; returns the table + stream as one block. */
export function ransEncode(syms: ArrayLike<number>, n: number, alphabet: number): Uint8Array {
  const w = new ByteWriter(64);
  if (alphabet > MAX_ALPHABET) throw new RangeError("alphabet too large");
  const counts = new Uint32Array(alphabet);
  for (let i = 0; i < n; i++) counts[syms[i]!]!++;
  const freqs = normalize(counts, n);
  writeFreqs(w, freqs, alphabet);
  if (n === 0) return w.finish();
  writeStream(w, syms, n, alphabet, freqs, startsOf(freqs, alphabet), null);
  return w.finish();
}

/**
 * ransEncode for byte symbols already counted (counts[s] = occurrences of s among syms[0..n)):
 * the same bytes as ransEncode(syms, n, alphabet), with the two states in locals and per-symbol
 * tables precomputed (the hot loop of the integer coder at level fast).
 */
export function ransEncodeU8(syms: Uint8Array, n: number, alphabet: number, counts: Uint32Array): Uint8Array {
  const w = new ByteWriter(2 * alphabet + 16);
  const freqs = normalize(counts.subarray(0, alphabet), n);
  writeFreqs(w, freqs, alphabet);
  if (n === 0) return w.finish();
  const starts = startsOf(freqs, alphabet);
  const xmaxOf = new Float64Array(alphabet);
  for (let s = 0; s < alphabet; s++) xmaxOf[s] = ((L >>> SCALE_BITS) << 8) * freqs[s]!;
  // every symbol emits at most 2 bytes (x < 2^31, xmax ≥ 2^16)
  const cap = 2 * n + 16;
  const out = scratchBytes(SCRATCH_RANS, cap); // written from the end; finishStream copies it out
  let p = cap;
  let x0 = L;
  let x1 = L;
  let i = n - 1;
  if ((i & 1) === 0) {
    // the last symbol belongs to state 0 when n is odd
    const s = syms[i]!;
    const f = freqs[s]!;
    const xmax = xmaxOf[s]!;
    while (x0 >= xmax) {
      out[--p] = x0 & 0xff;
      x0 >>>= 8;
    }
    const q = Math.floor(x0 / f);
    x0 = q * M + (x0 - q * f) + starts[s]!;
    i--;
  }
  for (; i >= 1; i -= 2) {
    let s = syms[i]!;
    let f = freqs[s]!;
    let xmax = xmaxOf[s]!;
    while (x1 >= xmax) {
      out[--p] = x1 & 0xff;
      x1 >>>= 8;
    }
    let q = Math.floor(x1 / f);
    x1 = q * M + (x1 - q * f) + starts[s]!;
    s = syms[i - 1]!;
    f = freqs[s]!;
    xmax = xmaxOf[s]!;
    while (x0 >= xmax) {
      out[--p] = x0 & 0xff;
      x0 >>>= 8;
    }
    q = Math.floor(x0 / f);
    x0 = q * M + (x0 - q * f) + starts[s]!;
  }
  return finishStream(w, x0, x1, out.subarray(p, cap));
}

/** ransEncodeU8 for 16-bit symbols (a separate copy keeps each hot loop's loads monomorphic) */
export function ransEncodeU16(syms: Uint16Array, n: number, alphabet: number, counts: Uint32Array): Uint8Array {
  const w = new ByteWriter(2 * alphabet + 16);
  const freqs = normalize(counts.subarray(0, alphabet), n);
  writeFreqs(w, freqs, alphabet);
  if (n === 0) return w.finish();
  const starts = startsOf(freqs, alphabet);
  const xmaxOf = new Float64Array(alphabet);
  for (let s = 0; s < alphabet; s++) xmaxOf[s] = ((L >>> SCALE_BITS) << 8) * freqs[s]!;
  // every symbol emits at most 2 bytes (x < 2^31, xmax ≥ 2^16)
  const cap = 2 * n + 16;
  const out = scratchBytes(SCRATCH_RANS, cap); // written from the end; finishStream copies it out
  let p = cap;
  let x0 = L;
  let x1 = L;
  let i = n - 1;
  if ((i & 1) === 0) {
    // the last symbol belongs to state 0 when n is odd
    const s = syms[i]!;
    const f = freqs[s]!;
    const xmax = xmaxOf[s]!;
    while (x0 >= xmax) {
      out[--p] = x0 & 0xff;
      x0 >>>= 8;
    }
    const q = Math.floor(x0 / f);
    x0 = q * M + (x0 - q * f) + starts[s]!;
    i--;
  }
  for (; i >= 1; i -= 2) {
    let s = syms[i]!;
    let f = freqs[s]!;
    let xmax = xmaxOf[s]!;
    while (x1 >= xmax) {
      out[--p] = x1 & 0xff;
      x1 >>>= 8;
    }
    let q = Math.floor(x1 / f);
    x1 = q * M + (x1 - q * f) + starts[s]!;
    s = syms[i - 1]!;
    f = freqs[s]!;
    xmax = xmaxOf[s]!;
    while (x0 >= xmax) {
      out[--p] = x0 & 0xff;
      x0 >>>= 8;
    }
    q = Math.floor(x0 / f);
    x0 = q * M + (x0 - q * f) + starts[s]!;
  }
  return finishStream(w, x0, x1, out.subarray(p, cap));
}

/**
 * The head of ransEncodeU8/U16 for symbols already counted: a writer holding the frequency
 * table, the frequencies and their cumulative starts (the WebAssembly loop in int-wasm.ts codes
 * the stream with them, then finishStream).
 */
export function ransTable(
  counts: Uint32Array,
  n: number,
  alphabet: number,
): { w: ByteWriter; freqs: Uint32Array; starts: Uint32Array } {
  const w = new ByteWriter(2 * alphabet + 16);
  const freqs = normalize(counts.subarray(0, alphabet), n);
  writeFreqs(w, freqs, alphabet);
  return { w, freqs, starts: startsOf(freqs, alphabet) };
}

/** table + states + stream length + stream, in one exact-size array (no growth, one copy) */
export function finishStream(w: ByteWriter, x0: number, x1: number, stream: Uint8Array): Uint8Array {
  const head = w.buf.subarray(0, w.pos);
  const len = new ByteWriter(8);
  len.uvarint(stream.length);
  const out = new Uint8Array(head.length + 8 + len.pos + stream.length);
  out.set(head, 0);
  let o = head.length;
  for (const x of [x0, x1]) {
    out[o++] = x & 0xff;
    out[o++] = (x >>> 8) & 0xff;
    out[o++] = (x >>> 16) & 0xff;
    out[o++] = (x >>> 24) & 0xff;
  }
  out.set(len.buf.subarray(0, len.pos), o);
  out.set(stream, o + len.pos);
  return out;
}

/** cumulative starts of a frequency table */
function startsOf(freqs: Uint32Array, alphabet: number): Uint32Array {
  const st = new Uint32Array(alphabet);
  for (let s = 1; s < alphabet; s++) st[s] = st[s - 1]! + freqs[s - 1]!;
  return st;
}

/**
 * The two-state rANS stream (written backwards), then its states and length. Symbol i is coded
 * with table table[i] (0 when table is null); table k occupies [k·alphabet, (k+1)·alphabet) of
 * freqs and starts.
 */
function writeStream(
  w: ByteWriter,
  syms: ArrayLike<number>,
  n: number,
  alphabet: number,
  freqs: Uint32Array,
  starts: Uint32Array,
  table: Uint8Array | null,
): void {
  let cap = Math.max(64, (n >> 1) + 16);
  let out = new Uint8Array(cap);
  let p = cap;
  const xs = [L, L];
  for (let i = n - 1; i >= 0; i--) {
    const fi = (table ? table[i]! * alphabet : 0) + syms[i]!;
    const f = freqs[fi]!;
    let x = xs[i & 1]!;
    const xmax = ((L >>> SCALE_BITS) << 8) * f;
    while (x >= xmax) {
      if (p === 0) {
        const bigger = new Uint8Array(cap * 2);
        bigger.set(out, cap);
        p = cap;
        cap *= 2;
        out = bigger;
      }
      out[--p] = x & 0xff;
      x >>>= 8;
    }
    const q = Math.floor(x / f);
    xs[i & 1] = q * M + (x - q * f) + starts[fi]!;
  }
  w.u32le(xs[0]!);
  w.u32le(xs[1]!);
  w.uvarint(cap - p);
  w.bytes(out.subarray(p));
}

/** Decode exactly n symbols (alphabet ≤ maxAlphabet) from the reader. */
export function ransDecode(r: ByteReader, n: number, maxAlphabet: number): Uint16Array | Uint32Array {
  const { freqs, alphabet } = readFreqs(r, maxAlphabet);
  const out = alphabet <= 65536 ? new Uint16Array(n) : new Uint32Array(n);
  if (n === 0) return out;
  if (alphabet === 0) fail("codec_corrupt", "empty alphabet for non-empty stream");
  const look = new Uint16Array(M);
  const start = new Uint32Array(alphabet);
  let acc = 0;
  for (let s = 0; s < alphabet; s++) {
    start[s] = acc;
    look.fill(s, acc, acc + freqs[s]!);
    acc += freqs[s]!;
  }
  let x0 = r.u32le();
  let x1 = r.u32le();
  if (x0 < L || x1 < L || x0 >= 0x80000000 || x1 >= 0x80000000) fail("codec_corrupt", "bad rANS state");
  const len = r.uvarintMax(r.remaining, "rANS stream length");
  const end = len;
  // the stream with 4 zero bytes of padding: a state takes 0, 1 or 2 bytes per symbol (after a
  // step x ≥ 2^8, so two bytes bring it to ≥ L), read without a data-dependent branch: b = 1 when
  // x < L (x < 2^31, so x − L is negative exactly then)
  const buf = new Uint8Array(len + 4);
  buf.set(r.bytes(len));
  let p = 0;
  let i = 0;
  for (; i + 1 < n; i += 2) {
    let slot = x0 & MASK;
    let s = look[slot]!;
    x0 = freqs[s]! * (x0 >>> SCALE_BITS) + slot - start[s]!;
    let b = (x0 - L) >>> 31;
    x0 = (x0 << (b << 3)) | (buf[p]! & -b);
    p += b;
    b = (x0 - L) >>> 31;
    x0 = (x0 << (b << 3)) | (buf[p]! & -b);
    p += b;
    out[i] = s;
    slot = x1 & MASK;
    s = look[slot]!;
    x1 = freqs[s]! * (x1 >>> SCALE_BITS) + slot - start[s]!;
    b = (x1 - L) >>> 31;
    x1 = (x1 << (b << 3)) | (buf[p]! & -b);
    p += b;
    b = (x1 - L) >>> 31;
    x1 = (x1 << (b << 3)) | (buf[p]! & -b);
    p += b;
    out[i + 1] = s;
    if (p > end) break;
  }
  if (i < n && p <= end) {
    const slot = x0 & MASK;
    const s = look[slot]!;
    x0 = freqs[s]! * (x0 >>> SCALE_BITS) + slot - start[s]!;
    while (x0 < L) x0 = ((x0 << 8) | buf[p++]!) >>> 0;
    out[i] = s;
  }
  if (p !== end || x0 !== L || x1 !== L) fail("codec_corrupt", "rANS stream inconsistent");
  return out;
}

/**
 * Order-1-class rANS: like ransEncode, but symbol i is coded with table cls[sym[i-1]]
 * (table 0 for i = 0). `cls` maps a symbol to its context class (< nctx).
 */
export function ransEncodeCtx(
  syms: ArrayLike<number>,
  n: number,
  alphabet: number,
  cls: Uint8Array,
  nctx: number,
): Uint8Array {
  const w = new ByteWriter(64);
  const counts = Array.from({ length: nctx }, () => new Uint32Array(alphabet));
  const totals = new Uint32Array(nctx);
  let prev = 0;
  for (let i = 0; i < n; i++) {
    const c = i === 0 ? 0 : cls[prev]!;
    const s = syms[i]!;
    counts[c]![s]!++;
    totals[c]!++;
    prev = s;
  }
  const freqs = counts.map((c, k) => normalize(c, totals[k]!));
  w.uvarint(nctx);
  for (let k = 0; k < nctx; k++) writeFreqs(w, totals[k]! ? freqs[k]! : new Uint32Array(0), totals[k]! ? alphabet : 0);
  const flatFreqs = new Uint32Array(nctx * alphabet);
  const flatStarts = new Uint32Array(nctx * alphabet);
  for (let k = 0; k < nctx; k++) {
    flatFreqs.set(freqs[k]!, k * alphabet);
    flatStarts.set(startsOf(freqs[k]!, alphabet), k * alphabet);
  }
  const table = new Uint8Array(n);
  for (let i = 1; i < n; i++) table[i] = cls[syms[i - 1]!]!;
  writeStream(w, syms, n, alphabet, flatFreqs, flatStarts, table);
  return w.finish();
}

export function ransDecodeCtx(
  r: ByteReader,
  n: number,
  maxAlphabet: number,
  cls: Uint8Array,
  maxCtx: number,
): Uint16Array {
  const nctx = r.uvarintMax(maxCtx, "context count");
  // flat tables: context k uses look[k*M …], freqs/start[k*maxAlphabet …]
  const look = new Uint16Array(nctx * M);
  const freqs = new Uint32Array(nctx * maxAlphabet);
  const start = new Uint32Array(nctx * maxAlphabet);
  const used = new Uint8Array(nctx);
  for (let k = 0; k < nctx; k++) {
    const t = readFreqs(r, maxAlphabet);
    used[k] = t.alphabet > 0 ? 1 : 0;
    let acc = 0;
    for (let s = 0; s < t.alphabet; s++) {
      const f = t.freqs[s]!;
      freqs[k * maxAlphabet + s] = f;
      start[k * maxAlphabet + s] = acc;
      look.fill(s, k * M + acc, k * M + acc + f);
      acc += f;
    }
  }
  const out = new Uint16Array(n);
  if (n === 0) return out;
  let x0 = r.u32le();
  let x1 = r.u32le();
  if (x0 < L || x1 < L || x0 >= 0x80000000 || x1 >= 0x80000000) fail("codec_corrupt", "bad rANS state");
  const len = r.uvarintMax(r.remaining, "rANS stream length");
  const buf = r.bytes(len);
  let p = 0;
  let c = 0;
  const end = buf.length;
  const empty = (): never => fail("codec_corrupt", "symbol in an empty context");
  let i = 0;
  for (; i + 1 < n; i += 2) {
    if (used[c] !== 1) empty(); // a context without a table (or beyond nctx) cannot code a symbol
    let slot = x0 & MASK;
    let s = look[c * M + slot]!;
    let fi = c * maxAlphabet + s;
    x0 = freqs[fi]! * (x0 >>> SCALE_BITS) + slot - start[fi]!;
    while (x0 < L) x0 = ((x0 << 8) | buf[p++]!) >>> 0;
    out[i] = s;
    c = cls[s]!;
    if (used[c] !== 1) empty();
    slot = x1 & MASK;
    s = look[c * M + slot]!;
    fi = c * maxAlphabet + s;
    x1 = freqs[fi]! * (x1 >>> SCALE_BITS) + slot - start[fi]!;
    while (x1 < L) x1 = ((x1 << 8) | buf[p++]!) >>> 0;
    out[i + 1] = s;
    c = cls[s]!;
    if (p > end) break;
  }
  if (i < n && p <= end) {
    if (used[c] !== 1) empty();
    const slot = x0 & MASK;
    const s = look[c * M + slot]!;
    const fi = c * maxAlphabet + s;
    x0 = freqs[fi]! * (x0 >>> SCALE_BITS) + slot - start[fi]!;
    while (x0 < L) x0 = ((x0 << 8) | buf[p++]!) >>> 0;
    out[i] = s;
  }
  if (p !== buf.length || x0 !== L || x1 !== L) fail("codec_corrupt", "rANS stream inconsistent");
  return out;
}
