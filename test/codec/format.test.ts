import zlib from "node:zlib";
import { describe, expect, it } from "vitest";
import { crc32 } from "../../src/codec/format/crc32.js";
import { compress, compressWithReport, decompress, inspect } from "../../src/codec/index.js";
import { codeOf, i32, utf8 } from "./helpers.js";

describe("container format", () => {
  it("writes magic, version, level flags, chamber, length and a CRC-32 of the original", async () => {
    const input = i32(Array.from({ length: 1000 }, (_, i) => i * 3));
    const c = await compress(input, { level: "balanced" });
    expect([c[0], c[1]]).toEqual([0xcf, 0x86]);
    expect(c[2]).toBe(1);
    expect(c[3]! & 3).toBe(1); // balanced
    const info = inspect(c);
    expect(info).toMatchObject({ bare: false, version: 1, level: "balanced", chunked: false, original_bytes: 4000 });
    expect(info.checksum).toBe(crc32(input));
    expect(Buffer.from(c.subarray(c.length - 4)).readUInt32LE(0)).toBe(crc32(input));
    expect(await decompress(c)).toEqual(input);
  });

  it("crc32 matches zlib's", () => {
    const b = utf8("The quick brown fox jumps over the lazy dog");
    expect(crc32(b)).toBe(zlib.crc32(b));
    expect(crc32(new Uint8Array(0))).toBe(0);
  });

  it("records every level", async () => {
    for (const level of ["fast", "balanced", "max"] as const) {
      const c = await compress(utf8("hello hello hello hello"), { level });
      expect(inspect(c).level).toBe(level);
    }
  });

  it("bare mode drops magic and checksum: 10,000 zeros and a ramp fit in 8 bytes", async () => {
    const zeros = i32(new Array(10000).fill(0));
    const ramp = i32(Array.from({ length: 10000 }, (_, i) => i));
    for (const input of [zeros, ramp]) {
      const c = await compress(input, { bare: true });
      expect(c.length).toBeLessThanOrEqual(8);
      expect(c[0]! & 0x80).toBe(0);
      expect(inspect(c).bare).toBe(true);
      expect(await decompress(c)).toEqual(input);
    }
  });

  it("chunked frame: independent chunks, each routed", async () => {
    const text = utf8("abc def ghi ".repeat(2000));
    const nums = i32(Array.from({ length: 3000 }, (_, i) => i * 7));
    const input = new Uint8Array(text.length + nums.length);
    input.set(text);
    input.set(nums, text.length);
    const rep = await compressWithReport(input, { level: "balanced", chunkSize: 8192 });
    expect(rep.chamber).toBe("chunked");
    const info = inspect(rep.container);
    expect(info.chunked).toBe(true);
    expect(info.chambers.length).toBe(Math.ceil(input.length / 8192));
    expect(await decompress(rep.container)).toEqual(input);
  });

  it("never larger than input + 16 bytes framed (random data is stored)", async () => {
    const r = new Uint8Array(5000).map((_, i) => (i * 2654435761) >>> 24);
    const c = await compress(r);
    expect(c.length).toBeLessThanOrEqual(r.length + 16);
    expect(await decompress(c)).toEqual(r);
    const empty = await compress(new Uint8Array(0));
    expect(empty.length).toBeLessThanOrEqual(16);
    expect((await decompress(empty)).length).toBe(0);
  });

  it("decodes legacy gzip streams from older clients", async () => {
    const data = utf8("legacy ".repeat(100));
    expect(Buffer.from(await decompress(zlib.gzipSync(data)))).toEqual(Buffer.from(data));
  });

  it("rejects malformed containers with stable codes", async () => {
    const input = utf8("some text some text some text");
    const c = await compress(input, { level: "balanced" });
    expect(await codeOf(decompress(new Uint8Array(0)))).toBe("codec_truncated");
    expect(await codeOf(decompress(c.subarray(0, 6)))).toBe("codec_truncated");
    expect(await codeOf(decompress(Uint8Array.of(0xff, 0x00, 0x01)))).toBe("codec_bad_magic");
    const badVersion = c.slice();
    badVersion[2] = 9;
    expect(await codeOf(decompress(badVersion))).toBe("codec_bad_version");
    const badFlags = c.slice();
    badFlags[3] = 0x40;
    expect(await codeOf(decompress(badFlags))).toBe("codec_bad_flags");
    const badChamber = c.slice();
    badChamber[4] = 30;
    expect(await codeOf(decompress(badChamber))).toBe("codec_unknown_chamber");
    const badCrc = c.slice();
    badCrc[badCrc.length - 1] = badCrc[badCrc.length - 1]! ^ 1;
    expect(await codeOf(decompress(badCrc))).toBe("codec_checksum_mismatch");
  });

  it("enforces the declared-size cap and the expansion-ratio cap before decoding", async () => {
    const big = new Uint8Array(3 * 1024 * 1024); // zeros: tiny container, large output
    const c = await compress(big, { level: "fast" });
    expect(c.length).toBeLessThan(4096);
    expect(await codeOf(decompress(c, { maxOutputBytes: 1024 * 1024 }))).toBe("codec_too_large");
    expect(await codeOf(decompress(c, { maxExpansionRatio: 10, ratioFloorBytes: 0 }))).toBe("codec_ratio_exceeded");
    expect((await decompress(c)).length).toBe(big.length);
    // a hand-made header declaring 2^40 bytes
    const hostile = Uint8Array.of(0xcf, 0x86, 1, 2, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 0, 0, 0, 0, 0);
    expect(await codeOf(decompress(hostile))).toBe("codec_too_large");
  });

  it("rejects bad options", async () => {
    expect(await codeOf(compress(utf8("x"), { level: "ultra" as never }))).toBe("codec_bad_option");
    expect(await codeOf(compress(utf8("x"), { chamber: "nope" as never }))).toBe("codec_bad_option");
    expect(await codeOf(compress(utf8("xyz"), { chamber: "zrw" }))).toBe("codec_bad_input");
    expect(await codeOf(decompress(utf8("x"), { maxOutputBytes: -1 }))).toBe("codec_bad_option");
  });
});

