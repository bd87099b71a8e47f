import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type * as Codec from "../../src/codec/index.js";
import { type TestApp, testApp } from "../support/app.js";

/**
 * The engine's own guarantees when the library misbehaves: a failed round trip is reported as
 * such (never ok: true), and a container that does not decode back is never handed out. The codec
 * is the real one; only two calls are wrapped to inject exactly one fault each.
 */
const faults = vi.hoisted(() => ({ benchFails: false, wrongContainerOnce: false }));

vi.mock("../../src/codec/index.js", async (importOriginal) => {
  const real = await importOriginal<typeof Codec>();
  return {
    ...real,
    bench: async (...args: Parameters<typeof real.bench>) => {
      const r = await real.bench(...args);
      if (!faults.benchFails) return r;
      const methods = r.methods.map((m) => (m.method === "brotli-11" ? { ...m, roundtrip: false } : m));
      return { ...r, methods, roundtrip: false };
    },
    compressWithReport: async (...args: Parameters<typeof real.compressWithReport>) => {
      if (!faults.wrongContainerOnce) return real.compressWithReport(...args);
      faults.wrongContainerOnce = false;
      const [bytes, options] = args;
      const other = Uint8Array.from(bytes);
      other[0] = (other[0] ?? 0) ^ 1; // a container of different bytes
      return real.compressWithReport(other, options);
    },
  };
});

describe("engine guarantees under injected library faults", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp("sqlite");
  });
  afterAll(() => t.close());

  it("bench and process report a failed round trip as not ok", async () => {
    faults.benchFails = true;
    try {
      const b = await t.app.inject({
        method: "POST",
        url: "/api/omni",
        payload: { op: "bench", data: "abc".repeat(50), level: "fast" },
      });
      expect(b.statusCode).toBe(200);
      expect(b.json()).toMatchObject({ ok: false, roundtrip: false, verdict: "round trip failed: brotli-11" });
      const p = await t.app.inject({
        method: "POST",
        url: "/api/process",
        payload: { corpus: "walk", n: 100, level: "fast" },
      });
      expect(p.json()).toMatchObject({ ok: false, roundtrip: false });
      expect(p.json().verdict).toMatch(/failed/);
      const w = await t.app.inject({
        method: "POST",
        url: "/api/web-codec",
        payload: { op: "bench", data: "abc", level: "fast" },
      });
      expect(w.json().ok).toBe(false);
      expect(w.json().counsel.brain).toMatch(/round trip FAILED for brotli-11/);
    } finally {
      faults.benchFails = false;
    }
  });

  it("never hands out a container that does not decode back: it falls back to stored", async () => {
    const data = "the quick brown fox ".repeat(20);
    faults.wrongContainerOnce = true;
    const c = await t.app.inject({
      method: "POST",
      url: "/api/omni",
      payload: { op: "compress", data, level: "fast" },
    });
    expect(c.statusCode).toBe(200);
    expect(c.json().chamber).toBe("high_entropy");
    const d = await t.app.inject({
      method: "POST",
      url: "/api/omni",
      payload: { op: "decompress", data: c.json().data, output_encoding: "utf8" },
    });
    expect(d.json().data).toBe(data);
  });
});
