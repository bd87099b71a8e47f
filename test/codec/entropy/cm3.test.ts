/**
 * Context-mixing model 3 (src/codec/entropy/cm-wasm/model3.as.ts → model3.wasm): WebAssembly
 * only, written by the text chamber (layouts 6 and 7) until model 4 and by the JSON chambers (coder 6) at
 * max; the text chamber now writes models 4-6 (cm4.test.ts) and still decodes these.
 * Models 1 and 2 (older containers) keep their own build and TypeScript reference.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonResidual } from "../../../src/codec/chambers/json/index.js";
import { text } from "../../../src/codec/chambers/text/index.js";
import {
  cmDecode,
  cmDecodeJs,
  cmDecodeOffThread,
  cmEncode,
  cmEncodeAll,
  cmEncodeJs,
} from "../../../src/codec/entropy/cm.js";
import { CodecError } from "../../../src/codec/index.js";
import { fuzzRuns } from "../../support/fuzz.js";
import { codeOf, rng, utf8 } from "../helpers.js";

const hex = (a: Uint8Array): string => Buffer.from(a).toString("hex");

function prose(bytes: number, seed: number): Uint8Array {
  const words = ["lab", "phi", "codec", "model", "mixing", "context", "the", "of", "and", "bucket", "nibble"];
  const r = rng(seed);
  const parts: string[] = [];
  let len = 0;
  while (len < bytes) {
    const w = words[Math.floor(r() * words.length)]!;
    parts.push(w);
    len += w.length + 1;
  }
  return utf8(parts.join(" ").slice(0, bytes));
}

describe("context-mixing model 3", () => {
  it("round-trips random, repetitive and text inputs, with and without column ends", () => {
    const inputs = fc.oneof(
      fc.uint8Array({ maxLength: 3000 }),
      fc.string({ maxLength: 2000 }).map(utf8),
      fc
        .tuple(fc.uint8Array({ minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 100 }))
        .map(([unit, k]) => Uint8Array.from({ length: unit.length * k }, (_, i) => unit[i % unit.length]!)),
    );
    fc.assert(
      fc.property(inputs, fc.boolean(), (input, cols) => {
        // a 0-terminated value stream gets column ends, as the JSON chamber hands it to the model
        const colEnds = cols ? Uint32Array.of(3, 7, 1 << 20) : null;
        const coded = cmEncode(input, colEnds, 0, 3);
        expect(hex(cmDecode(coded, input.length, colEnds, null, 3))).toBe(hex(input));
      }),
      { numRuns: fuzzRuns(120) },
    );
  });

  it("codes otherwise than model 2, and smaller on repetitive prose", () => {
    const input = prose(200_000, 7);
    const m2 = cmEncode(input, null, 0, 2);
    const m3 = cmEncode(input, null, 0, 3);
    expect(hex(m3)).not.toBe(hex(m2));
    expect(m3.length).toBeLessThan(m2.length);
    // a model-2 decoder does not read a model-3 stream back (the version matters)
    let asModel2 = "";
    try {
      asModel2 = hex(cmDecode(m3, input.length, null, null, 2));
    } catch (e) {
      asModel2 = e instanceof CodecError ? e.code : String(e);
    }
    expect(asModel2).not.toBe(hex(input));
    expect(hex(cmDecode(m3, input.length, null, null, 3))).toBe(hex(input));
  });

  it("a model trained on a prefix decodes the stream that followed it, also on the worker pool", async () => {
    const data = prose(60_000, 9);
    const prime = 20_000;
    const [coded] = await cmEncodeAll([{ input: data, colEnds: null, primeLen: prime, model: 3 }]);
    const rest = data.subarray(prime);
    expect(hex(cmDecode(coded!, rest.length, null, data.subarray(0, prime), 3))).toBe(hex(rest));
    const off = await cmDecodeOffThread(coded!, rest.length, null, data.subarray(0, prime), 3);
    expect(hex(off)).toBe(hex(rest));
  });

  it("a truncated stream is codec_corrupt, never wrong bytes", async () => {
    const input = prose(30_000, 3);
    const cut = cmEncode(input, null, 0, 3).subarray(0, 500);
    expect(await codeOf(Promise.resolve().then(() => cmDecode(cut, input.length, null, null, 3)))).toBe(
      "codec_corrupt",
    );
    expect(await codeOf(cmDecodeOffThread(cut, input.length, null, null, 3))).toBe("codec_corrupt");
  });

  it("has no TypeScript twin: the reference refuses model 3 instead of writing other bits", () => {
    expect(() => cmEncodeJs(utf8("abc"), null, 0, 3)).toThrow(CodecError);
    expect(() => cmDecodeJs(new Uint8Array(8), 3, null, null, 3)).toThrow(CodecError);
  });

  it("the text chamber decodes layout 6 (model 3, written by the previous release) and layout 3 (model 2)", async () => {
    const input = prose(40_000, 4);
    const m3 = cmEncode(input, null, 0, 3);
    const ctx = { maxOutputBytes: 1 << 28, maxModelOutputBytes: 1 << 26 };
    expect(hex(await text.decode(Uint8Array.of(6, 0), m3, input.length, ctx))).toBe(hex(input));
    const old = cmEncode(input, null, 0, 2);
    expect(hex(await text.decode(Uint8Array.of(3, 0), old, input.length, ctx))).toBe(hex(input));
    expect(await codeOf(text.decode(Uint8Array.of(25, 0), old, input.length, ctx))).toBe("codec_bad_params");
  });

  it("the JSON chambers code both streams with model 7 or 9 (coders 7, 8) at max and round-trip", async () => {
    // coder 6 (model 3, written until codec library 1.3.0) decodes in the frozen containers
    // (test/codec/frozen/0.1.0+cm3/json_*.max.phi)
    const doc = utf8(
      JSON.stringify(Array.from({ length: 300 }, (_, i) => ({ id: i, name: `n${i % 17}`, v: (i * 37) % 101 }))),
    );
    const enc = await jsonResidual.encode(doc, { level: "max", dataClass: "json" });
    expect([7, 8]).toContain(enc!.params[0]);
    expect([7, 8]).toContain(enc!.params[1]);
    const ctx = { maxOutputBytes: 1 << 28, maxModelOutputBytes: 1 << 26 };
    expect(hex(await jsonResidual.decode(enc!.params, enc!.payload, doc.length, ctx))).toBe(hex(doc));
    expect(await codeOf(jsonResidual.decode(Uint8Array.of(9, 7), enc!.payload, doc.length, ctx))).toBe(
      "codec_bad_params",
    );
  });

  it("the committed model3.wasm is what `npm run build:wasm` builds from model3.as.ts", async () => {
    const dir = mkdtempSync(join(tmpdir(), "labphi-wasm3-"));
    const out = join(dir, "model3.wasm");
    const src = new URL("../../../src/codec/entropy/cm-wasm/", import.meta.url);
    const asc = new URL("../../../node_modules/.bin/asc", import.meta.url);
    const args = [`${src.pathname}model3.as.ts`, "-O3", "--runtime", "stub", "--noAssert", "--enable", "simd"];
    await promisify(execFile)(asc.pathname, [...args, "-o", out]);
    expect(hex(readFileSync(out))).toBe(hex(readFileSync(new URL("model3.wasm", src))));
  }, 60_000);
});
