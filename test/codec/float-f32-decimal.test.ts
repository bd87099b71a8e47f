/**
 * The float chamber's mode 3 (issue #24): float32 numbers printed with e decimals and read back as
 * doubles (corpus/float64/alp_bitcoin_transactions_f_tw.f64) carry, at and above T(e), decimal
 * digits the float32 grid fixes; mode 3 codes each value's position on that grid instead, and the
 * FOLD bit of the e byte stores non-negative integers without the zigzag's wasted low bit.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { FOLD, f32Grid, float, floatCandidates } from "../../src/codec/chambers/float/index.js";
import { encodeInts } from "../../src/codec/entropy/intcoder.js";
import { ByteWriter } from "../../src/codec/format/varint.js";
import { compress, decompress, inspect } from "../../src/codec/index.js";
import { codeOf, f32, f64, rng } from "./helpers.js";

const ctx = { maxModelOutputBytes: 1 << 30 } as never;

/**
 * printf("%.{e}f", f) of a float32 f ≥ 0, read back as a double: the exact binary value rounded
 * to e decimals, an exact tie to even (as C's printf and Python's format do), in BigInt
 * arithmetic (independent of the chamber's double arithmetic)
 */
function printf32(f: number, e: number): number {
  const bits = new Uint32Array(Float32Array.of(f).buffer)[0]!;
  const ex = (bits >>> 23) & 0xff;
  const mant = BigInt(ex === 0 ? (bits & 0x7fffff) * 2 : (bits & 0x7fffff) | 0x800000);
  const q = ex - 150; // f = mant · 2^q
  let num = mant * 10n ** BigInt(e);
  let den = 1n;
  if (q >= 0) num <<= BigInt(q);
  else den <<= BigInt(-q);
  let n = num / den;
  const rem2 = (num % den) * 2n;
  if (rem2 > den || (rem2 === den && n % 2n === 1n)) n += 1n;
  const s = n.toString().padStart(e + 1, "0");
  return Number(e ? `${s.slice(0, s.length - e)}.${s.slice(s.length - e)}` : s);
}

/** n float32 values printed with e decimals and read back, log-spread around T(e); some negative when `signed` */
function printed(n: number, e: number, seed: number, signed: boolean): number[] {
  const r = rng(seed);
  const { T } = f32Grid(e);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const mag = T * 2 ** (r() * 14 - 6); // 2^-6·T … 2^8·T: both sides of T
    const v = printf32(Math.fround(mag), e);
    out.push(signed && r() < 0.3 ? -v : v);
  }
  return out;
}

const decode = (params: Uint8Array, payload: Uint8Array, rawLen: number) => float.decode(params, payload, rawLen, ctx);

