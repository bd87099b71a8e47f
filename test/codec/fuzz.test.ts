import { describe, expect, it } from "vitest";
import { chamberId } from "../../src/codec/chambers/registry.js";
import { cmEncode } from "../../src/codec/entropy/cm.js";
import { writeFramed } from "../../src/codec/format/container.js";
import { ByteWriter } from "../../src/codec/format/varint.js";
import { CodecError, type CompressOptions, compress, decompress } from "../../src/codec/index.js";
import { fuzzRuns } from "../support/fuzz.js";
import { f64, i32, rng, utf8 } from "./helpers.js";

/**
 * 10^5 mutated containers: every one must decode to the original bytes or fail with a
 * CodecError — never another exception, a hang or (framed) wrong bytes.
 */
const ITERATIONS = fuzzRuns(25_000);

describe("fuzz: mutated containers", () => {
  it(`${ITERATIONS} mutations decode or fail cleanly`, { timeout: 180_000 }, async () => {
    const r = rng(2024);
    const walk = (() => {
      let a = 0;
      return Array.from({ length: 200 }, () => (a += Math.floor(r() * 21) - 10));
    })();
    const cases: [Uint8Array, CompressOptions][] = [
      [i32(walk), { chamber: "zrw" }],
      [i32(walk), { chamber: "zrw", bare: true }],
      [i32(Array.from({ length: 300 }, (_, i) => 1000 + i * 60)), { chamber: "delta" }],
      [f64(Array.from({ length: 100 }, (_, i) => Math.round(i * 1.7) / 10)), { chamber: "float", level: "balanced" }],
      [f64([Math.PI, Math.E, 1e-300, -0, 7.5, 8.25]), { chamber: "float", level: "fast" }],
      [utf8('{"a":[1,2,3],"b":{"c":"xyz"},"d":[{"e":1},{"e":2}]}'), { chamber: "json_residual", level: "fast" }],
      [utf8('{"k":"v","n":[true,false,null]}'), { chamber: "json_keys", level: "max" }],
      [utf8("abracadabra abracadabra"), { chamber: "text" }],
      [utf8("hello hello hello hello"), { chamber: "general", level: "balanced" }],
      [utf8("hello hello hello hello"), { chamber: "general", level: "max" }],
      [utf8("legacy legacy legacy"), { chamber: "legacy" }],
      [new Uint8Array(64).map((_, i) => (i * 37) & 255), { chamber: "high_entropy" }],
      [i32(Array.from({ length: 100 }, (_, i) => (i % 9 === 0 ? i : 5))), { chamber: "zrw-v5-dark-attractor" }],
      [new Uint8Array(300).map((_, i) => (i % 41 === 0 ? 9 : 0)), { chamber: "zrw-v5-dark-detractor" }],
      [new Uint8Array(256).map((_, i) => (i % 8 === 0 ? i : 1)), { chamber: "zrw-v5-stride8" }],
      [i32(Array.from({ length: 100 }, (_, i) => i * i)), { chamber: "zrw-v5-chunked" }],
    ];
    const bases = await Promise.all(cases.map(async ([input, o]) => ({ input, o, c: await compress(input, o) })));
    for (const layout of [2, 5] as const) {
      const seg = segmentedText(layout);
      expect(Buffer.from(await decompress(seg.c)).equals(Buffer.from(seg.input))).toBe(true);
      bases.push(seg);
    }
    const stats = { ok: 0, codecError: 0, bareWrong: 0 };
    for (let it = 0; it < ITERATIONS; it++) {
      const { input, o, c } = bases[it % bases.length]!;
      const m = mutate(c, r);
      let out: Uint8Array | null = null;
      try {
        out = await decompress(m, { maxOutputBytes: input.length * 2 + 64 });
      } catch (e) {
        if (!(e instanceof CodecError)) throw new Error(`mutation ${it} raised ${String(e)}`);
        stats.codecError++;
        continue;
      }
      if (Buffer.compare(Buffer.from(out), Buffer.from(input)) === 0) stats.ok++;
      else if (o.bare)
        stats.bareWrong++; // bare mode carries no checksum by design
      else throw new Error(`framed mutation ${it} decoded to wrong bytes`);
    }
    expect(stats.codecError).toBeGreaterThan(ITERATIONS / 2);
    expect(stats.ok + stats.codecError + stats.bareWrong).toBe(ITERATIONS);
  });
});

/**
 * A text container in a two-segment layout, built by hand at a small size (the encoder splits
 * only prose of ≥ 1 MiB): 600 bytes, segment 1 primed with 100 bytes — the ones before it
 * (layout 2, model 1) or the input's first ones (layout 5, model 2).
 */
function segmentedText(layout: 2 | 5): { input: Uint8Array; o: CompressOptions; c: Uint8Array } {
  const input = utf8("segments of a context-mixing stream, primed by the bytes before them. ".repeat(9).slice(0, 600));
  const model = layout === 2 ? 1 : 2;
  const a = cmEncode(input.subarray(0, 300), null, 0, model);
  const primed = layout === 2 ? input.subarray(200) : Buffer.concat([input.subarray(0, 100), input.subarray(300)]);
  const b = cmEncode(primed, null, 100, model);
  const w = new ByteWriter(a.length + b.length + 16);
  for (const v of [100, 2, 300, 300, a.length]) w.uvarint(v);
  w.bytes(a);
  w.bytes(b);
  const block = {
    chamber: chamberId("text"),
    rawLen: input.length,
    params: Uint8Array.of(layout, 0),
    payload: w.finish(),
  };
  return { input, o: { chamber: "text" }, c: writeFramed("max", [block], input, false) };
}

function mutate(c: Uint8Array, r: () => number): Uint8Array {
  const kind = Math.floor(r() * 6);
  const pos = Math.floor(r() * c.length);
  switch (kind) {
    case 0: {
      const m = c.slice();
      m[pos] = m[pos]! ^ (1 << Math.floor(r() * 8));
      return m;
    }
    case 1: {
      const m = c.slice();
      for (let k = 0; k < 3; k++) m[Math.floor(r() * m.length)] = Math.floor(r() * 256);
      return m;
    }
    case 2:
      return c.slice(0, pos);
    case 3: {
      const m = new Uint8Array(c.length + 1);
      m.set(c.subarray(0, pos));
      m[pos] = Math.floor(r() * 256);
      m.set(c.subarray(pos), pos + 1);
      return m;
    }
    case 4: {
      const m = c.slice();
      m[pos] = [0, 0xff, 0x80, 0x7f][Math.floor(r() * 4)]!;
      return m;
    }
    default: {
      const m = new Uint8Array(c.length - 1);
      m.set(c.subarray(0, pos));
      m.set(c.subarray(pos + 1), pos);
      return m;
    }
  }
}
