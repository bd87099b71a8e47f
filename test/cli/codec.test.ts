import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.js";
import { inspect } from "../../src/codec/index.js";
import { generate } from "../../src/engine/generators.js";

interface Run {
  code: number;
  out: Buffer;
  err: string;
}

async function cli(args: string[], stdin: Buffer | null = null): Promise<Run> {
  const input = new PassThrough();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: Buffer[] = [];
  let err = "";
  stdout.on("data", (c: Buffer) => out.push(c));
  stderr.on("data", (c) => {
    err += String(c);
  });
  if (stdin) {
    // feed in pieces, as a pipe would
    for (let i = 0; i < stdin.length; i += 65536) input.write(stdin.subarray(i, i + 65536));
  }
  input.end();
  const code = await runCli(args, { stdin: input, stdout, stderr, env: {} });
  return { code, out: Buffer.concat(out), err };
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-cli-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const file = (name: string, bytes?: Uint8Array | string) => {
  const p = path.join(dir, name);
  if (bytes !== undefined) fs.writeFileSync(p, bytes);
  return p;
};
function randomBytes(n: number, seed: number): Buffer {
  const b = Buffer.alloc(n);
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    b[i] = x >>> 24;
  }
  return b;
}

describe("labphi compress / decompress / profile / bench", () => {
  it("prints help for every codec command", async () => {
    for (const [name, needle] of [
      ["compress", "labphi compress [FILE] [-o OUT]"],
      ["decompress", "labphi decompress [FILE] [-o OUT]"],
      ["profile", "labphi profile [FILE]"],
      ["bench", "labphi bench FILE…"],
    ] as const) {
      const r = await cli([name, "--help"]);
      expect(r.code).toBe(0);
      expect(r.out.toString()).toContain(needle);
      if (name !== "profile") expect(r.out.toString()).toMatch(/--level|--format/);
    }
    const overview = await cli(["--help"]);
    for (const name of ["compress", "decompress", "profile", "bench"])
      expect(overview.out.toString()).toContain(`  ${name}`);
  });

  it("round-trips stdin → stdout at every level (binary, text, empty)", async () => {
    const inputs = [
      randomBytes(5000, 1),
      Buffer.from("hello, world\n".repeat(300)),
      Buffer.alloc(0),
      Buffer.from(generate("walk", 3000)),
    ];
    for (const level of ["fast", "balanced", "max"]) {
      for (const input of inputs) {
        const c = await cli(["compress", "--level", level], input);
        expect(c.code, c.err).toBe(0);
        expect(inspect(new Uint8Array(c.out)).level).toBe(level);
        expect(c.err).toMatch(/compress: .* bytes/);
        expect(c.out.length).toBeLessThanOrEqual(input.length + 16);
        const d = await cli(["decompress", "-q"], c.out);
        expect(d.code, d.err).toBe(0);
        expect(d.out.equals(input)).toBe(true);
        expect(d.err).toBe("");
      }
    }
  });

  it("compresses FILE -o OUT and back, bare mode, no temporary files left", async () => {
    const src = file("walk.i32", generate("walk", 20_000, 4));
    const out = file("walk.omni");
    const back = file("walk.back");
    expect((await cli(["compress", src, "-o", out, "--level", "fast"])).code).toBe(0);
    expect((await cli(["decompress", out, "--output", back])).code).toBe(0);
    expect(fs.readFileSync(back).equals(fs.readFileSync(src))).toBe(true);
    const ramp = file("ramp.i32", generate("ramp", 10_000));
    const bare = await cli(["compress", ramp, "--bare", "-q"]); // level max: ≤ 8 bytes
    expect(bare.code).toBe(0);
    expect(bare.out.length).toBeLessThanOrEqual(8);
    const restored = await cli(["decompress"], bare.out);
    expect(restored.out.equals(fs.readFileSync(ramp))).toBe(true);
    expect(fs.readdirSync(dir).filter((f) => f.includes(".tmp-"))).toEqual([]);
  });

  it("streams inputs larger than one chunk, with progress on stderr, from a file and from stdin", async () => {
    const big = Buffer.concat([Buffer.from("A sentence about compression. ".repeat(30_000)), randomBytes(300_000, 9)]);
    expect(big.length).toBeGreaterThan(1024 * 1024);
    const src = file("big.bin", big);
    const out = file("big.omni");
    const c = await cli(["compress", src, "-o", out, "--level", "fast", "--chunk-size", "256K"]);
    expect(c.code, c.err).toBe(0);
    expect(c.err).toMatch(/compress: 1\.0 MiB \/ 1\.1 MiB \(\d+%\)/);
    expect(c.err).toMatch(/as a stream of 0\.3 MiB chunks/);
    const d = await cli(["decompress", out]);
    expect(d.code, d.err).toBe(0);
    expect(d.out.equals(big)).toBe(true);
    const viaStdin = await cli(["compress", "--level", "fast", "--chunk-size", "100000", "-q"], big);
    expect(viaStdin.code).toBe(0);
    const d2 = await cli(["decompress", "-q", "--format", "stream"], viaStdin.out);
    expect(d2.out.equals(big)).toBe(true);
    const tooBigForBare = await cli(["compress", src, "--bare", "--chunk-size", "256K", "-o", file("x.omni")]);
    expect(tooBigForBare.code).toBe(2);
  });

  it("refuses bad usage (exit 2) and damaged input (exit 1, no output file)", async () => {
    for (const args of [
      ["compress", "--level", "ultra"],
      ["compress", "--frobnicate"],
      ["compress", "a", "b"],
      ["compress", "--chunk-size", "12"],
      ["compress", "--type", "mp3"],
      ["decompress", "--format", "zip"],
      ["bench"],
      ["bench", "x", "--peers", "some"],
      ["profile", "--level"],
    ]) {
      const r = await cli(args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.err).toMatch(/--help/);
    }
    const good = (await cli(["compress", "-q", "--level", "fast"], Buffer.from("abc".repeat(100)))).out;
    const damaged = Buffer.from(good);
    damaged[damaged.length - 2] = (damaged[damaged.length - 2] ?? 0) ^ 0x55;
    const target = file("never.out");
    const r = await cli(["decompress", file("damaged.omni", damaged), "-o", target]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/codec_/);
    expect(fs.existsSync(target)).toBe(false);
    const missing = await cli(["compress", path.join(dir, "nope")]);
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/no such file/);
  });

  it("profiles a file (text and --json)", async () => {
    const src = file("p.i32", generate("walk", 2000, 2));
    const r = await cli(["profile", src]);
    expect(r.code).toBe(0);
    expect(r.out.toString()).toMatch(/data_class\s+int32/);
    expect(r.out.toString()).toMatch(/route\s+omni\/zrw at level max/);
    const j = await cli(["profile", "--json", "--level", "fast"], Buffer.from('{"a":[1,2,3]}'));
    const body = JSON.parse(j.out.toString());
    expect(body).toMatchObject({ data_class: "json", route: { level: "fast" } });
    expect(body.route.candidates).toHaveLength(1);
  });

  it("benches files with a round-trip verdict", async () => {
    const a = file("b1.txt", "the rain in spain falls mainly on the plain\n".repeat(200));
    const b = file("b2.i32", generate("sine", 4000));
    const r = await cli(["bench", a, b, "--level", "fast", "--peers", "classic", "--json", "-q"]);
    expect(r.code, r.err).toBe(0);
    const results = JSON.parse(r.out.toString());
    expect(results).toHaveLength(2);
    for (const x of results) {
      expect(x.roundtrip).toBe(true);
      expect(x.methods.map((m: { method: string }) => m.method)).toEqual(["omni-fast", "gzip-9", "brotli-11"]);
    }
    const table = await cli(["bench", a, "--level", "fast", "--peers", "classic"]);
    expect(table.out.toString()).toMatch(/method\s+bytes\s+ratio\s+comp MB\/s\s+dec MB\/s\s+round trip/);
    expect(table.err).toMatch(/bench: \[1\/1\]/);
  });

  it("works as a real process: stdin → stdout through tsx", () => {
    const require = createRequire(import.meta.url);
    const tsx = require.resolve("tsx/cli");
    const main = path.resolve("src/cli/main.ts");
    const input = randomBytes(20_000, 3);
    const c = spawnSync(process.execPath, [tsx, main, "compress", "--level", "fast", "-q"], { input });
    expect(c.status, String(c.stderr)).toBe(0);
    const d = spawnSync(process.execPath, [tsx, main, "decompress"], { input: c.stdout });
    expect(d.status, String(d.stderr)).toBe(0);
    expect(Buffer.from(d.stdout).equals(input)).toBe(true);
    expect(String(d.stderr)).toMatch(/decompress: .* → 20,000 bytes/);
  }, 60_000);
});