describe("float mode 3: decimal of float32", () => {
  it("T(e) is the first power of two whose float32 spacing exceeds 10^-e", () => {
    for (let e = 0; e <= 22; e++) {
      const { T, g0, p } = f32Grid(e);
      expect(T * 2 ** -23 * p).toBeGreaterThan(1);
      expect((T / 2) * 2 ** -23 * p).toBeLessThanOrEqual(1);
      expect(g0).toBe(Math.ceil(T * p));
    }
    expect(f32Grid(4).T).toBe(1024);
  });

  it("round-trips e = 1..6 at every level, with negatives, zeros, −0, NaN, ±∞ and values at T", async () => {
    for (let e = 1; e <= 6; e++) {
      const { T } = f32Grid(e);
      const vals = printed(6000, e, 100 + e, e % 2 === 0);
      // specials and the values around T (exceptions where they are not on the grid)
      vals.splice(10, 0, 0, -0, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, T, -T);
      vals.splice(50, 0, Math.fround(T) - 10 ** -e, T + 10 ** -e, printf32(Math.fround(T * 1.5), e), 3.4e38, 1e300);
      const input = f64(vals);
      for (const level of ["fast", "balanced", "max"] as const) {
        const enc = (await float.encode(input, { level } as never))!;
        // fast keeps mode 0 (its split runs in WebAssembly), folded when that pays
        expect(enc.params[1]).toBe(level === "fast" ? 0 : 3);
        expect(enc.params[2]! & ~FOLD).toBe(e);
        expect(Buffer.from(await decode(enc.params, enc.payload, input.length))).toEqual(Buffer.from(input));
        const c = await compress(input, { level });
        expect(Buffer.from(await decompress(c))).toEqual(Buffer.from(input));
      }
    }
  });

  it("is chosen and smaller than mode 0 (signed and folded)", async () => {
    for (const signed of [false, true]) {
      const input = f64(printed(20000, 4, signed ? 7 : 8, signed));
      // mode 0 as fast codes it (the one candidate there), and as balanced and max code it
      const [fast0] = await floatCandidates(input, 8, "fast");
      expect(fast0!.params[1]).toBe(0);
      for (const level of ["balanced", "max"] as const) {
        const cands = await floatCandidates(input, 8, level);
        const m3 = cands.find((c) => c.params[1] === 3)!;
        const m0 = cands.find((c) => c.params[1] === 0);
        // independent non-negative values: mode 0 is not even coded (mode 3 folded wins)
        expect(m0 === undefined).toBe(!signed);
        expect(m3.payload.length).toBeLessThan(
          Math.min(m0?.payload.length ?? fast0!.payload.length, fast0!.payload.length) * 0.97,
        );
        // non-negative independent values are stored folded; signed ones are not
        expect((m3.params[2]! & FOLD) !== 0).toBe(!signed);
        const enc = (await float.encode(input, { level } as never))!;
        expect([...enc.params]).toEqual([...m3.params]);
      }
    }
  });

  it("keeps mode 0 where it is smaller: a regular series whose differences mode 3 breaks", async () => {
    // steps of 919 × 1.37 modulo 1370 (plus a slow drift), printed with 5 decimals: mode 0's
    // second differences take a few values; mode 3's integers change scale at each power of two
    const vals = Array.from({ length: 2000 }, (_, i) =>
      printf32(Math.fround(((i * 7919) % 1000) * 1.37 + 0.001 * i), 5),
    );
    const input = f64(vals);
    const cands = await floatCandidates(input, 8, "balanced");
    const m0 = cands.find((c) => c.params[1] === 0)!;
    const m3 = cands.find((c) => c.params[1] === 3)!;
    expect(m0.payload.length).toBeLessThan(m3.payload.length);
    const enc = (await float.encode(input, { level: "balanced" } as never))!;
    expect([...enc.params]).toEqual([...m0.params]);
    expect(Buffer.from(await decode(enc.params, enc.payload, input.length))).toEqual(Buffer.from(input));
  });

  it("leaves float32 (width 4) inputs and float64 data off the float32 grid to the other modes", async () => {
    const r = rng(5);
    const as32 = f32(Array.from({ length: 4001 }, () => Number((r() * 5000).toFixed(2))));
    for (const level of ["fast", "balanced", "max"] as const) {
      const enc = (await float.encode(as32, { level } as never))!;
      expect(enc.params[0]).toBe(4);
      expect(enc.params[1]).not.toBe(3);
      expect(Buffer.from(await decode(enc.params, enc.payload, as32.length))).toEqual(Buffer.from(as32));
      // independent non-negative decimals: mode 0, folded, at width 4 too
      expect([...enc.params]).toEqual([4, 0, 2 | FOLD]);
    }
    // decimals of float64 values above T: not on the float32 grid, mode 3 not tried
    const wide = f64(Array.from({ length: 4000 }, () => Number((2000 + r() * 5000).toFixed(4))));
    const cands = await floatCandidates(wide, 8, "max");
    expect(cands.some((c) => c.params[1] === 3)).toBe(false);
    // a width-4 container claiming mode 3 is refused
    const enc = (await float.encode(f64(printed(2000, 3, 9, false)), { level: "balanced" } as never))!;
    expect(await codeOf(decode(Uint8Array.of(4, 3, enc.params[2]!), enc.payload, 8000))).toBe("codec_bad_params");
  });

  it("refuses a corrupt or truncated mode-3 payload with a codec error, never a crash", async () => {
    const vals = printed(3000, 4, 11, true);
    vals[5] = Number.NaN; // one exception
    const input = f64(vals);
    const enc = (await float.encode(input, { level: "balanced" } as never))!;
    expect(enc.params[1]).toBe(3);
    const codes = new Set<string>();
    for (const cut of [0, 1, 2, 5, 17, enc.payload.length >> 1, enc.payload.length - 9, enc.payload.length - 1]) {
      codes.add(await codeOf(decode(enc.params, enc.payload.subarray(0, cut), input.length)));
    }
    for (const c of codes) expect(["codec_corrupt", "codec_truncated"]).toContain(c);
    // flipped bytes: a codec error or other bytes, nothing else
    const r = rng(3);
    for (let k = 0; k < 200; k++) {
      const bad = enc.payload.slice();
      const at = Math.floor(r() * bad.length);
      bad[at] = bad[at]! ^ (1 + Math.floor(r() * 255));
      const code = await codeOf(decode(enc.params, bad, input.length));
      expect(["ok", "codec_corrupt", "codec_bad_params"]).toContain(code);
    }
    // an integer above the largest float32's position on the grid
    const { g0, bT } = f32Grid(4);
    const w = new ByteWriter(64);
    w.bytes(encodeInts([1, g0 + (0x7f800000 - bT)], 2, { transforms: [0] }));
    w.uvarint(0);
    w.bytes(encodeInts([], 0, { transforms: [0] }));
    expect(await codeOf(decode(Uint8Array.of(8, 3, 4), w.finish(), 16))).toBe("codec_corrupt");
    // bad parameters: exponent out of range (with and without FOLD), unknown mode
    expect(await codeOf(decode(Uint8Array.of(8, 3, 23), enc.payload, input.length))).toBe("codec_bad_params");
    expect(await codeOf(decode(Uint8Array.of(8, 3, 23 | FOLD), enc.payload, input.length))).toBe("codec_bad_params");
    expect(await codeOf(decode(Uint8Array.of(8, 5, 4), enc.payload, input.length))).toBe("codec_bad_params");
  });
});

