import { describe, expect, it } from "vitest";
import {
  decodeInts,
  encodeInts,
  encodeIntsFast,
  estimateTransform,
  type Transform,
} from "../../src/codec/entropy/intcoder.js";
import { ransDecode, ransEncode, ransEncodeU8 } from "../../src/codec/entropy/rans.js";
import { ByteReader } from "../../src/codec/format/varint.js";
import { compressWithReport, decompress } from "../../src/codec/index.js";
import { f32, f64, i32, rng } from "./helpers.js";

/**
 * The one-pass integer coder of level fast (encodeIntsFast) writes exactly what the reference
 * coder writes for the same transform with the token kind (no format change: every earlier
 * decoder reads it), and the chambers at level fast use it.
 */
const r = rng(2424);
const walk = (n: number, step: number): number[] => {
  let a = 0;
  return Array.from({ length: n }, () => (a += Math.floor(r() * (2 * step + 1)) - step));
};
const BIG = 2 ** 50 - 1;
const SERIES: Record<string, number[]> = {
  empty: [],
  one: [5],
  two: [-3, 9],
  three: [1, 2, 4],
  constant: Array.from({ length: 300 }, () => 7),
  ramp: Array.from({ length: 300 }, (_, i) => 1000 + 3 * i),
  small: Array.from({ length: 2000 }, () => Math.floor(r() * 20) - 10),
  walk: walk(5000, 100),
  wideWalk: walk(3000, 2 ** 28),
  // every bit length up to 50, both signs, and the 2^31 boundary of the fast int path
  wide: Array.from({ length: 4000 }, (_, i) => {
    const k = i % 51;
    const v = Math.floor(r() * 2 ** k);
    return i % 2 ? -v : v;
  }),
  boundary: [2 ** 30 - 1, -(2 ** 30), 2 ** 30, 2 ** 31 - 1, 2 ** 31, -(2 ** 31), 2 ** 32, BIG, -BIG, 0, BIG, -BIG, 1],
  decimals: Array.from({ length: 4000 }, () => Math.round(r() * 3e9)),
};

const same = (a: Uint8Array, b: Uint8Array): boolean => Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;

describe("encodeIntsFast", () => {
  for (const [name, vals] of Object.entries(SERIES)) {
    for (const t of [0, 1, 2] as Transform[]) {
      it(`${name}, transform ${t}: the reference coder's bytes, for arrays, Float64Array and Int32Array`, () => {
        const ref = encodeInts(vals, vals.length, { transforms: [t], fast: true });
        const tokenOnly = { direct: false };
        expect(same(encodeIntsFast(vals, vals.length, [t], tokenOnly), ref)).toBe(true);
        expect(same(encodeIntsFast(Float64Array.from(vals), vals.length, [t], tokenOnly), ref)).toBe(true);
        if (vals.every((v) => v >= -(2 ** 31) && v < 2 ** 31)) {
          expect(same(encodeIntsFast(Int32Array.from(vals), vals.length, [t], tokenOnly), ref)).toBe(true);
        }
        for (const enc of [encodeIntsFast(vals, vals.length, [t]), encodeIntsFast(vals, vals.length, [t], tokenOnly)]) {
          const back = decodeInts(new ByteReader(enc), vals.length);
          expect(Array.from(back)).toEqual(vals.map((v) => v + 0)); // +0: −0 and 0 compare equal
        }
      });
    }
  }

  it("direct order-0 coding (kind 1) only where its histogram estimate wins by 0.5 %", () => {
    // a peaked residual distribution (most steps ±3, a few wide): the exact model beats tokens
    const peaked = Int32Array.from({ length: 50000 }, (_, i) => (i % 97 === 0 ? 900 : Math.floor(r() * 7) - 3));
    const auto = encodeIntsFast(peaked, peaked.length, [0]);
    const tokens = encodeIntsFast(peaked, peaked.length, [0], { direct: false });
    expect(auto[0]! >> 2).toBe(1);
    expect(auto.length).toBeLessThan(tokens.length);
    expect(Array.from(decodeInts(new ByteReader(auto), peaked.length))).toEqual(Array.from(peaked));
    // smooth random walks: never more than 0.2 % above the token coding
    for (const step of [10, 100, 1000]) {
      const v = Int32Array.from(walk(100000, step));
      const a = encodeIntsFast(v, v.length, [1]).length;
      const b = encodeIntsFast(v, v.length, [1], { direct: false }).length;
      expect(a).toBeLessThanOrEqual(b * 1.002);
    }
  });

  it("int32 extremes: differences of ±2^32 leave the int32 fast path and still match", () => {
    const vals = Int32Array.from([2147483647, -2147483648, 2147483647, 0, -2147483648, 5, -5, 2147483647]);
    for (const t of [0, 1, 2] as Transform[]) {
      const ref = encodeInts(Array.from(vals), vals.length, { transforms: [t], fast: true });
      expect(same(encodeIntsFast(vals, vals.length, [t], { direct: false }), ref)).toBe(true);
    }
  });

  it("rejects values the format cannot hold, like encodeInts", () => {
    expect(() => encodeIntsFast([1, 2 ** 50], 2, [0])).toThrow(RangeError);
    expect(() => encodeIntsFast([1.5], 1, [0])).toThrow(RangeError);
    expect(() => encodeIntsFast(Float64Array.of(Number.NaN), 1, [0])).toThrow(RangeError);
  });

  it("picks the transform the token coder codes smallest, from a sample", () => {
    const sets = {
      walk: walk(10000, 50),
      iidSigned: Array.from({ length: 10000 }, () => Math.floor((r() - 0.5) * 1e6)),
      quadratic: Array.from({ length: 10000 }, (_, i) => i * i + (i % 3)),
      decimals: SERIES.decimals!,
    };
    const picked: Record<string, Transform> = {};
    for (const [name, vals] of Object.entries(sets)) {
      const sizes = ([0, 1, 2] as Transform[]).map(
        (t) => encodeInts(vals, vals.length, { transforms: [t], fast: true }).length,
      );
      const t = estimateTransform(vals, vals.length, [0, 1, 2]);
      picked[name] = t;
      expect(sizes[t], name).toBe(Math.min(...sizes));
    }
    expect(picked).toEqual({ walk: 1, iidSigned: 0, quadratic: 2, decimals: 1 }); // zigzag: positives cost a bit more undifferenced
    expect(estimateTransform([1, 2], 2, [1, 2])).toBe(1); // too short to sample: the first one
  });
});

