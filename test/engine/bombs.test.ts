import { createHash } from "node:crypto";
import { monitorEventLoopDelay } from "node:perf_hooks";
import zlib from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHAMBER_NAMES, type ChamberName, compress, decodePoolState, type Level } from "../../src/codec/index.js";
import { type TestApp, testApp } from "../support/app.js";

/**
 * Decompression bombs over HTTP (issue #9, item 8), at a small scale: tiny containers that expand
 * to MiBs, fired at once at a listening app while /healthz is polled. Every decode is admitted
 * (CODEC_DECODE_CONCURRENCY, 503 beyond), runs on the decode pool (off the event loop) and is
 * capped (output limit, output/container ratio). The full-scale figure: `npm run bench:bombs`.
 */

const MiB = 1024 * 1024;
const OUT = 4 * MiB; // each bomb's output
const OCTET = { "content-type": "application/octet-stream" };
const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

/** a framed container by hand: magic, version 1, level fast, chamber id, declared length, no params */
function handmade(chamber: number, declared: number, payload: number[]): Uint8Array {
  const len: number[] = [];
  let v = declared;
  while (v >= 0x80) {
    len.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  len.push(v);
  return Uint8Array.from([0xcf, 0x86, 1, 0, chamber, ...len, 0, ...payload, 0, 0, 0, 0]);
}
const ZRW = CHAMBER_NAMES.indexOf("zrw"); // chamber id of zrw

interface Bomb {
  name: string;
  container: Uint8Array;
  digest: string;
}

async function bombs(): Promise<Bomb[]> {
  const zeros = new Uint8Array(OUT);
  const ramp = new Int32Array(OUT / 4).map((_, i) => i);
  const ones = new Float64Array(OUT / 8).fill(1.5);
  const specs: [string, Uint8Array, { level: Level; chamber?: ChamberName }][] = [
    ["zrw zeros", zeros, { level: "fast", chamber: "zrw" }],
    ["zrw ramp", new Uint8Array(ramp.buffer), { level: "fast", chamber: "zrw" }],
    ["delta ramp", new Uint8Array(ramp.buffer), { level: "fast", chamber: "delta" }],
    ["float", new Uint8Array(ones.buffer), { level: "fast", chamber: "float" }],
    ["general zeros", zeros, { level: "fast", chamber: "general" }],
    ["chunked zeros", zeros, { level: "fast", chamber: "zrw-v5-chunked" }],
    ["stride8 zeros", zeros, { level: "fast", chamber: "zrw-v5-stride8" }],
    ["attractor zeros", zeros, { level: "fast", chamber: "zrw-v5-dark-attractor" }],
    ["detractor zeros", zeros, { level: "fast", chamber: "zrw-v5-dark-detractor" }],
    ["zrw-v5 zeros", zeros, { level: "fast", chamber: "zrw-v5" }],
  ];
  const out: Bomb[] = [];
  for (const [name, raw, opts] of specs) {
    const container = await compress(raw, opts);
    expect(container.length, name).toBeLessThan(1024); // tiny: > 4096× expansion
    out.push({ name, container, digest: sha(raw) });
  }
  return out;
}

describe("decompression bombs over a real socket", () => {
  let t: TestApp;
  let base: string;
  let list: Bomb[];
  beforeAll(async () => {
    list = await bombs();
    // caps small enough for a test; the ratio cap raised so that the bombs reach the decoders
    t = await testApp("sqlite", {
      CODEC_OUTPUT_LIMIT_BYTES: String(8 * MiB),
      CODEC_MAX_RATIO: "1000000000",
      CODEC_DECODE_CONCURRENCY: "2",
    });
    base = await t.app.listen({ port: 0, host: "127.0.0.1" });
  });
  afterAll(() => t.close());

  const post = (container: Uint8Array) =>
    fetch(`${base}/api/decompress`, { method: "POST", headers: OCTET, body: container });

  it("admits a bounded number at once, decodes off the event loop, keeps /healthz answering and RSS bounded", async () => {
    // warm up: the decode pool's workers start on first use
    const warm = await post(list[0]!.container);
    expect(warm.status).toBe(200);
    await warm.arrayBuffer();
    expect(decodePoolState().workers).toBeGreaterThan(0);

    const rss0 = process.memoryUsage().rss;
    let peak = rss0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 10);
    const health: number[] = [];
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const t0 = performance.now();
        const r = await fetch(`${base}/healthz`);
        await r.arrayBuffer();
        health.push(performance.now() - t0);
        expect(r.status).toBe(200);
        await new Promise((res) => setTimeout(res, 25));
      }
    })();
    const loop = monitorEventLoopDelay({ resolution: 5 });
    loop.enable();

    const fire = async (b: Bomb) => {
      const r = await post(b.container);
      const body = new Uint8Array(await r.arrayBuffer());
      return { b, status: r.status, headers: r.headers, body };
    };
    // the whole list, three times over, at once
    const answers = await Promise.all([...list, ...list, ...list].map(fire));
    loop.disable();
    polling = false;
    await poller;
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().rss);

    const ok = answers.filter((a) => a.status === 200);
    const busy = answers.filter((a) => a.status === 503);
    expect(ok.length + busy.length).toBe(answers.length);
    expect(ok.length).toBeGreaterThanOrEqual(2);
    expect(busy.length).toBeGreaterThan(0); // admission control: more than 2 at once are refused
    for (const a of busy) {
      expect(a.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(a.headers.get("retry-after")).toBe("2");
      expect(JSON.parse(Buffer.from(a.body).toString())).toMatchObject({
        code: "codec_capacity_unavailable",
        kind: "decode",
      });
    }
    for (const a of ok) {
      expect(a.body.length, a.b.name).toBe(OUT);
      expect(sha(a.body), a.b.name).toBe(a.b.digest);
    }
    // every health answer within 2 s (in practice a few ms), the loop never stalled on a decode
    expect(health.length).toBeGreaterThan(0);
    expect(Math.max(...health)).toBeLessThan(2000);
    if (process.env.BOMBS_DEBUG)
      console.log({
        health: Math.max(...health),
        loopMs: loop.max / 1e6,
        growthMiB: (peak - rss0) / MiB,
        ok: ok.length,
        busy: busy.length,
      });
    expect(loop.max / 1e6).toBeLessThan(500); // 20-30 ms here; generous for a shared machine
    // at most 2 decodes of 4 MiB (plus their intermediates, in the workers) at once
    expect((peak - rss0) / MiB).toBeLessThan(256);

    // the slots are free again: every chamber decodes, one after another, byte for byte
    for (const b of list) {
      const r = await post(b.container);
      expect(r.status, b.name).toBe(200);
      expect(sha(new Uint8Array(await r.arrayBuffer())), b.name).toBe(b.digest);
    }
  });

  it("admits the JSON forms (/api/omni, /api/web-codec) through the same gate", async () => {
    const data = Buffer.from(list[4]!.container).toString("base64");
    const rs = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        fetch(`${base}/${i % 2 ? "api/omni" : "api/web-codec"}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ op: "decompress", data, encoding: "base64" }),
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as { code?: string; data?: string } })),
      ),
    );
    expect(rs.some((r) => r.status === 503 && r.body.code === "codec_capacity_unavailable")).toBe(true);
    for (const r of rs.filter((x) => x.status === 200)) expect(Buffer.from(r.body.data!, "base64").length).toBe(OUT);
  });

  it("refuses a header that lies before allocating, and a short payload with a 422", async () => {
    // claims 2^40 bytes: over the output cap, refused from the header
    const huge = await post(handmade(ZRW, 2 ** 40, [0, 0]));
    expect(huge.status).toBe(413);
    expect(((await huge.json()) as { code: string }).code).toMatch(/^codec_(output_)?too_large$/);
    // claims 6 MiB (within the cap here) with two payload bytes: the decoder fails, no 5xx
    const short = await post(handmade(ZRW, 6 * MiB, [7, 7]));
    expect(short.status).toBe(422);
  });

  it("stops a classic brotli stream at the output cap", async () => {
    const br = zlib.brotliCompressSync(new Uint8Array(16 * MiB));
    const r = await fetch(`${base}/api/web-codec`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ op: "decompress", engine: "classic", data: br.toString("base64") }),
    });
    expect(r.status).toBe(413);
    expect(await r.json()).toMatchObject({ code: "codec_output_too_large", limit_bytes: 8 * MiB });
  });
});

describe("the output/container ratio cap (default CODEC_MAX_RATIO)", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp("sqlite", { CODEC_OUTPUT_LIMIT_BYTES: String(8 * MiB) });
  });
  afterAll(() => t.close());
  const decompress = (container: Uint8Array) =>
    t.app.inject({ method: "POST", url: "/api/decompress", headers: OCTET, payload: Buffer.from(container) });

  it("refuses tiny containers that restore MiBs, and lets 10,000 zero int32s through", async () => {
    const zeros = await compress(new Uint8Array(OUT), { level: "fast", chamber: "zrw" });
    const r = await decompress(zeros);
    expect(r.statusCode).toBe(413);
    expect(r.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(r.json()).toMatchObject({
      code: "codec_ratio_exceeded",
      bytes: OUT,
      compressed_bytes: zeros.length,
      max_ratio: 4096,
      ratio_floor_bytes: MiB,
    });
    // a lying header within the output cap is refused from the header too
    expect((await decompress(handmade(ZRW, 6 * MiB, [7, 7]))).json().code).toBe("codec_ratio_exceeded");
    // 10,000 zero int32s: 40,000 bytes in a 15-byte container (2,667×), under the floor anyway
    const small = await compress(new Uint8Array(40_000), { level: "max" });
    expect(small.length).toBeLessThan(20);
    const ok = await decompress(small);
    expect(ok.statusCode).toBe(200);
    expect(ok.rawPayload.length).toBe(40_000);
    // 4 MiB of data that expands less than 4096× decodes
    const walk = new Int32Array(OUT / 4);
    for (let i = 1, x = 0x9e3779b9; i < walk.length; i++) {
      x = (x * 1103515245 + 12345) >>> 0;
      walk[i] = walk[i - 1]! + ((x >>> 16) % 17) - 8;
    }
    const w = await compress(new Uint8Array(walk.buffer), { level: "fast" });
    expect((await decompress(w)).statusCode).toBe(200);
    // classic streams: the ratio stops zlib while it inflates
    const br = zlib.brotliCompressSync(new Uint8Array(4 * MiB));
    const cl = await t.app.inject({
      method: "POST",
      url: "/api/web-codec",
      payload: { op: "decompress", engine: "classic", data: br.toString("base64") },
    });
    expect(cl.statusCode).toBe(413);
    expect(cl.json()).toMatchObject({ code: "codec_ratio_exceeded", max_ratio: 4096 });
    expect((await t.app.inject({ method: "GET", url: "/api/omni" })).json().limits).toMatchObject({
      max_ratio: 4096,
      decode_concurrency: 2,
    });
  });
});
