import zlib from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decompress } from "../../src/codec/index.js";
import { type TestApp, testApp } from "../support/app.js";

/** POST /api/web-codec { op: "compress", peers: true }: measured gzip-9 and brotli-11 sizes of the same input. */

const SLOW = 8192;
const b64 = (b: Uint8Array | string) => Buffer.from(b).toString("base64");

/** The peers as anyone measures them with node:zlib (gzip level 9, brotli quality 11 with a size hint). */
function measured(bytes: Buffer) {
  return {
    "gzip-9": zlib.gzipSync(bytes, { level: 9 }).length,
    "brotli-11": zlib.brotliCompressSync(bytes, {
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: 11,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
      },
    }).length,
  };
}

function prose(n: number): Buffer {
  const words = ["omni", "chamber", "barrel", "lossless", "brotli", "gzip", "route", "the", "of", "data"];
  let s = "";
  let x = 7;
  while (s.length < n) {
    x = (x * 1103515245 + 12345) % 2147483648;
    s += `${words[x % words.length]} `;
  }
  return Buffer.from(s.slice(0, n));
}

describe("web codec peers (gzip-9 and brotli-11 sizes of the same input)", () => {
  let t: TestApp;
  const web = (payload: Record<string, unknown>) => t.app.inject({ method: "POST", url: "/api/web-codec", payload });

  beforeAll(async () => {
    t = await testApp("sqlite", { CODEC_SLOW_LIMIT_BYTES: String(SLOW), CODEC_BODY_LIMIT_BYTES: "131072" });
  });
  afterAll(() => t.close());

  it("omni compress with peers: true answers the measured sizes besides its own container", async () => {
    const bytes = prose(6000);
    for (const level of ["fast", "balanced", "max"] as const) {
      const r = await web({ op: "compress", data: b64(bytes), encoding: "base64", level, peers: true });
      expect(r.statusCode).toBe(200);
      const body = r.json();
      expect(body).toMatchObject({ engine: "omni", method: "omni", level, original_bytes: bytes.length });
      expect(body.sizes).toEqual(measured(bytes));
      // the container is still the omni one, and decodes to the input
      const back = await decompress(Buffer.from(body.data, "base64"));
      expect(Buffer.from(back).equals(bytes)).toBe(true);
      expect(body.compressed_bytes).toBe(Buffer.from(body.data, "base64").length);
    }
  });

  it("different inputs give different peer sizes (measured, not estimated)", async () => {
    const random = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 2654435761) >>> 24));
    const text = prose(3000);
    const a = (await web({ op: "compress", data: b64(random), encoding: "base64", peers: true })).json();
    const b = (await web({ op: "compress", data: text.toString("utf8"), peers: true })).json();
    expect(a.sizes).toEqual(measured(random));
    expect(b.sizes).toEqual(measured(text));
    expect(a.sizes["gzip-9"]).not.toBe(b.sizes["gzip-9"]);
  });

  it("without peers the omni answer is unchanged: no sizes field", async () => {
    const r = await web({ op: "compress", data: "hello hello hello hello" });
    expect(r.statusCode).toBe(200);
    expect(r.json()).not.toHaveProperty("sizes");
    const off = await web({ op: "compress", data: "hello hello hello hello", peers: false });
    expect(off.json()).not.toHaveProperty("sizes");
  });

  it("classic keeps its sizes with or without peers", async () => {
    const bytes = prose(4000);
    const r = await web({ op: "compress", engine: "classic", data: bytes.toString("utf8"), peers: true });
    expect(r.statusCode).toBe(200);
    expect(r.json().sizes).toEqual(measured(bytes));
  });

  it("peers take bench's input limit, even at level fast; fast alone still takes more", async () => {
    const big = prose(SLOW + 1);
    const fast = await web({ op: "compress", data: big.toString("utf8"), level: "fast" });
    expect(fast.statusCode).toBe(200);
    const r = await web({ op: "compress", data: big.toString("utf8"), level: "fast", peers: true });
    expect(r.statusCode).toBe(413);
    expect(r.headers["content-type"]).toContain("application/problem+json");
    expect(r.json()).toMatchObject({ code: "codec_input_too_large", limit_bytes: SLOW, bytes: SLOW + 1 });
    expect(r.json().detail).toContain("compress with peers");
  });

  it("a non-boolean peers is a 400 validation problem", async () => {
    const r = await web({ op: "compress", data: "x", peers: "yes" });
    expect(r.statusCode).toBe(400);
    expect(r.json().code).toBe("validation_failed");
  });

  it("OpenAPI documents the request field and the answer's sizes", async () => {
    const doc = (await t.app.inject({ method: "GET", url: "/openapi.yaml" })).body;
    expect(doc).toContain("also measure the gzip-9 and brotli-11 sizes of the same input");
    expect(doc).toContain("measured sizes of the same input with brotli-11 and gzip-9");
  });
});
