import { describe, expect, it } from "vitest";
import {
  CHAMBER_NAMES,
  type ChamberName,
  compress,
  compressWithReport,
  decompress,
  inspect,
} from "../../src/codec/index.js";
import { f32, f64, i32, rng, utf8 } from "./helpers.js";

const r = rng(42);
const walk = (() => {
  let a = 0;
  return Array.from({ length: 4096 }, () => (a += Math.floor(r() * 201) - 100));
})();
const timestamps = Array.from({ length: 2000 }, (_, i) => 1_600_000_000 + i * 300 + (i % 97 === 0 ? 7 : 0));
const temps = Array.from({ length: 3000 }, (_, i) => Math.round((20 + 10 * Math.sin(i / 50) + r()) * 10) / 10);
const json = utf8(
  JSON.stringify(
    Array.from({ length: 200 }, (_, i) => ({ id: i, name: `user-${i % 17}`, score: (i * 37) % 101, ok: i % 3 === 0 })),
    null,
    2,
  ),
);
const prose = utf8(
  "It was the best of times, it was the worst of times, it was the age of wisdom, it was the age of foolishness. ".repeat(
    40,
  ),
);
const records = (() => {
  const b = new Uint8Array(32 * 500);
  for (let i = 0; i < 500; i++) {
    b[i * 32] = i & 255;
    b[i * 32 + 1] = 7;
    b[i * 32 + 8] = (i * 3) & 255;
  }
  return b;
})();
const sparse = (() => {
  const b = new Uint8Array(20000);
  for (let i = 0; i < 200; i++) b[Math.floor(r() * 20000)] = 1 + Math.floor(r() * 255);
  return b;
})();
const dominant = i32(Array.from({ length: 5000 }, (_, i) => (i % 211 === 0 ? i : -1)));

const INPUT: Record<ChamberName, Uint8Array> = {
  high_entropy: new Uint8Array(1000).map(() => Math.floor(r() * 256)),
  general: prose,
  text: prose,
  json_keys: json,
  json_residual: json,
  zrw: i32(walk),
  float: f64(temps),
  delta: i32(timestamps),
  "zrw-v5": i32(walk),
  "zrw-v5-chunked": i32(Array.from({ length: 70000 }, (_, i) => i % 1000)),
  "zrw-v5-delta": i32(walk),
  "zrw-v5-stride8": records,
  "zrw-v5-stride16": records,
  "zrw-v5-stride32": records,
  "zrw-v5-dark-attractor": dominant,
  "zrw-v5-dark-detractor": sparse,
  legacy: prose,
};

describe("every chamber encodes when asked and decodes what it encoded", () => {
  for (const name of CHAMBER_NAMES) {
    it(name, async () => {
      const input = INPUT[name];
      for (const level of ["fast", "max"] as const) {
        const c = await compress(input, { chamber: name, level });
        expect(inspect(c).chambers).toEqual([name]);
        expect(await decompress(c)).toEqual(input);
      }
    });
  }
});

