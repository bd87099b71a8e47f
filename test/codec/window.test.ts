import { describe, expect, it } from "vitest";
import { compress, compressStream, decompress, decompressStream, inspect } from "../../src/codec/index.js";
import { cutChunks, mapOrdered, OrderedWindow } from "../../src/codec/window.js";
import { rng, utf8 } from "./helpers.js";

const later = <T>(ms: number, v: T): Promise<T> => new Promise((res) => setTimeout(() => res(v), ms));

describe("ordered window of independent chunks", () => {
  it("keeps at most `size` jobs in flight and returns results in order, whatever order they finish in", async () => {
    let running = 0;
    let peak = 0;
    const out = await mapOrdered(
      [30, 5, 20, 1, 10, 2],
      async (ms, i) => {
        running++;
        peak = Math.max(peak, running);
        await later(ms, null);
        running--;
        return i;
      },
      3,
    );
    expect(out).toEqual([0, 1, 2, 3, 4, 5]);
    expect(peak).toBe(3);
  });

  it("reports the first failure in order, after the results before it, and leaves no unhandled rejection", async () => {
    const w = new OrderedWindow<number>(2);
    const got: number[] = [];
    got.push(...(await w.add(later(20, 1))));
    got.push(...(await w.add(Promise.reject(new Error("second")))));
    expect(got).toEqual([1]);
    await expect(w.drain()).rejects.toThrow("second");
    await expect(
      mapOrdered([1, 2, 3], async (x) => (x === 1 ? later(10, x) : Promise.reject(new Error(`bad ${x}`)))),
    ).rejects.toThrow("bad 2");
  });
});

describe("cutting an input into chunks", () => {
  const input = new Uint8Array(10_000).map((_, i) => (i * 7) & 0xff);
  it("at fast, copies with buffers of their own (a view posted to a zstd worker clones its whole buffer)", () => {
    const parts = cutChunks(input, 4096, "fast");
    expect(parts.map((p) => p.length)).toEqual([4096, 4096, 1808]);
    for (const p of parts) {
      expect(p.buffer.byteLength).toBe(p.length);
      expect(p.byteOffset).toBe(0);
    }
    expect(Buffer.concat(parts)).toEqual(Buffer.from(input));
  });
  it("at balanced and max, views of the input (no copy)", () => {
    for (const level of ["balanced", "max"] as const) {
      const parts = cutChunks(input, 4096, level);
      expect(parts.every((p) => p.buffer === input.buffer)).toBe(true);
      expect(Buffer.concat(parts)).toEqual(Buffer.from(input));
    }
  });
});

describe("chunks coded and decoded at once", () => {
  const r = rng(5);
  const words = ["chunk", "window", "order", "stream", "the", "of", "worker", "codec", "lab", "phi"];
  const text = utf8(Array.from({ length: 16000 }, () => words[Math.floor(r() * words.length)]).join(" "));

  it("a chunked container of context-mixing chunks round-trips in order", async () => {
    const c = await compress(text, { level: "max", chunkSize: 16 * 1024 });
    const info = inspect(c);
    expect(info.chunked).toBe(true);
    expect(info.chambers.every((ch) => ch === "text")).toBe(true);
    expect(await decompress(c)).toEqual(text);
  }, 60_000);

  it("streams keep record order with several records in flight", async () => {
    const enc = compressStream({ level: "max", chunkSize: 8 * 1024 });
    const parts: Buffer[] = [];
    enc.on("data", (b: Buffer) => parts.push(b));
    const done = new Promise((res, rej) => enc.on("end", res).on("error", rej));
    for (let i = 0; i < text.length; i += 5000) enc.write(Buffer.from(text.subarray(i, i + 5000)));
    enc.end();
    await done;
    const dec = decompressStream();
    const outs: Buffer[] = [];
    dec.on("data", (b: Buffer) => outs.push(b));
    const done2 = new Promise((res, rej) => dec.on("end", res).on("error", rej));
    const all = Buffer.concat(parts);
    for (let i = 0; i < all.length; i += 3000) dec.write(all.subarray(i, i + 3000));
    dec.end();
    await done2;
    expect(Buffer.concat(outs).equals(Buffer.from(text))).toBe(true);
  }, 60_000);

  it("compress calls running at once do not affect each other (the stride hint travels with each call)", async () => {
    // large enough for max's guarded path, where the general chamber starts after other work
    const n = 300 * 1024;
    const records = new Uint8Array(n);
    for (let i = 0; i < n / 8; i++) {
      records[i * 8] = i & 255;
      records[i * 8 + 1] = (i >> 8) & 255;
      records[i * 8 + 4] = 42;
      records[i * 8 + 6] = Math.floor(r() * 4);
    }
    const prose = utf8(Array.from({ length: 70_000 }, () => words[Math.floor(r() * words.length)]).join(" ")).subarray(
      0,
      n,
    );
    const hex = (c: Uint8Array): string => Buffer.from(c).toString("hex");
    const alone = [hex(await compress(records)), hex(await compress(prose))];
    const together = (await Promise.all([compress(records), compress(prose)])).map(hex);
    expect(together).toEqual(alone);
  }, 60_000);
});
