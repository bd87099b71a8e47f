import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compress } from "../../src/codec/index.js";
import { generate } from "../../src/engine/generators.js";
import { type TestApp, testApp } from "../support/app.js";
import { fuzzRuns } from "../support/fuzz.js";

/**
 * Property: mutated, truncated and extended containers sent to the decompress routes get a 2xx
 * with the right bytes (when the mutation happens to keep a valid container) or a 4xx problem with
 * a stable code — never a 5xx, a hang or a crash.
 */
describe("decompress endpoints under hostile containers", () => {
  let t: TestApp;
  const seeds: Uint8Array[] = [];
  beforeAll(async () => {
    t = await testApp("sqlite", { CODEC_SLOW_LIMIT_BYTES: "65536" });
    const inputs = [
      generate("walk", 500, 1),
      generate("text", 2000, 2),
      new TextEncoder().encode(JSON.stringify({ a: [1, 2, 3], b: "x".repeat(50) })),
      generate("sine", 300),
    ];
    for (const input of inputs) {
      for (const level of ["fast", "balanced"] as const) seeds.push(await compress(input, { level }));
      seeds.push(await compress(input, { level: "fast", bare: true }));
    }
  });
  afterAll(() => t.close());

  it("never answers 5xx", async () => {
    const mutation = fc.record({
      seed: fc.nat({ max: 1000 }),
      flips: fc.array(fc.record({ at: fc.nat(), xor: fc.integer({ min: 1, max: 255 }) }), { maxLength: 4 }),
      cut: fc.option(fc.nat()),
      extra: fc.uint8Array({ maxLength: 8 }),
      binary: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(mutation, async (m) => {
        const base = seeds[m.seed % seeds.length] as Uint8Array;
        let bytes = Buffer.from(base);
        for (const f of m.flips)
          if (bytes.length) bytes[f.at % bytes.length] = (bytes[f.at % bytes.length] ?? 0) ^ f.xor;
        if (m.cut !== null) bytes = bytes.subarray(0, m.cut % (bytes.length + 1));
        bytes = Buffer.concat([bytes, Buffer.from(m.extra)]);
        const r = m.binary
          ? await t.app.inject({
              method: "POST",
              url: "/api/decompress",
              headers: { "content-type": "application/octet-stream" },
              payload: bytes,
            })
          : await t.app.inject({
              method: "POST",
              url: "/api/omni",
              payload: { op: "decompress", data: bytes.toString("base64") },
            });
        expect(r.statusCode, r.body.slice(0, 300)).toBeLessThan(500);
        if (r.statusCode >= 400) {
          expect(r.headers["content-type"]).toMatch(/^application\/problem\+json/);
          expect(r.json().code).toMatch(/^(codec_|bad_base64|body_required)/);
        }
      }),
      { numRuns: fuzzRuns(400) },
    );
  }, 120_000);
});
