import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeInts, encodeInts, encodeIntsFast, MAX_ABS, type Transform } from "../../src/codec/entropy/intcoder.js";
import { ByteReader, ByteWriter } from "../../src/codec/format/varint.js";
import { CodecError, compressWithReport, decompress } from "../../src/codec/index.js";
import { fuzzRuns } from "../support/fuzz.js";
import { f64, rng } from "./helpers.js";

/**
 * The integer coder's residuals stay inside its token table (zigzag values below 2^53) and its
 * constant kind's range (|c| < 2^52). The run-length path codes the run values (transform-2
 * residuals of values near 2^50, up to ±2^52) again with transform 1, whose differences reach
 * ±2^53: past the table. encodeInts threw a TypeError there (the context-token kind, ≥ 2048
 * runs; with fewer runs it built a token candidate past the table, never the smallest in the
 * cases tried); the decoder returned values far out of range from crafted streams. Found on the
 * decimal integers of elf_POI-lat.f64 (e = 15). The fix skips a transform whose residuals do not
 * fit: every input that encoded before gets the same bytes.
 */

const BIG = MAX_ABS - 1;

/**
 * Values near ±2^50, each repeated (the float chamber's exceptions repeat the previous integer),
 * with single-value spikes of the other sign: the transform-2 residuals around a spike are about
 * −2^51, +2^52, −2^51, so the run values' differences reach 3·2^51.
 */
function spikyRuns(n: number, seed: number): Float64Array {
  const r = rng(seed);
  const out = new Float64Array(n);
  let i = 0;
  while (i < n) {
    const sign = r() < 0.5 ? -1 : 1;
    const base = sign * (BIG - Math.floor(r() * 2 ** 40));
    const len = 8 + Math.floor(r() * 40);
    for (let k = 0; k < len && i < n; k++) out[i++] = base;
    if (i < n) out[i++] = -sign * (BIG - Math.floor(r() * 2 ** 40));
  }
  return out;
}

function roundTrip(vals: ArrayLike<number>, n: number, enc: Uint8Array): void {
  const r = new ByteReader(enc);
  const dec = decodeInts(r, n);
  expect(r.pos).toBe(enc.length);
  expect(Array.from(dec)).toEqual(Array.from(vals).slice(0, n));
}

describe("integer coder: residuals beyond the token table", () => {
  it("values near 2^50 with long runs of repeats round-trip (≥ 2048 runs: kind 4; fewer: kind 2)", () => {
    for (const [n, seed] of [
      [200_000, 4211],
      [3000, 1],
      [3000, 2],
    ]) {
      const vals = spikyRuns(n!, seed!);
      roundTrip(vals, vals.length, encodeInts(vals, vals.length));
    }
  });

  it("round-trips a run value difference of exactly −2^52 (zigzag 2^53 − 1: the table's last token)", () => {
    // boundary guard (passes before and after the fix): transform-2 residuals at R and S of
    // P, Q, R, S are R − 2Q + P and S − 2R + Q; with these four values (all below 2^50) the
    // second minus the first is exactly −2^52, which the table still codes
    const [P, Q, R, S] = [-(2 ** 48), -3 * 2 ** 48, 3 * 2 ** 48, 2 ** 48];
    expect(S - 2 * R + Q - (R - 2 * Q + P)).toBe(-(2 ** 52));
    const unit = [P, P, P, P, P, P, Q, R, S, S, S, S, S, S];
    for (const reps of [40, 400]) {
      const vals = Array.from({ length: reps }, () => unit).flat();
      for (const transforms of [undefined, [2], [1, 2], [0, 1]] as (Transform[] | undefined)[]) {
        roundTrip(vals, vals.length, encodeInts(vals, vals.length, transforms ? { transforms } : {}));
      }
    }
  });

  it("property: extreme magnitudes, runs and alternating signs round-trip or are refused, never a TypeError", () => {
    const mag = fc.oneof(
      fc.constantFrom(0, 1, BIG, BIG - 1, 2 ** 49, 2 ** 31, 2 ** 32 + 1),
      fc
        .tuple(fc.integer({ min: 0, max: 2 ** 25 - 1 }), fc.integer({ min: 0, max: 2 ** 25 - 1 }))
        .map(([hi, lo]) => hi * 2 ** 25 + lo),
      fc.integer({ min: 0, max: 1000 }),
    );
    const signed = fc.tuple(mag, fc.boolean()).map(([m, neg]) => (neg && m !== 0 ? -m : m));
    const near50 = fc.integer({ min: 0, max: 2 ** 30 }).map((d) => BIG - d);

    // a short random pattern of runs and single-value spikes (values near ±2^50, each of the
    // other sign than the one before) repeated into more than 2048 residual runs (the
    // context-token kind codes them)
    const manyRuns = fc
      .array(fc.tuple(near50, fc.oneof(fc.constant(1), fc.integer({ min: 9, max: 14 }))), {
        minLength: 2,
        maxLength: 6,
      })
      .map((rs) => {
        const unit = rs.flatMap(([v, k], j) => Array.from({ length: k }, () => (j % 2 ? -v : v)));
        return Array.from({ length: Math.ceil(30_000 / unit.length) }, () => unit).flat();
      });
    const series = fc.oneof(
      fc.array(signed, { maxLength: 200 }),
      // runs of repeats
      fc
        .array(fc.tuple(signed, fc.integer({ min: 1, max: 30 })), { maxLength: 120 })
        .map((rs) => rs.flatMap(([v, k]) => Array.from({ length: k }, () => v))),
      // alternating signs around a run structure
      fc
        .array(fc.tuple(mag, fc.integer({ min: 1, max: 12 })), { maxLength: 200 })
        .map((rs) => rs.flatMap(([v, k], j) => Array.from({ length: k }, () => (j % 2 && v !== 0 ? -v : v)))),
      { weight: 3, arbitrary: manyRuns },
    );
    const bad = fc.constantFrom(MAX_ABS, -MAX_ABS, 2 ** 53, Number.NaN, 0.5, Number.POSITIVE_INFINITY);
    const withBad = fc.oneof(
      { weight: 6, arbitrary: series },
      {
        weight: 1,
        arbitrary: fc
          .tuple(series, bad, fc.nat())
          .map(([s, b, at]) => [...s.slice(0, at % (s.length + 1)), b, ...s.slice(at % (s.length + 1))]),
      },
    );
    const transforms = fc.constantFrom<Transform[] | undefined>(undefined, [0], [1], [2], [0, 1], [1, 2]);
    fc.assert(
      fc.property(withBad, transforms, fc.boolean(), (vals, ts, fast) => {
        let enc: Uint8Array;
        try {
          enc = fast
            ? encodeIntsFast(vals, vals.length, ts ?? [0, 1, 2])
            : encodeInts(vals, vals.length, { transforms: ts });
        } catch (e) {
          if (e instanceof RangeError || e instanceof CodecError) return;
          throw e;
        }
        roundTrip(vals, vals.length, enc);
      }),
      { numRuns: fuzzRuns(100) },
    );
  });
});

