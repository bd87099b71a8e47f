import { afterEach, describe, expect, it, vi } from "vitest";
import { pickExponent } from "../../src/codec/chambers/float/index.js";
import {
  hasIntWasm,
  KEEP_BYTES,
  kernels,
  Layout,
  MAX_JOB_BYTES,
  setIntWasm,
} from "../../src/codec/entropy/int-wasm.js";
import { decodeInts, encodeIntsFast, type Transform } from "../../src/codec/entropy/intcoder.js";
import { ByteReader } from "../../src/codec/format/varint.js";
import { compressWithReport, decompress, type Level } from "../../src/codec/index.js";
import { f32, f64, i32, rng } from "./helpers.js";

/**
 * Level fast's integer coder and the float chamber's decimal split run their loops in
 * WebAssembly (src/codec/entropy/int-wasm/fast.as.ts) when it runs here, and in TypeScript
 * otherwise: both must write the same bytes (no format change), decode to the input, and reject
 * what the TypeScript coder rejects; cold (a fresh instance) and warm (the kept one, grown and
 * reused across sizes) alike.
 */
const r = rng(2411);
const same = (a: Uint8Array, b: Uint8Array): boolean => Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;
afterEach(() => setIntWasm(true));

/** the bytes with the WebAssembly loops and with the TypeScript ones */
function both<T>(fn: () => T): { wasm: T; ts: T } {
  setIntWasm(true);
  const wasm = fn();
  setIntWasm(false);
  const ts = fn();
  setIntWasm(true);
  return { wasm, ts };
}

const walk = (n: number, step: number): number[] => {
  let a = 0;
  return Array.from({ length: n }, () => (a += Math.floor(r() * (2 * step + 1)) - step));
};
const BIG = 2 ** 50 - 1;
const SERIES: Record<string, number[]> = {
  empty: [],
  one: [-5],
  two: [3, -9],
  three: [1, 2, 4],
  constant: Array.from({ length: 5000 }, () => -7),
  ramp: Array.from({ length: 5000 }, (_, i) => 1000 + 3 * i),
  // a constant second difference: kind 0 after delta-of-delta
  parabola: Array.from({ length: 3000 }, (_, i) => i * i),
  // small alphabets over ≥ 4096 values: the direct kind (1)
  small: Array.from({ length: 20000 }, () => Math.floor(r() * 20) - 10),
  walk: walk(30000, 100),
  wideWalk: walk(6000, 2 ** 28),
  // every bit length up to 50, both signs, and the 2^31 / 2^32 boundaries
  wide: Array.from({ length: 6000 }, (_, i) => {
    const v = Math.floor(r() * 2 ** (i % 51));
    return i % 2 ? 0 - v : v; // 0 - 0 is +0: the coder does not keep the sign of zero
  }),
  boundary: [2 ** 30 - 1, -(2 ** 30), 2 ** 30, 2 ** 31 - 1, 2 ** 31, -(2 ** 31), 2 ** 32, BIG, -BIG, 0, BIG, -BIG, 1],
};
const INT32: Record<string, number[]> = {
  walk: walk(20000, 120),
  extremes: Array.from({ length: 5000 }, (_, i) => (i % 2 ? 2147483647 : -2147483648)),
  random: Array.from({ length: 5000 }, () => Math.floor((r() - 0.5) * 4294967295)),
  clock: Array.from({ length: 8192 }, (_, i) => 1_600_000_000 + 30 * i + (i % 7)),
};
const TRANSFORMS: (readonly Transform[])[] = [[0], [1], [2], [0, 1, 2]];