/** the pinned containers' input: n float32 values (2^0 … 2^12) printed with 4 decimals, then −0, NaN, +∞ and T(4) */
function pinned(n: number, seed: number, negShare: number): Uint8Array {
  const r = rng(seed);
  const vals: number[] = [];
  for (let i = 0; i < n; i++) {
    const f = Math.fround(2 ** (r() * 12));
    vals.push(Number(f.toFixed(4)) * (r() < negShare ? -1 : 1));
  }
  vals.push(-0, Number.NaN, Number.POSITIVE_INFINITY, f32Grid(4).T);
  return f64(vals);
}

describe("float mode 3: frozen containers (format of issue #24)", () => {
  // written while this release was built: compress(pinned(120, seed, neg), { level: "balanced",
  // chamber: "float" }): params [8, 3, 4] (signed integers) and [8, 3, 4 | FOLD] (folded). Later
  // releases must keep decoding them byte for byte, whatever their encoder writes.
  const FROZEN: { seed: number; neg: number; params: number[]; hex: string; sha256: string }[] = [
    {
      seed: 2024,
      neg: 0.25,
      params: [8, 3, 4],
      hex:
        "cf86010106e0070308030408b70167003990048802a108a90a900490049806a1089004880298069004a10888029004980698" +
        "06a10888028802000098069806a90a88028802a108a10890049004a1089004a1088802a1088802a108880290049806a90aa9" +
        "0ac90e9004a108478e790ef2a188005121156f55e1cf31a2bb7a86e51b5e2948373e982a40699208c33dee986f85eb4370fc" +
        "fdde3f29e4109e77256f1c003054e4fa90ab8fdd7e20ab8213a52ec6bdcb556f115ab25ba66e90db648a34e2923b1c98027a" +
        "5809203f0d527c23825167652ba34371286f41a831483f0af1a2ad650d1751d85325efaded032e9dcba28b9c31d9db865ee9" +
        "0388ae46c683e52804b198f7147875e9ac63c7df247d8768fdb0fd8f835ec89cc96fea8842cb272199be6b9047bea8b19e28" +
        "0a39d21283f908e14f0695cd73fe8badf64a27282c0894b70861ca532747183556918d24f83450b9a6246d49794a004756e2" +
        "1e20fb987a90ef567d18406537e9236d2f7deeb281cf8b8077b81670c0809c2f932f98f061db626f81c3609d6a5d0f049222" +
        "ba21bdf6f8655aeb3c23fa8f7c986a374ac2ce509dae7a19809d5e1129f68b266a6659eaa93c75a2150833d3d1fa30611f4f" +
        "918d2a3dad065c84f125df813470247c81eba556348a46d1281a01007103081120d6aa01001daa5556d73f0256d4bf000001" +
        "100000000000000080000000000000f87f000000000000f07f62a6c33c",
      sha256: "74e50c7ea52b8034a12309b9b17638e09d5f49fb9466e41a4ec5c12dee3c1d93",
    },
    {
      seed: 2025,
      neg: 0,
      params: [8, 3, 4 | FOLD],
      hex:
        "cf86010106e0070308038408b8016300349004a90a0000a1089806b10c880290049004a90aa90aa108a1088802a108a10898" +
        "06980690049004a10890049004a90aa10888020000900490049004980690040000900488029004880290049004a108a90a00" +
        "0090049806ca0e9004be91d10bb96e700350d1fe1dada633628f8475b76ed8e93ba6753ec1832064c1b0e1b5297e7117cdb2" +
        "3b302770a7ff6d6a97746eab2c863d0e40ada0c878aa0053abedc7af8839c0525e3e304869472589463dbb5d56bb8634fc01" +
        "2e2ca69133580ea093333b2dfb8eb6f9adb751325a21f2a09345d3c1e985c18613188b5b15926a55feff271bda43e6314aaf" +
        "9f755d8528bb137f11580bc39385b1911df44e65396af4cd203378e762bb113cfc6b6eb069e691ca401c8b904b9cd2762f4f" +
        "e24625473f07b65ca6e8a089e8acfe5e1e2e554e8bdf118218ae72bf80bc235b33d55021093e9b636ceda7d7ad7656330b68" +
        "164a1d2c2a768f67e9574f9e7e54db90e53dc1cf66fa57a75a0482918edc42c5db2fd0688def0cbb5458a7b63342ba95d134" +
        "940949c8cf85b7957b1258b4d149fe5a31bc793326e2761bac6fc1e665fb88e18388ecb1cdf59dc4582dbd84488884480800" +
        "100703081120d6aa01001daa5556d73f0256d4bf000001100000000000000080000000000000f87f000000000000f07fe202" +
        "4440",
      sha256: "fab98f4ed8acc3dae1dca10fdf4ad127a2a2515e780ecff2a3752dc6d64fad9e",
    },
  ];
  it("decode byte for byte; their headers say float / balanced with the mode-3 parameters", async () => {
    for (const f of FROZEN) {
      const container = Buffer.from(f.hex, "hex");
      const info = inspect(container);
      expect(info.level).toBe("balanced");
      expect(info.chambers).toEqual(["float"]);
      const out = await decompress(container);
      expect(createHash("sha256").update(out).digest("hex")).toBe(f.sha256);
      expect(Buffer.from(out)).toEqual(Buffer.from(pinned(120, f.seed, f.neg)));
      // the parameter bytes, where the container's block header has them
      const at = Buffer.from(container).indexOf(Buffer.from(f.params));
      expect(at).toBeGreaterThan(0);
    }
  });
});
