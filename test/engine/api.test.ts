import zlib from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compress as codecCompress } from "../../src/codec/index.js";
import { generate } from "../../src/engine/generators.js";
import { BARREL_CHAMBERS } from "../../src/engine/service.js";
import { VERSIONS } from "../../src/versions.js";
import { type TestApp, testApp } from "../support/app.js";
import { ENGINES } from "../support/databases.js";

const SEED = "correct horse battery staple 1234"; // 33 ASCII bytes
const OCTET = { "content-type": "application/octet-stream" };
const b64 = (b: Uint8Array | string) => Buffer.from(b).toString("base64");

describe.each(ENGINES)("codec endpoints (%s)", (engine) => {
  let t: TestApp;
  let token: string;
  let other: string;

  const omni = (payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
    t.app.inject({ method: "POST", url: "/api/omni", payload, headers });
  const web = (payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
    t.app.inject({ method: "POST", url: "/api/web-codec", payload, headers });
  const join = async (name: string) => {
    const r = await t.app.inject({
      method: "POST",
      url: "/api/join-work",
      payload: { name, intent: "I want to compress sensor logs.", seed: SEED },
    });
    expect(r.statusCode).toBe(201);
    return r.json().token as string;
  };
  const barrel = async () => (await omni({ op: "barrel" })).json().barrel;

  beforeAll(async () => {
    t = await testApp(engine, { CODEC_SLOW_LIMIT_BYTES: "8192", CODEC_BODY_LIMIT_BYTES: "131072" });
    token = await join("Ada");
    other = await join("Bob");
  });
  afterAll(() => t.close());

  it("describes the engine and the web codec", async () => {
    const e = await t.app.inject({ method: "GET", url: "/api/omni" });
    expect(e.statusCode).toBe(200);
    const d = e.json();
    expect(d.version).toBe(VERSIONS.engine);
    expect(d.version).toBe("1.4.0-barrel-cone");
    expect(d.endpoint).toBe("POST /api/omni");
    expect(d.ops).toEqual(["compress", "decompress", "profile", "route", "bench", "barrel", "print", "prints"]);
    for (const p of ["zrw", "float", "text", "delta", "high_entropy", "general"]) expect(d.paths).toContain(p);
    expect(d.limits.input_limit_bytes).toMatchObject({ max: 8192, fast: 131072 });
    const w = (await t.app.inject({ method: "GET", url: "/api/web-codec" })).json();
    expect(w).toMatchObject({
      version: "2.1.0-creator-cloak",
      engine: "omni",
      endpoint: "POST /api/web-codec",
      also: "POST /api/omni",
      ops: ["compress", "decompress", "bench"],
      methods: ["omni", "brotli-11", "gzip-9", "zrw-v5", "json_keys"],
    });
    expect(Object.keys(w.counsel).sort()).toEqual(["brain", "cloak", "heart"]);
    expect(typeof w.strategy).toBe("string");
  });

  it("profiles and routes", async () => {
    const json = JSON.stringify([
      { a: 1, b: "x" },
      { a: 2, b: "y" },
    ]);
    for (const op of ["profile", "route"]) {
      const r = await omni({ op, data: json });
      expect(r.statusCode).toBe(200);
      const body = r.json();
      expect(body).toMatchObject({ op, data_class: "json", level: "max" });
      expect(typeof body.path).toBe("string");
      expect(body.label).toMatch(/^omni\//);
      expect(body.reason.length).toBeGreaterThan(5);
      expect(body.feats.bytes).toBe(json.length);
    }
    const ints = generate("walk", 200, 3);
    const r = (await omni({ op: "profile", data: b64(ints), encoding: "base64" })).json();
    expect(r.data_class).toBe("int32");
    expect(r.path).toBe("zrw");
    const declared = (await omni({ op: "route", data: "12345678", type: "binary", level: "fast" })).json();
    expect(declared.data_class).toBe("binary");
    expect(declared.candidates).toHaveLength(1);
  });

  it("compresses and decompresses losslessly (utf8, base64, every level, bare, forced chamber)", async () => {
    const text = "Ünïcödé ✓ — the quick brown fox jumps over the lazy dog. ".repeat(20);
    for (const level of ["fast", "balanced", "max"]) {
      const c = await omni({ op: "compress", data: text, level });
      expect(c.statusCode).toBe(200);
      const body = c.json();
      expect(body).toMatchObject({ op: "compress", ok: true, engine: "omni", level, verified: true, print: null });
      expect(body.original_bytes).toBe(Buffer.byteLength(text));
      expect(body.compressed_bytes).toBe(Buffer.from(body.data, "base64").length);
      expect(body.compressed_bytes).toBeLessThan(body.original_bytes);
      expect(body.path).toBe(`omni/${body.chamber}`);
      const d = await omni({ op: "decompress", data: body.data, output_encoding: "utf8" });
      expect(d.statusCode).toBe(200);
      expect(d.json()).toMatchObject({
        op: "decompress",
        data: text,
        encoding: "utf8",
        level,
        checksum_verified: true,
      });
    }
    const bytes = new Uint8Array(300).map((_, i) => (i * 7) & 0xff);
    const bare = (
      await omni({ op: "compress", data: b64(bytes), encoding: "base64", bare: true, level: "fast" })
    ).json();
    expect(bare.bare).toBe(true);
    const back = (await omni({ op: "decompress", data: bare.data })).json();
    expect(back).toMatchObject({ bare: true, checksum_verified: false, encoding: "base64" });
    expect(Buffer.from(back.data, "base64").equals(Buffer.from(bytes))).toBe(true);
    const forced = (
      await omni({
        op: "compress",
        data: b64(generate("zeros", 64)),
        encoding: "base64",
        chamber: "zrw-v5-dark-attractor",
        level: "fast",
      })
    ).json();
    expect(forced.chamber).toBe("zrw-v5-dark-attractor");
    const again = (await omni({ op: "decompress", data: forced.data })).json();
    expect(again.chambers).toEqual(["zrw-v5-dark-attractor"]);
    expect(Buffer.from(again.data, "base64").equals(Buffer.from(generate("zeros", 64)))).toBe(true);
  });

  it("decodes legacy gzip streams and refuses malformed containers with codec codes", async () => {
    const gz = zlib.gzipSync(Buffer.from("legacy client data"));
    const d = (await omni({ op: "decompress", data: b64(gz), output_encoding: "utf8" })).json();
    expect(d).toMatchObject({ data: "legacy client data", legacy: true, chambers: ["legacy"] });

    const good = Buffer.from(
      await codecCompress(new TextEncoder().encode("abcabcabcabc".repeat(10)), { level: "fast" }),
    );
    const flipped = Buffer.from(good);
    flipped[flipped.length - 1] = (flipped[flipped.length - 1] ?? 0) ^ 0xff;
    const cases: [Buffer, number, string][] = [
      [good.subarray(0, good.length - 3), 422, "codec_"],
      [flipped, 422, "codec_checksum_mismatch"],
      [Buffer.from([0xcf, 0x86, 99]), 422, "codec_"],
    ];
    for (const [bytes, status, code] of cases) {
      const r = await omni({ op: "decompress", data: b64(bytes) });
      expect(r.statusCode, r.body).toBe(status);
      expect(r.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(r.json().code).toContain(code);
    }
    const utf8 = await omni({ op: "decompress", data: "z4Y", encoding: "utf8" });
    expect(utf8.json().code).toBe("container_is_base64");
    // a tiny container that claims a huge output
    const bomb = Buffer.from(await codecCompress(new Uint8Array(200_000), { level: "fast" }));
    const big = await omni({ op: "decompress", data: b64(bomb) });
    expect(big.statusCode).toBe(200); // zeros decode fast: within the 32 MiB output limit
    const binary = await omni({ op: "decompress", data: b64(bomb), output_encoding: "utf8" });
    expect(binary.statusCode).toBe(200); // zeros are valid UTF-8
    // a context-mixing container may restore only up to the slow limit (8192 here); zeros may restore far more
    const cm = Buffer.from(
      await codecCompress(new TextEncoder().encode("words and more words ".repeat(500)), {
        chamber: "text",
        level: "fast",
      }),
    );
    const slow = await omni({ op: "decompress", data: b64(cm) });
    expect(slow.statusCode).toBe(413);
    expect(slow.json()).toMatchObject({ code: "codec_output_too_large", limit_bytes: 8192, chambers: ["text"] });
    const notText = Buffer.from(await codecCompress(Uint8Array.of(0xff, 0xfe, 0x00), { level: "fast" }));
    const bad = await omni({ op: "decompress", data: b64(notText), output_encoding: "utf8" });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().code).toBe("output_not_utf8");
  });

  it("refuses bad input with 4xx problems", async () => {
    const cases: [Record<string, unknown>, number, string][] = [
      [{ op: "compress" }, 400, "data_required"],
      [{ op: "compress", data: "%%%not base64", encoding: "base64" }, 400, "bad_base64"],
      [{ op: "compress", data: "QR==", encoding: "base64" }, 400, "bad_base64"],
      [{ op: "compress", data: "A", encoding: "base64" }, 400, "bad_base64"],
      [{ op: "compress", data: "lone \ud800 surrogate" }, 400, "data_not_utf8"],
      [{ op: "explode", data: "x" }, 400, "validation_failed"],
      [{ op: "compress", data: "x", level: "ultra" }, 400, "validation_failed"],
      [{ op: "compress", data: "x".repeat(8193) }, 413, "codec_input_too_large"],
      [{ op: "bench", data: "x".repeat(8193), level: "fast" }, 413, "codec_input_too_large"],
      [{ op: "compress", data: "abc", chamber: "float", level: "fast" }, 400, "codec_bad_input"],
      [{ op: "prints" }, 401, "identity_required"],
    ];
    for (const [payload, status, code] of cases) {
      const r = await omni(payload);
      expect(r.statusCode, `${JSON.stringify(payload).slice(0, 80)} → ${r.body}`).toBe(status);
      expect(r.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(r.json().code).toBe(code);
    }
    const big = (await omni({ op: "compress", data: "x".repeat(8193) })).json();
    expect(big.suite).toBe("POST /api/x402-suite");
    expect(big.detail).toMatch(/suite job/);
    // level fast takes up to the body limit
    expect((await omni({ op: "compress", data: "x".repeat(8193), level: "fast" })).statusCode).toBe(200);
    // a body above CODEC_BODY_LIMIT_BYTES: 413 pointing to suite jobs
    const huge = await t.app.inject({
      method: "POST",
      url: "/api/compress",
      headers: OCTET,
      payload: Buffer.alloc(140_000),
    });
    expect(huge.statusCode).toBe(413);
    expect(huge.json()).toMatchObject({ code: "body_too_large", suite: "POST /api/x402-suite" });
    const bad = await omni({ op: "compress", data: "x" }, { authorization: "Bearer lpi_nope" });
    expect(bad.statusCode).toBe(401);
    expect(bad.json().code).toBe("identity_token_invalid");
    expect(bad.headers["www-authenticate"]).toMatch(/Bearer/);
  });

  it("benches against gzip-9 and brotli-11 with a real round trip", async () => {
    const r = await omni({ op: "bench", data: "to be or not to be, that is the question. ".repeat(30) });
    expect(r.statusCode).toBe(200);
    const b = r.json();
    expect(b).toMatchObject({ op: "bench", ok: true, roundtrip: true, verdict: "lossless", level: "max" });
    expect(b.methods.map((m: { method: string }) => m.method)).toEqual(["omni-max", "gzip-9", "brotli-11"]);
    const omniBytes = b.methods[0].bytes;
    const brotli = b.methods[2].bytes;
    expect(b.omni_vs_brotli).toBeCloseTo(omniBytes / brotli, 3);
    const gz = zlib.gzipSync(Buffer.from("to be or not to be, that is the question. ".repeat(30)), { level: 9 });
    expect(b.methods[1].bytes).toBe(gz.length);
  });

  it("print fingerprints without storing; compress by an identified caller records a print; prints are private and paginated", async () => {
    const data = "sensor,value\n1,20.5\n2,20.7\n3,20.6\n";
    const p1 = (await omni({ op: "print", data })).json();
    const p2 = (await omni({ op: "print", data }, { authorization: `Bearer ${token}` })).json();
    expect(p1).toEqual(p2);
    expect(p1.stored).toBe(false);
    expect(p1.print.dataset_print_id).toMatch(/^dp_[0-9a-f]{32}$/);
    expect(p1.print).toMatchObject({ bytes: data.length });
    expect((await omni({ op: "print", data: `${data} ` })).json().print.dataset_print_id).not.toBe(
      p1.print.dataset_print_id,
    );
    const none = (await omni({ op: "prints" }, { authorization: `Bearer ${token}` })).json();
    expect(none.total).toBe(0);

    const c = (await omni({ op: "compress", data, level: "fast" }, { authorization: `Bearer ${token}` })).json();
    expect(c.print).toMatchObject({
      dataset_print_id: p1.print.dataset_print_id,
      bytes: data.length,
      data_class: p1.print.data_class,
      path: p1.print.path,
    });
    expect(c.print.ratio).toBeCloseTo(data.length / c.compressed_bytes, 3);
    for (let i = 0; i < 4; i++) {
      await omni({ op: "compress", data: `${data}${i}`, level: "fast" }, { "x-identity-token": token });
    }
    await web({ op: "compress", data: "from the web face", engine: "classic" }, { authorization: `Bearer ${token}` });
    await omni({ op: "compress", data: "not recorded", level: "fast" }); // anonymous
    await omni({ op: "compress", data: "bob's", level: "fast" }, { authorization: `Bearer ${other}` });

    const page1 = (await omni({ op: "prints", limit: 4 }, { authorization: `Bearer ${token}` })).json();
    expect(page1).toMatchObject({ op: "prints", total: 6, limit: 4, offset: 0, next_offset: 4 });
    expect(page1.prints).toHaveLength(4);
    expect(page1.prints[0].label).toBe("classic/brotli-11");
    const page2 = (await omni({ op: "prints", limit: 4, offset: 4 }, { authorization: `Bearer ${token}` })).json();
    expect(page2.prints).toHaveLength(2);
    expect(page2.next_offset).toBeNull();
    const ids = [...page1.prints, ...page2.prints].map(
      (p: { at: string; dataset_print_id: string }) => p.dataset_print_id,
    );
    expect(new Set(ids).size).toBe(6);
    expect(ids).toContain(p1.print.dataset_print_id);
    for (const p of [...page1.prints, ...page2.prints]) {
      expect(Object.keys(p).sort()).toEqual([
        "at",
        "bytes",
        "data_class",
        "dataset_print_id",
        "label",
        "level",
        "path",
        "ratio",
      ]);
    }
    const bob = (await omni({ op: "prints" }, { authorization: `Bearer ${other}` })).json();
    expect(bob.total).toBe(1);
    expect(bob.prints[0].bytes).toBe(5);

    // the database holds fingerprints, never the data
    const rows = await t.app.services.db.kysely.selectFrom("engine_prints").selectAll().execute();
    expect(rows).toHaveLength(7);
    expect(JSON.stringify(rows)).not.toContain("sensor");
    expect(JSON.stringify(rows)).not.toContain("bob's");
  });

  it("keeps barrel state per direction in the database", async () => {
    const before = await barrel();
    for (const dir of ["compress", "decompress"] as const) {
      expect(before[dir].chambers).toEqual(BARREL_CHAMBERS[dir]);
      expect(before[dir].rest).toBe("zrw");
      expect(Object.keys(before[dir].counts)).toEqual(expect.arrayContaining(BARREL_CHAMBERS[dir] as string[]));
    }
    // the spec's compress chambers (as a set: the order is the codec's chamber-id order)
    expect([...before.compress.chambers].sort()).toEqual(
      ["zrw", "float", "delta", "text", "high_entropy", "general", "json_keys", "json_residual"].sort(),
    );
    expect(before.decompress.chambers).toHaveLength(17);

    const ints = b64(generate("walk", 256, 5));
    // level balanced: int32 arrays go to zrw (level fast may send them through general)
    const c1 = (await omni({ op: "compress", data: ints, encoding: "base64", level: "balanced" })).json();
    expect(c1.chamber).toBe("zrw");
    const c2 = (await omni({ op: "compress", data: ints, encoding: "base64", level: "balanced" })).json();
    const c3 = (await omni({ op: "compress", data: "plain words plain words plain words", level: "fast" })).json();
    expect(c3.chamber).not.toBe("zrw");
    await omni({ op: "decompress", data: c1.data });
    await omni({ op: "profile", data: "no fire" });
    await omni({ op: "bench", data: "no fire either", level: "fast" });
    const after = await barrel();
    expect(after.compress.fires - before.compress.fires).toBe(3);
    expect(after.compress.counts.zrw - before.compress.counts.zrw).toBe(2);
    expect(after.compress.counts[c3.chamber] - (before.compress.counts[c3.chamber] ?? 0)).toBe(1);
    expect(after.compress.chamber).toBe(c3.chamber);
    // zrw after something else is a rotation, zrw again is not, then c3's chamber rotates
    const expectedRotates = (before.compress.chamber === "zrw" ? 0 : 1) + 0 + 1;
    expect(after.compress.rotates - before.compress.rotates).toBe(expectedRotates);
    expect(after.decompress.fires - before.decompress.fires).toBe(1);
    expect(after.decompress.chamber).toBe("zrw");
    expect(c2.chamber).toBe("zrw");
    const total = Object.values(after.compress.counts as Record<string, number>).reduce((a, b) => a + b, 0);
    expect(total).toBe(after.compress.fires);
  });

  it("counts concurrent fires exactly", async () => {
    const before = await barrel();
    const data = b64(generate("ramp", 64));
    const rs = await Promise.all(
      Array.from({ length: 24 }, () => omni({ op: "compress", data, encoding: "base64", level: "fast" })),
    );
    for (const r of rs) expect(r.statusCode).toBe(200);
    const after = await barrel();
    expect(after.compress.fires - before.compress.fires).toBe(24);
    const chamber = rs[0]?.json().chamber as string;
    expect(after.compress.counts[chamber] - (before.compress.counts[chamber] ?? 0)).toBe(24);
  });

  it("web codec: omni and classic, counsel derived from the result or omitted", async () => {
    const text = JSON.stringify({ rows: Array.from({ length: 40 }, (_, i) => ({ id: i, name: `n${i % 5}` })) });
    const o = (await web({ op: "compress", data: text, level: "fast" })).json();
    expect(o).toMatchObject({ op: "compress", engine: "omni", method: "omni", verified: true });
    expect(o.counsel.heart).toContain("JSON");
    expect(o.counsel.brain).toContain(`Chamber ${o.chamber} was kept`);
    expect(o.counsel.brain).toContain(String(o.compressed_bytes.toLocaleString("en-US")));
    expect(o.counsel.brain).toMatch(/level fast/i);
    expect(o.counsel.cloak).toMatch(/not stored/);
    expect(o.counsel.cloak).toMatch(/No print was recorded/);
    const back = (await web({ op: "decompress", data: o.data, output_encoding: "utf8" })).json();
    expect(back.data).toBe(text);
    expect(back.counsel.brain).toMatch(/checksum/);

    const c = (await web({ op: "compress", data: text, engine: "classic", creator_counsel: false })).json();
    expect(c.counsel).toBeUndefined();
    expect(c.engine).toBe("classic");
    const br = zlib.brotliCompressSync(Buffer.from(text), { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } });
    const gz = zlib.gzipSync(Buffer.from(text), { level: 9 });
    expect(c.sizes).toEqual({ "brotli-11": c.sizes["brotli-11"], "gzip-9": gz.length });
    expect(c.compressed_bytes).toBe(Math.min(c.sizes["brotli-11"], c.sizes["gzip-9"]));
    expect(Math.abs(c.sizes["brotli-11"] - br.length)).toBeLessThanOrEqual(4);
    const raw = Buffer.from(c.data, "base64");
    const decoded = c.method === "gzip-9" ? zlib.gunzipSync(raw) : zlib.brotliDecompressSync(raw);
    expect(decoded.toString()).toBe(text); // a standard stream any client decodes
    const cb = (await web({ op: "decompress", data: c.data, engine: "classic", output_encoding: "utf8" })).json();
    expect(cb.data).toBe(text);
    const gzBack = (await web({ op: "decompress", data: b64(gz), engine: "classic", output_encoding: "utf8" })).json();
    expect(gzBack).toMatchObject({ method: "gzip-9", data: text });
    const junk = await web({ op: "decompress", data: b64("not a stream at all"), engine: "classic" });
    expect(junk.statusCode).toBe(422);
    expect(junk.json().code).toBe("classic_stream_invalid");

    const tiny = (await web({ op: "compress", data: "hi", level: "fast" })).json();
    expect(tiny.compressed_bytes).toBeGreaterThan(2);
    expect(tiny.counsel.brain).toMatch(/too small or too random/);
    const withPrint = (
      await web({ op: "compress", data: text, level: "fast" }, { authorization: `Bearer ${token}` })
    ).json();
    expect(withPrint.counsel.cloak).toContain(withPrint.print.dataset_print_id);
    const bench = (await web({ op: "bench", data: text, level: "fast" })).json();
    expect(bench).toMatchObject({ op: "bench", ok: true, verdict: "lossless" });
    expect(bench.counsel.brain).toContain("brotli-11");
    expect(
      (await web({ op: "bench", data: text, level: "fast", creator_counsel: false })).json().counsel,
    ).toBeUndefined();
    expect((await web({ op: "profile", data: text })).statusCode).toBe(400);
  });

  it("POST /api/compress and /api/decompress: raw octet-stream bytes both ways, and generated corpora", async () => {
    const raw = generate("walk", 1000, 9);
    const c = await t.app.inject({
      method: "POST",
      url: "/api/compress?level=fast",
      headers: OCTET,
      payload: Buffer.from(raw),
    });
    expect(c.statusCode, c.body).toBe(200);
    expect(c.headers["content-type"]).toBe("application/octet-stream");
    expect(c.headers["x-original-bytes"]).toBe("4000");
    expect(Number(c.headers["x-compressed-bytes"])).toBe(c.rawPayload.length);
    // the route the codec chose (which chamber level fast uses is the codec's business)
    expect(c.headers["x-codec-path"]).toBe(`omni/${c.headers["x-codec-chamber"]}`);
    expect(c.headers["x-codec-level"]).toBe("fast");
    const d = await t.app.inject({ method: "POST", url: "/api/decompress", headers: OCTET, payload: c.rawPayload });
    expect(d.statusCode).toBe(200);
    expect(d.headers["content-type"]).toBe("application/octet-stream");
    expect(d.rawPayload.equals(Buffer.from(raw))).toBe(true);
    // bytes that are not UTF-8 survive unchanged (never coerced through a text decoder)
    const nasty = Buffer.from([0xff, 0xfe, 0x00, 0x80, 0xc3, 0x28, 0xed, 0xa0, 0x80, 0xf4, 0x90, 0x80]);
    const nc = await t.app.inject({ method: "POST", url: "/api/compress", headers: OCTET, payload: nasty });
    expect(nc.statusCode).toBe(200);
    const nd = await t.app.inject({ method: "POST", url: "/api/decompress", headers: OCTET, payload: nc.rawPayload });
    expect(nd.rawPayload.equals(nasty)).toBe(true);

    const ramp = await t.app.inject({
      method: "POST",
      url: "/api/compress",
      payload: { corpus: "ramp", n: 2000, bare: true },
    });
    expect(ramp.statusCode, ramp.body).toBe(200);
    const rb = ramp.json();
    expect(rb).toMatchObject({ corpus: "ramp", n: 2000, seed: 1, original_bytes: 8000, bare: true, level: "max" });
    expect(rb.compressed_bytes).toBeLessThanOrEqual(8);
    const back = await t.app.inject({ method: "POST", url: "/api/decompress", payload: { data: rb.data } });
    expect(back.statusCode).toBe(200);
    expect(Buffer.from(back.json().data, "base64").equals(Buffer.from(generate("ramp", 2000)))).toBe(true);
    const viaData = await t.app.inject({
      method: "POST",
      url: "/api/compress",
      payload: { data: b64("hi there"), level: "fast" },
    });
    expect(viaData.json().original_bytes).toBe(8);

    const errs: [unknown, Record<string, string>, number, string][] = [
      [{ corpus: "lottery", n: 10 }, {}, 400, "validation_failed"],
      [{ corpus: "noise", n: -1 }, {}, 400, "validation_failed"],
      [{ corpus: "noise", n: 5000 }, {}, 413, "codec_input_too_large"],
      [{ nothing: true }, {}, 400, "validation_failed"],
      [{ data: "***" }, {}, 400, "bad_base64"],
    ];
    for (const [payload, headers, status, code] of errs) {
      const r = await t.app.inject({ method: "POST", url: "/api/compress", payload: payload as object, headers });
      expect(r.statusCode, r.body).toBe(status);
      expect(r.json().code).toBe(code);
    }
    const empty = await t.app.inject({ method: "POST", url: "/api/compress" });
    expect(empty.statusCode).toBe(400);
    const text = await t.app.inject({
      method: "POST",
      url: "/api/compress",
      headers: { "content-type": "text/plain" },
      payload: "hi",
    });
    expect(text.statusCode).toBe(400);
    const junk = await t.app.inject({
      method: "POST",
      url: "/api/decompress",
      headers: OCTET,
      payload: Buffer.from("junk junk junk"),
    });
    expect(junk.statusCode).toBeGreaterThanOrEqual(400);
    expect(junk.statusCode).toBeLessThan(500);
    expect(junk.json().code).toMatch(/^codec_/);
  });

  it("POST /api/process: compress then decompress with a verdict against gzip-9 and brotli-11", async () => {
    const r = await t.app.inject({
      method: "POST",
      url: "/api/process",
      payload: { corpus: "sine", n: 1000, level: "fast" },
    });
    expect(r.statusCode, r.body).toBe(200);
    const p = r.json();
    expect(p).toMatchObject({
      ok: true,
      roundtrip: true,
      verdict: "lossless",
      corpus: "sine",
      n: 1000,
      level: "fast",
      original_bytes: 4000,
    });
    expect(p.methods.map((m: { method: string }) => m.method)).toEqual(["omni-fast", "gzip-9", "brotli-11"]);
    expect(p.peers["gzip-9"].bytes).toBe(zlib.gzipSync(Buffer.from(generate("sine", 1000)), { level: 9 }).length);
    expect(p.ratio).toBeCloseTo(4000 / p.compressed_bytes, 2);
    expect(p.omni_vs_brotli).toBeCloseTo(p.compressed_bytes / p.peers["brotli-11"].bytes, 3);
    expect(["omni-fast", "gzip-9", "brotli-11"]).toContain(p.winner);
    const bin = await t.app.inject({
      method: "POST",
      url: "/api/process?level=fast",
      headers: { ...OCTET, authorization: `Bearer ${token}` },
      payload: Buffer.from(generate("noise", 300)),
    });
    expect(bin.statusCode).toBe(200);
    expect(bin.json().print.bytes).toBe(1200);
    expect(bin.json().compressed_bytes).toBeLessThanOrEqual(1200 + 16);
    const tooBig = await t.app.inject({
      method: "POST",
      url: "/api/process",
      headers: OCTET,
      payload: Buffer.alloc(9000),
    });
    expect(tooBig.statusCode).toBe(413);
  });
});

describe("admission control for slow codec work", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp("sqlite", { CODEC_SLOW_CONCURRENCY: "1" });
  });
  afterAll(() => t.close());

  it("answers 503 with Retry-After beyond CODEC_SLOW_CONCURRENCY, and frees the slot afterwards", async () => {
    const data = Buffer.from(generate("walk", 4000, 8)).toString("base64");
    const send = (level: string) =>
      t.app.inject({ method: "POST", url: "/api/omni", payload: { op: "compress", data, encoding: "base64", level } });
    const rs = await Promise.all([send("max"), send("max"), send("max"), send("max")]);
    const codes = rs.map((r) => r.statusCode);
    expect(codes).toContain(200);
    expect(codes).toContain(503);
    for (const r of rs.filter((x) => x.statusCode === 503)) {
      expect(r.json().code).toBe("codec_capacity_unavailable");
      expect(r.headers["retry-after"]).toBe("2");
    }
    // level fast is never gated
    const fast = await Promise.all([send("fast"), send("fast"), send("fast")]);
    expect(fast.map((r) => r.statusCode)).toEqual([200, 200, 200]);
    // the slot is released (also after a refused request)
    expect((await send("max")).statusCode).toBe(200);
    expect((await t.app.inject({ method: "GET", url: "/api/omni" })).json().limits.slow_concurrency).toBe(1);
  });
});

