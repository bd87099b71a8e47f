import { backendDecode, brotliAsync } from "../../backends.js";
import { decodeInts, encodeInts, encodeIntsFast, type IntCodeOptions } from "../../entropy/intcoder.js";
import { fail } from "../../errors.js";
import { ByteReader, ByteWriter } from "../../format/varint.js";
import { type Chamber, EMPTY, type Encoded } from "../types.js";
import { asInt32, checkLen, int32Bytes, transpose, untranspose } from "../util.js";

const isInt32Array = (b: Uint8Array): boolean => b.length % 4 === 0;

function intChamber<N extends string>(name: N, summary: string, opts: (level: string) => IntCodeOptions): Chamber<N> {
  return {
    name,
    slowDecode: false,
    summary,
    accepts: isInt32Array,
    async encode(input, ctx) {
      if (!isInt32Array(input)) return null;
      const v = asInt32(input);
      return { params: EMPTY, payload: encodeOpts(v, opts(ctx.level)) };
    },
    async decode(_params, payload, rawLen) {
      if (rawLen % 4 !== 0) fail("codec_corrupt", "int32 chamber with a length not a multiple of 4");
      const r = new ByteReader(payload);
      const vals = decodeInts(r, rawLen / 4);
      if (r.remaining !== 0) fail("codec_corrupt", "trailing bytes in int32 payload");
      return int32Bytes(vals, rawLen / 4);
    },
  };
}

/**
 * The token-only options (fast: true) take the one-pass coder: the same bytes for one transform;
 * for several, the transform that is cheapest on a sample (level fast: no trial encodings).
 */
function encodeOpts(v: Int32Array, o: IntCodeOptions): Uint8Array {
  return o.fast ? encodeIntsFast(v, v.length, o.transforms ?? [0, 1, 2]) : encodeInts(v, v.length, o);
}

/** zrw: int32 arrays — best of none/delta/delta-of-delta, zigzag, runs, exact order-0 or token rANS. */
export const zrw = intChamber(
  "zrw",
  "int32 arrays: runs, delta / delta-of-delta, zigzag, bit-length tokens + raw bits, rANS",
  (level) => (level === "fast" ? { transforms: [0, 1, 2], fast: true } : {}),
);
/** zrw-v5: the fixed v5 layout — zigzag of the raw values, token rANS + raw bits, no transform. */
export const zrwV5 = intChamber("zrw-v5", "int32 arrays, no transform: zigzag + token rANS", () => ({
  transforms: [0],
  fast: true,
  runs: false,
}));
/** zrw-v5-delta: first differences, zigzag, token rANS. */
export const zrwV5Delta = intChamber("zrw-v5-delta", "int32 arrays, first differences + token rANS", () => ({
  transforms: [1],
  fast: true,
  runs: false,
}));

const CHUNK_VALUES = 65536;
/** zrw-v5-chunked: independent zrw blocks of 65,536 values (random access, parallel work). */
export const zrwV5Chunked: Chamber<"zrw-v5-chunked"> = {
  name: "zrw-v5-chunked",
  slowDecode: false,
  summary: "int32 arrays in independent 65,536-value zrw blocks",
  accepts: isInt32Array,
  async encode(input, ctx) {
    if (!isInt32Array(input)) return null;
    const v = asInt32(input);
    const w = new ByteWriter(input.length / 4);
    w.uvarint(CHUNK_VALUES);
    for (let i = 0; i < v.length; i += CHUNK_VALUES) {
      const part = v.subarray(i, Math.min(v.length, i + CHUNK_VALUES));
      w.block(encodeOpts(part, ctx.level === "fast" ? { transforms: [1], fast: true } : {}));
    }
    return { params: EMPTY, payload: w.finish() };
  },
  async decode(_p, payload, rawLen) {
    if (rawLen % 4 !== 0) fail("codec_corrupt", "int32 chamber with a length not a multiple of 4");
    const n = rawLen / 4;
    const r = new ByteReader(payload);
    const chunk = r.uvarint();
    if (chunk < 1 || chunk > 1 << 24) fail("codec_bad_params", "bad chunk size");
    const out = new Int32Array(n);
    for (let i = 0; i < n; i += chunk) {
      const m = Math.min(chunk, n - i);
      const sub = new ByteReader(r.block());
      const vals = decodeInts(sub, m);
      if (sub.remaining !== 0) fail("codec_corrupt", "trailing bytes in chunk");
      out.set(asInt32(int32Bytes(vals, m)), i);
    }
    if (r.remaining !== 0) fail("codec_corrupt", "trailing bytes after chunks");
    return new Uint8Array(out.buffer);
  },
};

