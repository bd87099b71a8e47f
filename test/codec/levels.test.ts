/**
 * What each level does (issue #24): fast and balanced code through zstd (fast decoders, no
 * context mixing), int32 arrays at fast go through zrw, inputs of 8 MiB and more are cut
 * into independent chunks at fast and balanced, and the zstd worker threads give the same bytes
 * as the calling thread. No timing here: the speeds are measured by `npm run bench:codec`.
 */
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { backendDecode, terminateZstdPool, ZSTD_WORKER_MIN, zstdCompress } from "../../src/codec/backends.js";
import { general } from "../../src/codec/chambers/general/index.js";
import { POOL_SIZE } from "../../src/codec/entropy/cm-pool.js";
import { compressWithReport, decompress, inspect, route } from "../../src/codec/index.js";
import {
  autoChunkSize,
  CHUNK_WINDOW,
  chunkWindow,
  FAST_CHUNK_BYTES,
  PARALLEL_CHUNK_BYTES,
  PARALLEL_MIN_BYTES,
} from "../../src/codec/window.js";
import { codeOf, i32, rng, utf8 } from "./helpers.js";

const zstd = createRequire(import.meta.url)("zstd-napi") as {
  compress(b: Uint8Array, p: { compressionLevel: number }): Buffer;
};

const r = rng(24);
const words = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "lambda", "theta", "zeta"];
const prose = (n: number): Uint8Array => {
  const parts: string[] = [];
  let len = 0;
  while (len < Math.min(n, 1 << 20)) {
    const w = `${words[Math.floor(r() * words.length)]}${Math.floor(r() * 1000)} `;
    parts.push(w);
    len += w.length;
  }
  // longer inputs repeat a 1 MiB block (quick to build; zstd still has to find the repeats)
  const block = utf8(parts.join(""));
  const out = new Uint8Array(n);
  for (let o = 0; o < n; o += block.length) out.set(block.subarray(0, Math.min(block.length, n - o)), o);
  return out;
};

describe("levels", () => {
  it("the general chamber codes with zstd at fast, the smaller of brotli-11 and xz at balanced (test/codec/balanced.test.ts), brotli or xz at max", async () => {
    const text = prose(20_000);
    const fast = await general.encode(text, { level: "fast", dataClass: "text" });
    const balanced = await general.encode(text, { level: "balanced", dataClass: "text", stride: 4 });
    const binary = await general.encode(text, { level: "balanced", dataClass: "binary" });
    const numeric = await general.encode(text, { level: "balanced", dataClass: "int32" });
    const max = await general.encode(text, { level: "max", dataClass: "text" });
    expect(fast!.params[0]).toBe(2); // zstd
    expect(balanced!.params[1]).toBe(0); // no byte lanes for text
    for (const e of [balanced, binary, numeric]) expect([0, 3]).toContain(e!.params[0]); // brotli-11 or xz
    expect([0, 3]).toContain(max!.params[0]); // brotli or xz
    expect(balanced!.payload.length).toBeLessThan(fast!.payload.length);
    for (const e of [fast, balanced, binary, numeric, max])
      expect(Buffer.from(await general.decode(e!.params, e!.payload, text.length, ctx))).toEqual(Buffer.from(text));
  });

  it("int32 arrays at fast go through zrw's one-pass coder (zrw first at balanced and max too)", async () => {
    let a = 0;
    const walk = i32(Array.from({ length: 50_000 }, () => (a += Math.floor(r() * 201) - 100)));
    expect(route(walk, { level: "fast" }).candidates).toEqual(["zrw"]);
    expect(route(walk, { level: "balanced" }).candidates[0]).toBe("zrw");
    const rep = await compressWithReport(walk, { level: "fast" });
    expect(rep.chamber).toBe("zrw");
    expect(Buffer.from(await decompress(rep.container))).toEqual(Buffer.from(walk));
    // the general chamber still codes int32 arrays as 4-byte lanes at fast (containers of 1.4.0)
    const enc = await general.encode(walk, { level: "fast", dataClass: "int32" });
    expect([...enc!.params]).toEqual([2, 4]);
    expect(rep.compressed_bytes).toBeLessThan(enc!.payload.length);
  });

  it("zstd on the worker threads gives the bytes of the calling thread", async () => {
    const big = prose(ZSTD_WORKER_MIN + 12_345);
    try {
      for (const level of [3, 19]) {
        const [a, b] = await Promise.all([zstdCompress(big, level), zstdCompress(big.slice().reverse(), level)]);
        expect(Buffer.from(a!)).toEqual(zstd.compress(big, { compressionLevel: level }));
        expect(Buffer.from(b!)).toEqual(zstd.compress(big.slice().reverse(), { compressionLevel: level }));
      }
    } finally {
      await terminateZstdPool();
    }
  });

  it("a zstd stream longer or shorter than declared is refused (the one-shot decoder stays bounded)", async () => {
    const data = prose(5000);
    const z = zstd.compress(data, { compressionLevel: 3 });
    expect(Buffer.from(await backendDecode(2, z, data.length))).toEqual(Buffer.from(data));
    expect(await codeOf(backendDecode(2, z, data.length - 1))).toBe("codec_corrupt");
    expect(await codeOf(backendDecode(2, z, data.length + 1))).toBe("codec_corrupt");
    expect(await codeOf(backendDecode(2, z.subarray(0, z.length - 3), data.length))).toBe("codec_corrupt");
  });

  it("inputs of 8 MiB and more are cut into independent chunks (2 MiB at fast, 4 MiB at balanced), not at max", () => {
    expect(autoChunkSize("fast", PARALLEL_MIN_BYTES, false)).toBe(FAST_CHUNK_BYTES);
    expect(FAST_CHUNK_BYTES).toBe(2 * 1024 * 1024);
    expect(PARALLEL_CHUNK_BYTES).toBe(4 * 1024 * 1024);
    // at fast, more chunks in flight than workers: the zstd pool always has the next one queued
    expect(chunkWindow("fast")).toBeGreaterThanOrEqual(4);
    expect(chunkWindow("fast")).toBeGreaterThanOrEqual(2 * POOL_SIZE);
    expect(chunkWindow("balanced")).toBe(CHUNK_WINDOW);
    expect(chunkWindow("max")).toBe(CHUNK_WINDOW);
    expect(autoChunkSize("balanced", PARALLEL_MIN_BYTES + 1, false)).toBe(PARALLEL_CHUNK_BYTES);
    expect(autoChunkSize("fast", PARALLEL_MIN_BYTES - 1, false)).toBeUndefined();
    expect(autoChunkSize("max", 64 * 1024 * 1024, false)).toBeUndefined();
    expect(autoChunkSize("fast", 64 * 1024 * 1024, true)).toBeUndefined();
  });

  it("compress() of a 9 MiB input at fast writes a chunked container that decodes byte for byte", {
    timeout: 120_000,
  }, async () => {
    const big = prose(9 * 1024 * 1024);
    try {
      const rep = await compressWithReport(big, { level: "fast" });
      expect(rep.chamber).toBe("chunked");
      const info = inspect(rep.container);
      expect(info.chunked).toBe(true);
      expect(info.chambers.length).toBe(5); // 2 MiB chunks at fast
      const back = await decompress(rep.container, { maxOutputBytes: 16 * 1024 * 1024 });
      expect(Buffer.compare(Buffer.from(back), Buffer.from(big))).toBe(0); // (toEqual walks 9 MiB slowly)
    } finally {
      await terminateZstdPool();
    }
  });
});

const ctx = { maxOutputBytes: 1 << 30, maxModelOutputBytes: 1 << 26 };
