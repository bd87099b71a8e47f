import crypto from "node:crypto";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { XZ_CHECK_CRC32, xzEasyEncoder, xzStreamEncoder, zstdEncoder } from "../../src/codec/addons.js";
import { backendDecode, xzCompress, xzTuned, zstdCompress } from "../../src/codec/backends.js";

/**
 * src/codec/addons.ts codes through the addons' native bindings without their JavaScript wrappers
 * (a quick CLI start, issue #24 item 3). Containers must not change: the bytes are compared here
 * with the wrappers' own, on inputs that exercise the wrappers' special cases (empty input, the
 * "YZ" pairs at which lzma-native's stream splits its input, inputs larger than one output buffer).
 */

const require = createRequire(import.meta.url);
const root = path.resolve(import.meta.dirname, "../..");

function inputs(): Uint8Array[] {
  const rnd = (n: number, seed: number) => {
    const out = new Uint8Array(n);
    let x = seed;
    for (let i = 0; i < n; i++) {
      x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
      out[i] = x >>> 24;
    }
    return out;
  };
  const text = fs.readFileSync(path.join(root, "docs/codec.md"));
  const yz = Buffer.from("xyzYZ".repeat(3000));
  return [
    new Uint8Array(0),
    Uint8Array.of(0x59),
    text.subarray(0, 1024),
    yz,
    rnd(200_000, 7), // incompressible, several output buffers
    Buffer.concat([text, rnd(70_000, 3), Buffer.alloc(300_000, 9)]),
  ];
}

describe("addons: the native bindings give the wrappers' bytes", () => {
  it("xz: liblzma's easy encoder through the binding = lzma-native's compress() with the options backends.ts gives it", async () => {
    const easy = xzEasyEncoder();
    expect(easy).not.toBeNull();
    const lzma = require("lzma-native") as {
      CHECK_NONE: number;
      FILTER_LZMA2: unknown;
      compress(b: Buffer, o: unknown, cb: (out: Buffer | undefined, err?: Error) => void): void;
    };
    for (const data of inputs()) {
      const ref = await new Promise<Buffer>((resolve, reject) =>
        lzma.compress(
          Buffer.from(data),
          // what backends.ts passed before this change (lzma-native reads neither filters nor CHECK_NONE)
          { filters: [{ id: lzma.FILTER_LZMA2, options: { preset: 9, dict_size: 1 << 16 } }], check: lzma.CHECK_NONE },
          (out, err) => (err || !out ? reject(err ?? new Error("xz failed")) : resolve(out)),
        ),
      );
      const mine = await easy!(data, 6, XZ_CHECK_CRC32);
      expect(Buffer.from(mine).equals(ref), `${data.length} bytes`).toBe(true);
      const viaBackend = await xzCompress(data, 9);
      expect(Buffer.from(viaBackend!).equals(ref)).toBe(true);
      expect(Buffer.from(await backendDecode(3, viaBackend!, data.length)).equals(Buffer.from(data))).toBe(true);
    }
  }, 60_000);

  it("xz with a filter chain: liblzma's stream encoder through the binding = lzma-native's streamEncoder stream", async () => {
    const enc = xzStreamEncoder();
    expect(enc).not.toBeNull();
    const lzma = require("lzma-native") as {
      FILTER_LZMA2: string;
      FILTER_X86: string;
      createStream(coder: string, o: unknown): { on(e: string, f: (x: never) => void): void; end(b: Buffer): void };
    };
    expect(enc!.FILTER_LZMA2).toBe(lzma.FILTER_LZMA2);
    expect(enc!.FILTER_X86).toBe(lzma.FILTER_X86);
    const viaWrapper = (data: Uint8Array, filters: unknown[], synchronous: boolean) =>
      new Promise<Buffer>((resolve, reject) => {
        const st = lzma.createStream("streamEncoder", { filters, check: 1, synchronous });
        const parts: Buffer[] = [];
        st.on("data", (c: Buffer) => parts.push(c));
        st.on("error", (e: Error) => reject(e));
        st.on("end", () => resolve(Buffer.concat(parts)));
        st.end(Buffer.from(data));
      });
    const lzma2 = (dictSize: number, lc: number) => ({
      id: lzma.FILTER_LZMA2,
      options: { dictSize, lc, lp: 0, pb: 2, mode: 2, niceLen: 273, mf: 0x14, depth: 512 },
    });
    for (const data of inputs())
      for (const [filters, synchronous] of [
        [[lzma2(1 << 16, 3)], false],
        [[lzma2(1 << 20, 0)], true],
        [[{ id: lzma.FILTER_X86 }, lzma2(1 << 18, 3)], false],
      ] as const) {
        const ref = await viaWrapper(data, [...filters], synchronous);
        const mine = await enc!.encode(data, [...filters], 1, synchronous);
        expect(Buffer.from(mine).equals(ref), `${data.length} bytes, ${filters.length} filters`).toBe(true);
      }
    // the backend that uses it (balanced), and its decoder
    for (const x86 of [false, true]) {
      const data = inputs()[5]!;
      const out = await xzTuned(data, { x86 });
      expect(Buffer.from(await backendDecode(3, out!, data.length)).equals(Buffer.from(data))).toBe(true);
    }
  }, 120_000);

  it("zstd: ZSTD_compress2 through the binding = zstd-napi's compress() at each level the codec uses", async () => {
    const enc = zstdEncoder();
    expect(enc).not.toBeNull();
    const zstd = require("zstd-napi") as { compress(b: Buffer, p: { compressionLevel: number }): Buffer };
    for (const data of inputs())
      for (const level of [1, 3, 19]) {
        const ref = zstd.compress(Buffer.from(data), { compressionLevel: level });
        expect(Buffer.from(enc!(data, level)).equals(ref), `${data.length} bytes, level ${level}`).toBe(true);
      }
    // the backend (below the worker threshold: in this thread) and its decoder
    const small = inputs()[2]!;
    const z = await zstdCompress(small, 3);
    expect(Buffer.from(z!).equals(zstd.compress(Buffer.from(small), { compressionLevel: 3 }))).toBe(true);
    expect(Buffer.from(await backendDecode(2, z!, small.length)).equals(Buffer.from(small))).toBe(true);
  });

  it("an output the caller keeps is its own copy (the shared context's buffer is not handed out)", () => {
    const enc = zstdEncoder()!;
    const a = enc(crypto.randomBytes(1000), 3);
    const copy = Buffer.from(a);
    enc(crypto.randomBytes(1000), 3);
    expect(Buffer.from(a).equals(copy)).toBe(true);
  });
});
