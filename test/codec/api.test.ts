import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { describe, expect, it } from "vitest";
import {
  bench,
  compressStream,
  decompress,
  decompressStream,
  describe as describeEngine,
  profile,
  route,
} from "../../src/codec/index.js";
import { codeOf, f64, i32, rng, utf8 } from "./helpers.js";

async function collect(src: Uint8Array[], t: NodeJS.ReadWriteStream): Promise<Buffer> {
  const out: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _e, cb) {
      out.push(chunk);
      cb();
    },
  });
  await pipeline(Readable.from(src.map((b) => Buffer.from(b))), t, sink);
  return Buffer.concat(out);
}

describe("public API", () => {
  it("profile detects typed inputs and honours a declared type", () => {
    const r = rng(3);
    expect(profile(i32(Array.from({ length: 1000 }, () => Math.floor(r() * 1000)))).data_class).toBe("int32");
    expect(profile(f64(Array.from({ length: 1000 }, (_, i) => i / 10 + 0.05))).data_class).toBe("float64");
    expect(profile(utf8('{"a": [1, 2, 3]}')).data_class).toBe("json");
    expect(profile(utf8("plain words in a sentence.\n")).data_class).toBe("text");
    expect(profile(new Uint8Array(4096).map(() => Math.floor(r() * 256))).data_class).toBe("high_entropy");
    expect(profile(new Uint8Array(0)).data_class).toBe("empty");
    const declared = profile(utf8("abcdabcd"), "int32");
    expect(declared.data_class).toBe("int32");
    expect(declared.path).toBe("zrw");
    expect(declared.feats.declared).toBe("int32");
  });

  it("profile calls text UTF-8 only when it is strict UTF-8 (the WHATWG fatal decoder's rule)", () => {
    const words = "plain words in a sentence, again and again.\n".repeat(20);
    const textWith = (bytes: number[]) => Uint8Array.from([...utf8(words), ...bytes, ...utf8(words)]);
    // valid: multi-byte characters and a BOM
    expect(profile(textWith([0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9d, 0x84, 0x9e])).feats.utf8).toBe(true);
    expect(profile(Uint8Array.from([0xef, 0xbb, 0xbf, ...utf8(words)])).feats.utf8).toBe(true);
    // invalid: an overlong NUL, an encoded surrogate, a code point past U+10FFFF, a cut sequence
    for (const bad of [
      [0xc0, 0x80],
      [0xed, 0xa0, 0x80],
      [0xf4, 0x90, 0x80, 0x80],
      [0xe2, 0x82],
    ]) {
      const p = profile(textWith(bad));
      expect(p.feats.utf8).toBe(false);
      expect(p.data_class).not.toBe("text");
    }
  });

  it("route returns the chamber, candidates, label and reason per level", () => {
    const b = i32(Array.from({ length: 1000 }, (_, i) => i * i));
    const fast = route(b, { level: "fast" });
    expect(fast.candidates).toEqual([fast.chamber]);
    const max = route(b, { level: "max" });
    expect(max.candidates).toContain("general");
    expect(max.label).toBe(`omni/${max.chamber}`);
    expect(max.reason.length).toBeGreaterThan(5);
    expect(route(utf8("some text here"), { level: "balanced" }).candidates).not.toContain("text");
  });

  it("bench reports sizes, times and a round-trip verdict per method", async () => {
    const res = await bench(utf8("bench me ".repeat(300)), { levels: ["fast", "balanced"], peers: "all" });
    expect(res.roundtrip).toBe(true);
    expect(res.methods.map((m) => m.method)).toEqual([
      "omni-fast",
      "omni-balanced",
      "gzip-9",
      "brotli-11",
      "zstd-19",
      "xz-9",
    ]);
    for (const m of res.methods) {
      expect(m.bytes).toBeGreaterThan(0);
      expect(m.roundtrip).toBe(true);
      expect(m.compress_ms).toBeGreaterThanOrEqual(0);
    }
  });

  it("streams: chunked containers round-trip and hostile streams fail cleanly", async () => {
    const r = rng(9);
    const parts = Array.from({ length: 7 }, (_, k) =>
      k % 2 ? utf8(`chunk ${k} `.repeat(900)) : new Uint8Array(5000).map(() => Math.floor(r() * 4)),
    );
    const whole = Buffer.concat(parts.map((p) => Buffer.from(p)));
    const packed = await collect(parts, compressStream({ level: "balanced", chunkSize: 8192 }));
    expect(packed.length).toBeLessThan(whole.length);
    const back = await collect([packed.subarray(0, 100), packed.subarray(100)], decompressStream());
    expect(back.equals(whole)).toBe(true);
    await expect(collect([packed.subarray(0, packed.length - 3)], decompressStream())).rejects.toMatchObject({
      code: "codec_truncated",
    });
  });

  it("describe lists every chamber with a stable id", () => {
    const d = describeEngine();
    expect(d.chambers.length).toBe(17);
    expect(d.chambers.find((c) => c.name === "zrw")?.id).toBe(5);
    expect(d.levels).toEqual(["fast", "balanced", "max"]);
  });

  it("decompress rejects non-bytes", async () => {
    expect(await codeOf(decompress("nope" as never))).toBe("codec_bad_input");
  });
});