describe("integer decoder: crafted streams", () => {
  it("refuses values out of range (constant transform-2 residuals that grow quadratically)", () => {
    const w = new ByteWriter(16);
    w.byte(2 | (0 << 2)); // transform 2, kind 0 (constant)
    w.svarint(BIG);
    w.svarint(BIG);
    w.svarint(2 ** 51);
    expect(() => decodeInts(new ByteReader(w.finish()), 100)).toThrowError(
      expect.objectContaining({ code: "codec_corrupt" }),
    );
  });

  it("refuses head values out of range", () => {
    const w = new ByteWriter(16);
    w.byte(1 | (0 << 2)); // transform 1, kind 0
    w.svarint(2 ** 51);
    w.svarint(0);
    expect(() => decodeInts(new ByteReader(w.finish()), 5)).toThrowError(
      expect.objectContaining({ code: "codec_corrupt" }),
    );
  });

  it("property: corrupted streams decode to in-range integers or throw CodecError, never a TypeError", () => {
    const sources = [
      spikyRuns(6000, 7),
      spikyRuns(600, 8),
      Array.from({ length: 500 }, (_, i) => (i % 2 ? -BIG : BIG)),
    ];
    const encs = sources.map((v) => ({ n: v.length, enc: encodeInts(v, v.length) }));
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: encs.length - 1 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }),
        (which, flips) => {
          const { n, enc } = encs[which]!;
          const b = enc.slice();
          for (const [at, x] of flips) b[at % b.length] = x;
          let dec: Float64Array;
          try {
            dec = decodeInts(new ByteReader(b), n);
          } catch (e) {
            if (e instanceof CodecError) return;
            throw e;
          }
          for (const v of dec) if (!(Number.isSafeInteger(v) && Math.abs(v) < MAX_ABS)) throw new Error(`decoded ${v}`);
        },
      ),
      { numRuns: fuzzRuns(300) },
    );
  });
});

describe("compress(): float64 decimals whose integers reach 2^50", () => {
  // v = n / 10^15 with |n| < 2^50: the float chamber's decimal mode (e = 15) with the integers of
  // spikyRuns, as on elf_POI-lat.f64
  const floats = (n: number, seed: number): number[] => {
    const ints = spikyRuns(n, seed);
    const out: number[] = [];
    for (const x of ints) {
      const v = x / 1e15;
      out.push(Math.round(v * 1e15) / 1e15 === v ? v : out.length ? out[out.length - 1]! : 0);
    }
    return out;
  };
  it("round-trips at every level (forced float chamber and automatic)", async () => {
    const input = f64(floats(60_000, 99));
    for (const level of ["fast", "balanced", "max"] as const) {
      const rep = await compressWithReport(input, { level, chamber: "float" });
      expect(Buffer.from(await decompress(rep.container)).equals(Buffer.from(input))).toBe(true);
      const auto = await compressWithReport(input, { level });
      expect(Buffer.from(await decompress(auto.container)).equals(Buffer.from(input))).toBe(true);
    }
  });
});