describe("chamber behaviour", () => {
  it("zrw codes a uniform-step random walk within 5% of its entropy", async () => {
    const rr = rng(7);
    let a = 0;
    const n = 65536;
    const vals = Array.from({ length: n }, () => (a += Math.floor(rr() * 201) - 100));
    const c = await compress(i32(vals), { chamber: "zrw" });
    const bound = (n * Math.log2(201)) / 8;
    expect(c.length).toBeLessThan(bound * 1.05);
  });

  it("zrw codes runs of uniform values and lengths within 5% of their entropy (unsigned direct kind)", async () => {
    const rr = rng(11);
    const vals: number[] = [];
    while (vals.length < 262144) {
      const v = Math.floor(rr() * 50);
      const len = 1 + Math.floor(rr() * 64);
      for (let k = 0; k < len; k++) vals.push(v);
    }
    vals.length = 262144;
    let runs = 1;
    for (let i = 1; i < vals.length; i++) if (vals[i] !== vals[i - 1]) runs++;
    const bound = (runs * (Math.log2(50) + Math.log2(64))) / 8;
    const c = await compress(i32(vals), { chamber: "zrw" });
    expect(c.length).toBeLessThan(bound * 1.05);
  });

  it("delta turns a regular clock into a few bytes", async () => {
    const clock = i32(Array.from({ length: 10000 }, (_, i) => 1_700_000_000 + 60 * i));
    const c = await compress(clock, { chamber: "delta", bare: true });
    expect(c.length).toBeLessThanOrEqual(16);
    expect(await decompress(c)).toEqual(clock);
    // int64 epoch milliseconds
    const ms = new BigInt64Array(1000).map((_, i) => 1_700_000_000_000n + BigInt(i) * 1000n);
    const b = new Uint8Array(ms.buffer);
    const c2 = await compress(b, { chamber: "delta" });
    expect(c2.length).toBeLessThan(40);
    expect(await decompress(c2)).toEqual(b);
  });

  it("float keeps NaN payloads, -0, infinities and non-decimal values bit-exact", async () => {
    const vals = [...temps.slice(0, 500), Number.NaN, -0, Number.POSITIVE_INFINITY, Math.PI, 1e-300, -Number.MAX_VALUE];
    const b = f64(vals);
    const dv = new DataView(b.buffer);
    dv.setUint32(500 * 8, 0x7ff80001, true); // NaN with a payload
    for (const level of ["fast", "balanced", "max"] as const) {
      const c = await compress(b, { chamber: "float", level });
      expect(await decompress(c)).toEqual(b);
    }
    const small = f32(temps.slice(0, 1000));
    expect(await decompress(await compress(small, { chamber: "float" }))).toEqual(small);
  });

  it("float beats brotli-style coding on decimal series", async () => {
    const b = f64(temps);
    const rep = await compressWithReport(b, { level: "balanced" });
    expect(rep.data_class).toBe("float64");
    expect(rep.chamber).toBe("float");
    expect(rep.container.length).toBeLessThan(b.length / 5);
  });

  it("json chambers restore whitespace and key order exactly", async () => {
    const odd = utf8(
      '{ "a" : [1, 2.50, -3e2 ],\n\t"b":{"c":"x\\"y","d":null}, "e" : true }\r\n{"a":[4],"b":{"c":"z"}}\n',
    );
    for (const name of ["json_keys", "json_residual"] as const) {
      const c = await compress(odd, { chamber: name, level: "balanced" });
      expect(new TextDecoder().decode(await decompress(c))).toBe(new TextDecoder().decode(odd));
    }
  });

  it("router picks typed chambers and explains why", async () => {
    const rep = await compressWithReport(i32(walk), { level: "balanced" });
    expect(rep.data_class).toBe("int32");
    expect(rep.chamber).toBe("zrw");
    expect(rep.label).toBe("omni/zrw");
    expect(rep.reason).toMatch(/int32/);
    const t = await compressWithReport(prose, { level: "balanced" });
    expect(t.data_class).toBe("text");
    const j = await compressWithReport(json, { level: "balanced" });
    expect(j.data_class).toBe("json");
  });

  it("legacy produces gzip at fast and brotli otherwise", async () => {
    const g = await compress(prose, { chamber: "legacy", level: "fast" });
    const b = await compress(prose, { chamber: "legacy", level: "max" });
    expect(await decompress(g)).toEqual(prose);
    expect(await decompress(b)).toEqual(prose);
  });
});

describe("x86 filter in the text chamber", () => {
  it("ELF inputs use the E8/E9 filter and round-trip, including truncated operands at the end", async () => {
    const r = rng(11);
    const body = new Uint8Array(6000).map(() => (r() < 0.08 ? 0xe8 : Math.floor(r() * 256)));
    const elf = new Uint8Array(body.length + 4);
    elf.set([0x7f, 0x45, 0x4c, 0x46]);
    elf.set(body, 4);
    elf[elf.length - 2] = 0xe8; // opcode with an incomplete operand
    const c = await compress(elf, { chamber: "text" });
    expect([c[7], c[8], c[9]]).toEqual([2, 21, 1]); // params length 2: [layout 21 (model 11, binary), filter 1]
    expect(await decompress(c)).toEqual(elf);
    const { x86Decode, x86Encode } = await import("../../src/codec/chambers/text/x86.js");
    expect(x86Decode(x86Encode(body))).toEqual(body);
  });
});