function strideChamber<S extends 8 | 16 | 32>(stride: S): Chamber<`zrw-v5-stride${S}`> {
  return {
    name: `zrw-v5-stride${stride}`,
    slowDecode: false,
    summary: `byte-lane transposition of ${stride}-byte records, then brotli`,
    accepts: (b) => b.length >= stride,
    async encode(input, ctx) {
      const q = ctx.level === "fast" ? 5 : 11;
      return { params: EMPTY, payload: await brotliAsync(transpose(input, stride), q) };
    },
    async decode(_p, payload, rawLen) {
      return untranspose(await backendDecode(0, payload, rawLen), stride);
    },
  };
}
export const zrwV5Stride8 = strideChamber(8);
export const zrwV5Stride16 = strideChamber(16);
export const zrwV5Stride32 = strideChamber(32);

/** dark-attractor: int32 arrays dominated by one value; exceptions as position gaps + values. */
export const zrwV5DarkAttractor: Chamber<"zrw-v5-dark-attractor"> = {
  name: "zrw-v5-dark-attractor",
  slowDecode: false,
  summary: "int32 arrays with one dominant value: exception positions (gaps) and values",
  accepts: isInt32Array,
  async encode(input) {
    if (!isInt32Array(input)) return null;
    const v = asInt32(input);
    const counts = new Map<number, number>();
    for (let i = 0; i < v.length; i += Math.max(1, v.length >> 12)) counts.set(v[i]!, (counts.get(v[i]!) ?? 0) + 1);
    let dom = 0;
    let best = -1;
    for (const [k, c] of counts) if (c > best) [dom, best] = [k, c];
    const gaps: number[] = [];
    const vals: number[] = [];
    let last = -1;
    for (let i = 0; i < v.length; i++) {
      if (v[i] !== dom) {
        gaps.push(i - last - 1);
        vals.push(v[i]!);
        last = i;
      }
    }
    const w = new ByteWriter(16 + gaps.length);
    w.svarint(dom);
    w.uvarint(gaps.length);
    w.bytes(encodeInts(gaps, gaps.length, { transforms: [0] }));
    w.bytes(encodeInts(vals, vals.length, { transforms: [0, 1] }));
    return { params: EMPTY, payload: w.finish() } satisfies Encoded;
  },
  async decode(_p, payload, rawLen) {
    if (rawLen % 4 !== 0) fail("codec_corrupt", "int32 chamber with a length not a multiple of 4");
    const n = rawLen / 4;
    const r = new ByteReader(payload);
    const dom = r.svarint();
    if (dom > 2147483647 || dom < -2147483648) fail("codec_corrupt", "dominant value outside int32");
    const k = r.uvarintMax(n, "exception count");
    const gaps = decodeInts(r, k);
    const vals = decodeInts(r, k);
    if (r.remaining !== 0) fail("codec_corrupt", "trailing bytes in payload");
    const out = new Int32Array(n).fill(dom);
    let pos = -1;
    for (let i = 0; i < k; i++) {
      pos += gaps[i]! + 1;
      if (!(pos >= 0 && pos < n)) fail("codec_corrupt", "exception position out of range");
      const x = vals[i]!;
      if (x > 2147483647 || x < -2147483648) fail("codec_corrupt", "value outside int32");
      out[pos] = x;
    }
    return new Uint8Array(out.buffer);
  },
};

/** dark-detractor: sparse bytes — positions of the non-zero bytes (gaps) and their values. */
export const zrwV5DarkDetractor: Chamber<"zrw-v5-dark-detractor"> = {
  name: "zrw-v5-dark-detractor",
  slowDecode: false,
  summary: "sparse data: gaps between non-zero bytes and the non-zero byte values",
  accepts: () => true,
  async encode(input) {
    const gaps: number[] = [];
    const vals: number[] = [];
    let last = -1;
    for (let i = 0; i < input.length; i++) {
      if (input[i] !== 0) {
        gaps.push(i - last - 1);
        vals.push(input[i]!);
        last = i;
      }
    }
    const w = new ByteWriter(16 + gaps.length);
    w.uvarint(gaps.length);
    w.bytes(encodeInts(gaps, gaps.length, { transforms: [0] }));
    w.bytes(encodeInts(vals, vals.length, { transforms: [0] }));
    return { params: EMPTY, payload: w.finish() };
  },
  async decode(_p, payload, rawLen) {
    const r = new ByteReader(payload);
    const k = r.uvarintMax(rawLen, "non-zero count");
    const gaps = decodeInts(r, k);
    const vals = decodeInts(r, k);
    if (r.remaining !== 0) fail("codec_corrupt", "trailing bytes in payload");
    const out = new Uint8Array(rawLen);
    let pos = -1;
    for (let i = 0; i < k; i++) {
      pos += gaps[i]! + 1;
      const x = vals[i]!;
      if (!(pos >= 0 && pos < rawLen) || !(x >= 1 && x <= 255)) fail("codec_corrupt", "sparse entry out of range");
      out[pos] = x;
    }
    return checkLen(out, rawLen);
  },
};