describe("WebAssembly loops of level fast", () => {
  it("run here (Node 20 and 24 have WebAssembly)", () => {
    expect(hasIntWasm()).toBe(true);
  });

  for (const [name, vals] of Object.entries(SERIES))
    it(`${name}: the TypeScript coder's bytes for every transform and kind, as arrays and Float64Array, and decode`, () => {
      for (const t of TRANSFORMS)
        for (const direct of [true, false])
          for (const input of [vals, Float64Array.from(vals)]) {
            const { wasm, ts } = both(() => encodeIntsFast(input, vals.length, t, { direct }));
            expect(same(wasm, ts), `${name} ${t} direct ${direct}`).toBe(true);
            expect(Array.from(decodeInts(new ByteReader(wasm), vals.length))).toEqual(vals);
          }
    });

  for (const [name, vals] of Object.entries(INT32))
    it(`int32 ${name}: the TypeScript coder's bytes from an Int32Array, and decode`, () => {
      const a = Int32Array.from(vals);
      for (const t of TRANSFORMS) {
        const { wasm, ts } = both(() => encodeIntsFast(a, a.length, t));
        expect(same(wasm, ts)).toBe(true);
        expect(Array.from(decodeInts(new ByteReader(wasm), a.length))).toEqual(vals);
      }
    });

  it("a view into a larger array codes only its n values", () => {
    const a = Int32Array.from(INT32.walk!);
    const view = a.subarray(100, 5100);
    const { wasm, ts } = both(() => encodeIntsFast(view, 4000, [1]));
    expect(same(wasm, ts)).toBe(true);
    expect(Array.from(decodeInts(new ByteReader(wasm), 4000))).toEqual(Array.from(view.subarray(0, 4000)));
  });

  it("rejects values the format cannot hold, at the same index as the TypeScript coder", () => {
    for (const bad of [2 ** 50, -(2 ** 50), 0.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      const vals = [1, 2, 3, bad, 5];
      const { wasm, ts } = both(() => {
        try {
          encodeIntsFast(Float64Array.from(vals), vals.length, [1]);
          return "ok";
        } catch (e) {
          return String(e);
        }
      });
      expect(wasm).toBe("RangeError: value out of range at 3");
      expect(ts).toBe(wasm);
    }
  });

  it("pickExponent chooses the same exponent and share as the TypeScript test", () => {
    const sets: [Float64Array, 4 | 8][] = [
      [Float64Array.from({ length: 5000 }, () => Math.round(r() * 1e6) / 100), 8],
      [Float64Array.from({ length: 3000 }, () => Math.round(10 ** (r() * 6) * 1e4) / 1e4), 8],
      [Float64Array.from({ length: 3000 }, () => r()), 8],
      [Float64Array.from({ length: 700 }, (_, i) => [0, -0, Number.NaN, 1e300, -2.5, 0.5][i % 6]!), 8],
      [Float64Array.from(new Float32Array(Array.from({ length: 4000 }, () => Math.round(r() * 1e4) / 100))), 4],
      [Float64Array.from({ length: 1 }, () => 3.25), 8],
    ];
    for (const [vals, width] of sets) {
      const { wasm, ts } = both(() => pickExponent(vals, width));
      expect(wasm).toEqual(ts);
    }
  });

  it("jobs above MAX_JOB_BYTES (addresses past 2^31) are left to the TypeScript loops", () => {
    expect(kernels(MAX_JOB_BYTES + 1)).toBeNull();
    expect(kernels(1024)).not.toBeNull();
    setIntWasm(false);
    expect(kernels(1024)).toBeNull();
  });

  it("the kept instance grows and is reused across sizes; an input above KEEP_BYTES gets its own", () => {
    // small, large, small again: views are taken after any growth
    const sizes = [100, 60000, 10, 30000];
    for (const n of sizes) {
      const vals = walk(n, 1000);
      const { wasm, ts } = both(() => encodeIntsFast(Float64Array.from(vals), n, [0, 1, 2]));
      expect(same(wasm, ts)).toBe(true);
    }
    // more values than the kept memory holds
    const n = Math.ceil(KEEP_BYTES / (new Layout(0, 1000).bytes / 1000)) + 1000;
    const big = new Int32Array(n);
    for (let i = 1; i < n; i++) big[i] = big[i - 1]! + ((i * 7919) % 201) - 100;
    const { wasm, ts } = both(() => encodeIntsFast(big, n, [1]));
    expect(same(wasm, ts)).toBe(true);
    expect(decodeInts(new ByteReader(wasm), n)).toEqual(Float64Array.from(big));
    // and the kept instance still codes small arrays right afterwards
    const after = walk(5000, 50);
    const again = both(() => encodeIntsFast(after, after.length, [1]));
    expect(same(again.wasm, again.ts)).toBe(true);
  });
});

/** typed inputs of every kind the fast chambers see, with their special values */
function typedInputs(): Record<string, Uint8Array> {
  const q = rng(77);
  const n = 20000;
  const specials = [0, -0, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 5e-324, Math.PI, 1e300];
  const nanPayload = new Uint8Array(new Float64Array([Number.NaN]).buffer);
  nanPayload[0] = 0x55; // a NaN with a payload must come back bit for bit
  const amounts = f64(
    Array.from({ length: n }, (_, i) =>
      i % 97 === 5 ? specials[i % specials.length]! : Math.round(10 ** (q() * 6) * 100) / 100,
    ),
  );
  amounts.set(nanPayload, 8 * 13);
  let t = 20;
  return {
    amounts,
    smooth: f64(
      Array.from({ length: n }, () => {
        t += q() - 0.5;
        return Math.round(t * 1000) / 1000;
      }),
    ),
    float32: f32(Array.from({ length: n }, (_, i) => (i % 50 === 3 ? Number.NaN : Math.round(q() * 1e5) / 100))),
    randomDoubles: f64(Array.from({ length: 4000 }, () => (q() - 0.5) * 1e10)),
    walk: i32(walk(n, 120)),
    wide: i32(Array.from({ length: n }, () => Math.floor((q() - 0.5) * 4e9))),
    clock: i32(Array.from({ length: n }, (_, i) => 1_600_000_000 + 30 * i + (i % 7))),
  };
}

describe("typed chambers with the WebAssembly loops", () => {
  const inputs = typedInputs();
  for (const level of ["fast", "balanced"] as Level[])
    for (const [name, data] of Object.entries(inputs))
      it(`${name} at ${level}: the same container as the TypeScript loops, and it decodes byte for byte`, async () => {
        setIntWasm(true);
        const withWasm = await compressWithReport(data, { level });
        setIntWasm(false);
        const withTs = await compressWithReport(data, { level });
        setIntWasm(true);
        expect(withWasm.chamber).toBe(withTs.chamber);
        expect(same(withWasm.container, withTs.container)).toBe(true);
        expect(same(await decompress(withWasm.container), data)).toBe(true);
      });

  it("cold: a fresh module (new WebAssembly instance, nothing kept) writes the warm bytes", async () => {
    const warm: Uint8Array[] = [];
    for (const data of Object.values(inputs)) warm.push((await compressWithReport(data, { level: "fast" })).container);
    vi.resetModules();
    const fresh = await import("../../src/codec/index.js");
    const list = Object.values(inputs);
    for (let i = 0; i < list.length; i++) {
      const cold = await fresh.compressWithReport(list[i]!, { level: "fast" });
      expect(same(cold.container, warm[i]!)).toBe(true);
      expect(same(await fresh.decompress(cold.container), list[i]!)).toBe(true);
    }
  });
});