describe("ransEncodeU8", () => {
  it("writes ransEncode's bytes", () => {
    for (const n of [0, 1, 2, 3, 1000, 4097]) {
      for (const alpha of [1, 2, 17, 212]) {
        const syms = Uint8Array.from({ length: n }, () => Math.floor(r() ** 3 * alpha));
        const counts = new Uint32Array(256);
        let a = 0;
        for (const s of syms) {
          counts[s]!++;
          a = Math.max(a, s + 1);
        }
        const ref = ransEncode(syms, n, a);
        const got = ransEncodeU8(syms, n, a, counts);
        expect(same(got, ref)).toBe(true);
        if (n > 0) expect(Array.from(ransDecode(new ByteReader(got), n, 256))).toEqual(Array.from(syms));
      }
    }
  });
});

describe("level fast on typed data", () => {
  it("int32 series go to zrw (smaller than byte lanes + zstd) and decode byte for byte", async () => {
    const input = i32(walk(50000, 120));
    const fast = await compressWithReport(input, { level: "fast" });
    expect(fast.chamber).toBe("zrw");
    const lanes = await compressWithReport(input, { level: "fast", chamber: "general", declaredType: "int32" });
    expect(fast.compressed_bytes).toBeLessThan(lanes.compressed_bytes * 0.9);
    expect(Buffer.from(await decompress(fast.container)).equals(Buffer.from(input))).toBe(true);
  });

  it("float64 decimals of independent magnitudes (prices, amounts): undifferenced, as small as balanced", async () => {
    // like the bench's bitcoin amounts: differences of values spread over six decades are larger
    // than the values, so the fixed delta of the old fast path was ~10 % larger
    const vals = Array.from({ length: 40000 }, () => Math.round(10 ** (r() * 6) * 1e4) / 1e4);
    const input = f64(vals);
    const fast = await compressWithReport(input, { level: "fast" });
    const balanced = await compressWithReport(input, { level: "balanced" });
    expect(fast.chamber).toBe("float");
    expect(fast.compressed_bytes).toBeLessThanOrEqual(balanced.compressed_bytes + 16);
    expect(Buffer.from(await decompress(fast.container)).equals(Buffer.from(input))).toBe(true);
  });

  it("special floats (−0, NaN payloads, ±∞, subnormals, non-decimals) decode exactly at every level", async () => {
    const vals = Array.from({ length: 5000 }, (_, i) => Math.round(r() * 1e6) / 100 + (i % 500 === 0 ? 1e-9 : 0));
    vals[3] = -0;
    vals[10] = Number.POSITIVE_INFINITY;
    vals[11] = Number.NEGATIVE_INFINITY;
    vals[12] = Number.NaN;
    vals[13] = 5e-324;
    vals[14] = 2 ** 60;
    const b64 = f64(vals);
    new DataView(b64.buffer).setUint32(20 * 8, 0x7ff80001, true); // a NaN with a payload
    for (const input of [b64, f32(vals)]) {
      for (const level of ["fast", "balanced"] as const) {
        const declaredType = input === b64 ? "float64" : "float32";
        const forced = await compressWithReport(input, { level, declaredType, chamber: "float" });
        expect(Buffer.from(await decompress(forced.container)).equals(Buffer.from(input))).toBe(true);
        const auto = await compressWithReport(input, { level, declaredType });
        expect(Buffer.from(await decompress(auto.container)).equals(Buffer.from(input))).toBe(true);
      }
    }
  });

  it("timestamps at fast go through the delta chamber and decode byte for byte", async () => {
    const ts = i32(Array.from({ length: 20000 }, (_, i) => 1_600_000_000 + i * 300 + (i % 7)));
    const rep = await compressWithReport(ts, { level: "fast" });
    expect(rep.chamber).toBe("delta");
    expect(Buffer.from(await decompress(rep.container)).equals(Buffer.from(ts))).toBe(true);
  });
});
