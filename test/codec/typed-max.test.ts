/**
 * Typed arrays at max (issue #24, the whole-corpus run): the router also tries the text
 * chamber's context mixing on their bytes, after their typed chamber, and the text chamber gives
 * up early when its 64 KiB trial, scaled to the input, is far above the typed chamber's size.
 */
import { describe, expect, it } from "vitest";
import { GIVE_UP, SAMPLE, sampleStart, text } from "../../src/codec/chambers/text/index.js";
import { cmEncode } from "../../src/codec/entropy/cm.js";
import { compressWithReport, decompress } from "../../src/codec/index.js";
import { routeProfile } from "../../src/codec/router/index.js";
import { profileBytes } from "../../src/codec/router/profile.js";
import { rng } from "./helpers.js";

/** int32 "token ids": phrases of a small vocabulary repeated with variations (what a match model predicts and an order-0 coder does not) */
function tokenIds(n: number, seed: number): Uint8Array {
  const r = rng(seed);
  const phrases = Array.from({ length: 60 }, () =>
    Array.from({ length: 4 + Math.floor(r() * 12) }, () => Math.floor(r() ** 3 * 5000)),
  );
  const out = new Int32Array(n);
  for (let i = 0; i < n; ) {
    const p = phrases[Math.floor(r() * phrases.length)]!;
    for (const t of p) if (i < n) out[i++] = r() < 0.03 ? Math.floor(r() * 5000) : t;
  }
  return new Uint8Array(out.buffer);
}

/** an int32 random walk with i.i.d. steps: the typed chamber's order-0 coder is at the bound */
function walk(n: number, seed: number): Uint8Array {
  const r = rng(seed);
  const out = new Int32Array(n);
  let v = 0;
  for (let i = 0; i < n; i++) {
    v += Math.round((r() - 0.5) * 2000);
    out[i] = v;
  }
  return new Uint8Array(out.buffer);
}

describe("typed arrays at max", () => {
  it("the router tries context mixing after the typed chamber at max only", () => {
    const data = tokenIds(50_000, 1);
    const p = profileBytes(data);
    expect(p.data_class).toBe("int32");
    expect(routeProfile(p, "max").candidates).toEqual(["zrw", "text", "general"]);
    expect(routeProfile(p, "balanced").candidates).not.toContain("text");
    expect(routeProfile(p, "fast").candidates).toEqual(["zrw"]);
  });

  it("an int32 series of repeated phrases is coded by context mixing at max, smaller than zrw, and round-trips", async () => {
    const data = tokenIds(200_000, 2);
    const r = await compressWithReport(data, { level: "max" });
    expect(r.chamber).toBe("text");
    const zrw = r.candidates.find((c) => c.chamber === "zrw")!.bytes!;
    expect(r.container.length).toBeLessThan(zrw * 0.9);
    expect(Buffer.from(await decompress(r.container))).toEqual(Buffer.from(data));
  }, 60_000);

  it("the text chamber gives up on a typed array when its scaled trial is over GIVE_UP x the size to beat, and not otherwise", async () => {
    const data = walk(200_000, 3);
    // the trial: the smallest of models 10, 12 and 11 on the middle SAMPLE bytes, scaled to the input
    const sample = data.subarray(sampleStart(data.length), sampleStart(data.length) + SAMPLE);
    const trial = Math.min(...([10, 12, 11] as const).map((m) => cmEncode(sample, null, 0, m).length));
    const scaled = (trial * data.length) / SAMPLE;
    const below = Math.floor(scaled / GIVE_UP / 1.01);
    const above = Math.ceil((scaled / GIVE_UP) * 1.01);
    expect(await text.encode(data, { level: "max", dataClass: "int32", toBeat: below })).toBeNull();
    expect(await text.encode(data, { level: "max", dataClass: "float64", toBeat: below })).toBeNull();
    expect(await text.encode(data, { level: "max", dataClass: "int32", toBeat: above })).not.toBeNull();
    // no size to beat, or an untyped class: coded in full
    expect(await text.encode(data, { level: "max", dataClass: "int32" })).not.toBeNull();
    expect(await text.encode(data, { level: "max", dataClass: "binary", toBeat: below })).not.toBeNull();
  }, 60_000);

  it("through compress(): a random walk (i.i.d. steps) stays with zrw, context mixing tried, and round-trips", async () => {
    const data = walk(200_000, 4);
    const r = await compressWithReport(data, { level: "max" });
    expect(r.chamber).toBe("zrw");
    expect(r.candidates.map((c) => c.chamber)).toContain("text");
    expect(Buffer.from(await decompress(r.container))).toEqual(Buffer.from(data));
  }, 60_000);
});