describe("bench:codec --quick", () => {
  it("runs on a folder, checks every round trip, prints the frontier and writes JSON + Markdown", {
    timeout: 180_000,
  }, () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "codec-bench-"));
    const corpus = path.join(dir, "corpus");
    mkdirSync(path.join(corpus, "text"), { recursive: true });
    mkdirSync(path.join(corpus, "int32"), { recursive: true });
    mkdirSync(path.join(corpus, "json"), { recursive: true });
    writeFileSync(path.join(corpus, "text", "a.txt"), "the quick brown fox jumps over the lazy dog\n".repeat(200));
    writeFileSync(
      path.join(corpus, "int32", "synth_random_walk.i32"),
      i32(Array.from({ length: 4000 }, (_, i) => (i * 7) % 13)),
    );
    writeFileSync(
      path.join(corpus, "json", "b.json"),
      JSON.stringify({ rows: Array.from({ length: 100 }, (_, i) => ({ i })) }),
    );
    const out = path.join(dir, "out");
    const res = spawnSync(
      process.execPath,
      [
        "--import",
        "tsx",
        "bench/codec.ts",
        "--quick",
        "--no-system",
        "--no-speedup",
        "--peers",
        "gzip",
        "--out",
        out,
        corpus,
      ],
      { encoding: "utf8", cwd: path.resolve(__dirname, "../..") },
    );
    expect(res.status, res.stderr).toBe(0);
    const report = JSON.parse(readFileSync(path.join(out, "codec-frontier-quick.json"), "utf8"));
    expect(report.meta.failures).toBe(0);
    expect(report.files.length).toBe(3);
    const names = report.methods.map((m: { name: string }) => m.name);
    expect(names).toEqual([
      "omni fast",
      "omni balanced",
      "omni max",
      ...Array.from({ length: 9 }, (_, i) => `gzip -${i + 1}`),
    ]);
    for (const f of report.files) {
      expect(Object.keys(f.cells).length).toBe(12);
      for (const cell of Object.values(f.cells) as { ok: boolean }[]) expect(cell.ok).toBe(true);
    }
    // every omni level has a pass/fail line for the frontier
    for (const level of ["fast", "balanced", "max"])
      expect(
        report.check.lines.some((l: { target: string }) => l.target.startsWith(`omni ${level} is on the frontier`)),
      ).toBe(true);
    expect(res.stdout).toMatch(/Frontier/);
    const md = readFileSync(path.join(out, "codec-frontier-quick.md"), "utf8");
    expect(md).toMatch(/## Checks/);
    expect(md).toMatch(/## Frontier/);
  });
});