describe("over a real socket", () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await testApp("sqlite");
    base = await t.app.listen({ port: 0, host: "127.0.0.1" });
  });
  afterAll(() => t.close());

  it("round-trips arbitrary bytes through /api/compress and /api/decompress with fetch", async () => {
    const raw = new Uint8Array(4096).map((_, i) => (i * 131 + (i >> 3)) & 0xff);
    const c = await fetch(`${base}/api/compress?level=fast`, {
      method: "POST",
      headers: { "content-type": "application/octet-stream", origin: "https://agent.example" },
      body: raw,
    });
    expect(c.status).toBe(200);
    expect(c.headers.get("content-type")).toBe("application/octet-stream");
    const container = new Uint8Array(await c.arrayBuffer());
    expect(Number(c.headers.get("x-compressed-bytes"))).toBe(container.length);
    expect(c.headers.get("access-control-expose-headers")).toMatch(/X-Compressed-Bytes/);
    const d = await fetch(`${base}/api/decompress`, {
      method: "POST",
      headers: { "content-type": "application/octet-stream" },
      body: container,
    });
    expect(d.status).toBe(200);
    expect(Buffer.from(await d.arrayBuffer()).equals(Buffer.from(raw))).toBe(true);
    const pre = await fetch(`${base}/api/omni`, {
      method: "OPTIONS",
      headers: {
        origin: "https://example.com",
        "access-control-request-method": "POST",
        "access-control-request-headers": "x-identity-token, content-type",
      },
    });
    expect(pre.headers.get("access-control-allow-headers")).toMatch(/X-Identity-Token/);
  });
});
