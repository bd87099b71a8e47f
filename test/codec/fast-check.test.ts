/**
 * fast runs a typed array's chamber alone; where the profile's guess is wrong (a bitmap profiled as
 * int32, like calgary/pic), a zstd -3 of a sample lets plain zstd -3 run and win (src/codec/api/fast-check.ts).
 */
import { describe, expect, it } from "vitest";
import { FAST_CHECK_RATIO, fastSample } from "../../src/codec/api/fast-check.js";
import { compressWithReport, decompress, route } from "../../src/codec/index.js";
import { f64, i32, rng } from "./helpers.js";

/** a 1-bit image of 1,728-pixel rows: mostly blank, a dozen shapes repeated at random places */
function bitmap(rows: number, seed: number): Uint8Array {
  const r = rng(seed);
  const W = 216;
  const out = new Uint8Array(rows * W);
  const shapes = Array.from({ length: 12 }, () =>
    Uint8Array.from({ length: 24 }, () => (r() < 0.5 ? 0 : Math.floor(r() * 256))),
  );
  for (let y = 0; y < rows; y++) {
    if (r() < 0.6) continue;
    out.set(shapes[Math.floor(r() * shapes.length)]!, y * W + 8 * Math.floor(r() * 20));
  }
  return out;
}

describe("fast: typed chambers checked against plain zstd -3", () => {
  it("a bitmap profiled as int32 is coded by zstd -3 when that is smaller than zrw", async () => {
    const b = bitmap(1200, 1);
    expect(route(b, { level: "fast" }).candidates).toEqual(["zrw"]);
    const rep = await compressWithReport(b, { level: "fast" });
    const zrw = await compressWithReport(b, { level: "fast", chamber: "zrw" });
    expect(rep.chamber).toBe("general");
    expect(rep.container.length).toBeLessThan(zrw.container.length / 2);
    expect(rep.candidates.map((c) => c.chamber)).toEqual(["zrw", "general"]);
    expect(Buffer.from(await decompress(rep.container)).equals(Buffer.from(b))).toBe(true);
  });

  it("a small input is its own sample: the sample's zstd -3 is the payload", async () => {
    const b = bitmap(150, 2); // 32,400 B < 3 × 16 KiB
    expect(fastSample(b)).toBe(b);
    const rep = await compressWithReport(b, { level: "fast" });
    expect(rep.chamber).toBe("general");
    expect(Buffer.from(await decompress(rep.container)).equals(Buffer.from(b))).toBe(true);
  });

  it("where the typed chamber wins clearly, zstd -3 does not run in full", async () => {
    const r = rng(3);
    let v = 0;
    const walk = i32(Array.from({ length: 200_000 }, () => (v += Math.round((r() - 0.5) * 200))));
    const w = await compressWithReport(walk, { level: "fast" });
    expect(w.chamber).toBe("zrw");
    expect(w.candidates.map((c) => c.chamber)).toEqual(["zrw"]);
    const prices = f64(Array.from({ length: 100_000 }, () => Math.round(r() * 100_000) / 100));
    const p = await compressWithReport(prices, { level: "fast" });
    expect(p.chamber).toBe("float");
    expect(p.candidates.map((c) => c.chamber)).toEqual(["float"]);
    expect(FAST_CHECK_RATIO).toBeGreaterThan(1);
  });
});
