import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cmDecode, cmDecodeJs, cmEncode, cmEncodeJs } from "../../src/codec/entropy/cm.js";
import { cmDecodeWasm, cmEncodeWasm } from "../../src/codec/entropy/cm-wasm.js";
import { CodecError } from "../../src/codec/index.js";
import { rng, utf8 } from "./helpers.js";

const hex = (a: Uint8Array): string => Buffer.from(a).toString("hex");

/** a 0-terminated value stream and its column ends, as the JSON chamber hands them to the model */
function columns(values: string[][]): { data: Uint8Array; colEnds: Uint32Array } {
  const parts: string[] = [];
  const ends: number[] = [];
  for (const col of values) {
    for (const v of col) parts.push(`${v}\0`);
    ends.push(parts.length);
  }
  return { data: utf8(parts.join("")), colEnds: Uint32Array.from(ends) };
}

describe("context-mixing model: WebAssembly build = TypeScript reference", () => {
  it("same bits on random, repetitive and text inputs, and both decoders invert it", () => {
    const inputs = fc.oneof(
      fc.uint8Array({ maxLength: 2000 }),
      fc.string({ maxLength: 1500 }).map(utf8),
      fc
        .tuple(fc.uint8Array({ minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 80 }))
        .map(([unit, k]) => Uint8Array.from({ length: unit.length * k }, (_, i) => unit[i % unit.length]!)),
    );
    fc.assert(
      fc.property(inputs, (input) => {
        const w = cmEncodeWasm(input, null);
        expect(w).not.toBeNull();
        expect(hex(w!)).toBe(hex(cmEncodeJs(input)));
        expect(hex(cmDecodeWasm(w!, input.length, null)!)).toBe(hex(input));
        expect(hex(cmDecodeJs(w!, input.length))).toBe(hex(input));
      }),
      { numRuns: 60 },
    );
  });

  it("same bits with column contexts (JSON values)", () => {
    const r = rng(7);
    const { data, colEnds } = columns([
      Array.from({ length: 300 }, (_, i) => `id-${i}`),
      Array.from({ length: 300 }, () => (r() * 1000).toFixed(2)),
      Array.from({ length: 300 }, () => (r() < 0.5 ? "true" : "false")),
    ]);
    const w = cmEncode(data, colEnds);
    expect(hex(w)).toBe(hex(cmEncodeJs(data, colEnds)));
    expect(hex(cmDecode(w, data.length, colEnds))).toBe(hex(data));
  });

  it("same bits across the host's 64 KiB slices (state carried between calls)", () => {
    const r = rng(3);
    const words = ["lab", "phi", "codec", "model", "mixing", "context", "the", "of", "and"];
    const text = Array.from({ length: 40000 }, () => words[Math.floor(r() * words.length)]).join(" ");
    const input = utf8(text);
    expect(input.length).toBeGreaterThan(3 * 65536);
    const w = cmEncode(input);
    expect(hex(w)).toBe(hex(cmEncodeJs(input)));
    expect(hex(cmDecode(w, input.length))).toBe(hex(input));
  });

  it("a truncated stream is codec_corrupt in both builds, never wrong bytes", () => {
    const input = utf8("a truncated context-mixing stream must not decode. ".repeat(200));
    const w = cmEncode(input);
    const cut = w.subarray(0, w.length >> 1);
    for (const decode of [() => cmDecode(cut, input.length), () => cmDecodeJs(cut, input.length)]) {
      let code = "ok";
      try {
        decode();
      } catch (e) {
        code = e instanceof CodecError ? e.code : String(e);
      }
      expect(code).toBe("codec_corrupt");
    }
  });

  it("the committed model.wasm is what `npm run build:wasm` builds from model.as.ts", async () => {
    const dir = mkdtempSync(join(tmpdir(), "labphi-wasm-"));
    const out = join(dir, "model.wasm");
    const src = new URL("../../src/codec/entropy/cm-wasm/", import.meta.url);
    const asc = new URL("../../node_modules/.bin/asc", import.meta.url);
    await promisify(execFile)(asc.pathname, [
      `${src.pathname}model.as.ts`,
      "-O3",
      "--runtime",
      "stub",
      "--noAssert",
      "-o",
      out,
    ]);
    expect(hex(readFileSync(out))).toBe(hex(readFileSync(new URL("model.wasm", src))));
  }, 60_000);
});
