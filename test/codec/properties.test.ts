import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type ChamberName, compress, decompress } from "../../src/codec/index.js";
import { fuzzRuns } from "../support/fuzz.js";
import { f64, i32, utf8 } from "./helpers.js";

const same = (a: Uint8Array, b: Uint8Array): boolean => Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;

async function roundTrip(input: Uint8Array, opts: Parameters<typeof compress>[1] = {}): Promise<void> {
  const c = await compress(input, opts);
  if (!opts.chamber) expect(c.length).toBeLessThanOrEqual(input.length + 16);
  const back = await decompress(c);
  expect(same(back, input)).toBe(true);
}

const int32 = fc.integer({ min: -2147483648, max: 2147483647 });
const structuredInts = fc.oneof(
  fc.array(int32, { maxLength: 300 }),
  fc.array(fc.integer({ min: -5, max: 5 }), { maxLength: 600 }),
  fc
    .tuple(int32, fc.array(fc.integer({ min: -1000, max: 1000 }), { maxLength: 500 }))
    .map(([s, steps]) => steps.map((d, i) => (s + d * i) | 0)),
  fc
    .array(fc.tuple(fc.integer({ min: -3, max: 3 }), fc.integer({ min: 1, max: 50 })), { maxLength: 40 })
    .map((runs) => runs.flatMap(([v, n]) => new Array(n).fill(v) as number[])),
  fc.constantFrom([-2147483648, 2147483647, -2147483648, 0, 2147483647], [0, -1, 1, -2147483648]),
);

describe("lossless on every input (property tests)", () => {
  it("random bytes, fast and balanced", async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 3000 }), fc.constantFrom("fast", "balanced"), async (b, level) => {
        await roundTrip(b, { level: level as "fast" });
      }),
      { numRuns: fuzzRuns(120) },
    );
  });

  it("random bytes and adversarial patterns at max", async () => {
    const adversarial = fc.oneof(
      fc.uint8Array({ maxLength: 600 }),
      fc.tuple(fc.uint8Array({ minLength: 1, maxLength: 9 }), fc.integer({ min: 1, max: 300 })).map(([p, n]) => {
        const out = new Uint8Array(p.length * n);
        for (let i = 0; i < n; i++) out.set(p, i * p.length);
        return out;
      }),
      fc.constantFrom(new Uint8Array(0), Uint8Array.of(0), Uint8Array.of(0xcf, 0x86), new Uint8Array(4096).fill(255)),
    );
    await fc.assert(
      fc.asyncProperty(adversarial, async (b) => {
        await roundTrip(b, { level: "max" });
      }),
      { numRuns: fuzzRuns(40) },
    );
  });

  it("structured int32 arrays through every integer chamber", async () => {
    const chambers: (ChamberName | undefined)[] = [
      undefined,
      "zrw",
      "delta",
      "zrw-v5",
      "zrw-v5-delta",
      "zrw-v5-dark-attractor",
      "zrw-v5-chunked",
    ];
    await fc.assert(
      fc.asyncProperty(structuredInts, fc.constantFrom(...chambers), fc.boolean(), async (vals, chamber, bare) => {
        await roundTrip(i32(vals), { level: "balanced", ...(chamber ? { chamber } : {}), bare });
      }),
      { numRuns: fuzzRuns(200) },
    );
  });

  it("float64 arrays of any bit pattern through the float chamber", async () => {
    const dbl = fc.oneof(
      fc.double(),
      fc.integer({ min: -100000, max: 100000 }).map((x) => x / 100),
      fc.constantFrom(-0, Number.NaN, Number.POSITIVE_INFINITY, 5e-324, 0.1 + 0.2),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(dbl, { maxLength: 400 }), fc.constantFrom("fast", "balanced"), async (vals, level) => {
        await roundTrip(f64(vals), { chamber: "float", level: level as "fast" });
        await roundTrip(f64(vals), { level: level as "fast" });
      }),
      { numRuns: fuzzRuns(100) },
    );
  });

  it("JSON documents (any whitespace) through the JSON chambers", async () => {
    const doc = fc
      .tuple(fc.json(), fc.constantFrom(undefined, 1, 2, "\t"))
      .map(([j, indent]) => JSON.stringify(JSON.parse(j), null, indent));
    await fc.assert(
      fc.asyncProperty(doc, fc.constantFrom("json_keys", "json_residual"), async (s, chamber) => {
        const b = utf8(s);
        try {
          await roundTrip(b, { chamber: chamber as ChamberName, level: "fast" });
        } catch (e) {
          // scalars at top level are not JSON containers: refused, never mis-coded
          if ((e as { code?: string }).code !== "codec_bad_input") throw e;
        }
        await roundTrip(b, { level: "balanced" });
      }),
      { numRuns: fuzzRuns(120) },
    );
  });

  it("unicode text through the context-mixing chamber", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: "grapheme", maxLength: 400 }), async (s) => {
        await roundTrip(utf8(s), { chamber: "text" });
      }),
      { numRuns: fuzzRuns(60) },
    );
  });
});