describe("inputs are never modified", () => {
  it("compressing a Buffer leaves it unchanged (Buffer#slice shares memory)", async () => {
    const vals = Float64Array.from({ length: 2000 }, (_, i) => Math.sin(i) * 1e6 + Math.PI);
    const buf = Buffer.from(new Uint8Array(vals.buffer));
    const copy = Buffer.from(buf);
    for (const level of ["fast", "balanced", "max"] as const) {
      const c = await compress(buf, { level });
      expect(buf.equals(copy)).toBe(true);
      expect(Buffer.from(await decompress(Buffer.from(c))).equals(copy)).toBe(true);
    }
  });
});

describe("crc32", () => {
  it("the JS fallback equals the native one", async () => {
    const { crc32js } = await import("../../src/codec/format/crc32.js");
    const data = new Uint8Array(10007).map((_, i) => (i * 31 + 7) & 255);
    expect(crc32js(data)).toBe(zlib.crc32(data));
    expect(crc32js(data.subarray(3, 1000), 12345)).toBe(zlib.crc32(data.subarray(3, 1000), 12345));
  });
});

describe("decode-time bound for context-mixing streams", () => {
  it("refuses CM streams declaring more than maxModelOutputBytes", async () => {
    const text = utf8("a model stream ".repeat(200));
    const c = await compress(text, { chamber: "text" });
    expect(await codeOf(decompress(c, { maxModelOutputBytes: 1000 }))).toBe("codec_too_large");
    expect(await decompress(c, { maxModelOutputBytes: text.length })).toEqual(text);
    const j = utf8(JSON.stringify({ rows: Array.from({ length: 200 }, (_, i) => ({ i, s: `v${i}` })) }));
    const cj = await compress(j, { chamber: "json_residual", level: "max" });
    expect(await codeOf(decompress(cj, { maxModelOutputBytes: 100 }))).toBe("codec_too_large");
    expect(await decompress(cj)).toEqual(j);
    // fast-decoding chambers are not affected
    const z = await compress(new Uint8Array(5000), { level: "balanced" });
    expect((await decompress(z, { maxModelOutputBytes: 0 })).length).toBe(5000);
  });
});
