import { randomBytes } from "node:crypto";
import { pathToFileURL } from "node:url";
import { Piscina } from "piscina";
import { describe, expect, it } from "vitest";
import { ByteWriter } from "../../src/codec/format/varint.js";
import { compressStream, type Level } from "../../src/codec/index.js";
import { recordHeader, run, transferList, type UnitReply } from "../../src/jobs/segment-job.js";
import { UnitBuffers } from "../../src/jobs/units.js";
import { bundleModule } from "../../src/threads/bundle.mjs";

/** what the codec's compressStream writes for `input` cut into `chunk`-byte records */
async function streamOf(input: Uint8Array, level: Level, chunk: number): Promise<Buffer> {
  const t = compressStream({ level, chunkSize: chunk });
  const parts: Buffer[] = [];
  t.on("data", (c: Buffer) => parts.push(c));
  await new Promise<void>((resolve, reject) => {
    t.once("end", resolve);
    t.once("error", reject);
    t.end(Buffer.from(input));
  });
  return Buffer.concat(parts);
}

function out(reply: UnitReply): Buffer {
  if (!("out" in reply)) throw new Error(`unit failed: ${reply.error.code} ${reply.error.message}`);
  return Buffer.concat(reply.out);
}

const text = (n: number) =>
  Buffer.from('level=info msg="segment coded" worker=7 bytes=4194304\n'.repeat(n / 50 + 1)).subarray(0, n);

describe("segment job: one unit in a worker thread", () => {
  it("writes exactly the record compressStream writes, for small, text and incompressible units", async () => {
    const cases: [Uint8Array, Level][] = [
      [text(10), "fast"],
      [text(5000), "fast"],
      [text(300_000), "fast"],
      [text(100_000), "balanced"],
      [randomBytes(70_000), "fast"],
    ];
    for (const [input, level] of cases) {
      const reply = await run({ op: "compress", level, input: new Uint8Array(input) });
      expect(out(reply).equals(await streamOf(input, level, Math.max(4096, input.length)))).toBe(true);
    }
  });

  it("codes only the view it is given: a recycled buffer longer than the unit gives the same record", async () => {
    const input = text(200_000);
    const big = new Uint8Array(512 * 1024).fill(0x5a);
    big.set(input);
    const view = new Uint8Array(big.buffer, 0, input.length);
    const reply = await run({ op: "compress", level: "fast", input: view });
    expect(out(reply).equals(await streamOf(input, "fast", input.length))).toBe(true);
    // the input comes back as it went in (same buffer), for the runner to fill again
    expect(reply.input).toBe(view);
    const list = transferList(reply);
    expect(list).toContain(big.buffer);
    if (!("out" in reply)) throw new Error("unreachable");
    for (const p of reply.out) {
      expect(list).toContain(p.buffer);
      expect(p.byteOffset === 0 && p.byteLength === p.buffer.byteLength).toBe(true);
    }
  });

  it("roundtrip writes the compress record; decompress restores the unit; a bad record is a codec error", async () => {
    const input = text(150_000);
    const record = out(await run({ op: "roundtrip", level: "fast", input: new Uint8Array(input) }));
    expect(record.equals(await streamOf(input, "fast", input.length))).toBe(true);
    expect(out(await run({ op: "decompress", level: "fast", input: new Uint8Array(record) })).equals(input)).toBe(true);
    const bad = new Uint8Array(record);
    bad[bad.length - 3] = (bad[bad.length - 3] as number) ^ 0xff;
    const reply = await run({ op: "decompress", level: "fast", input: bad });
    expect("error" in reply && reply.error.code.startsWith("codec_")).toBe(true);
    expect(reply.input).toBe(bad);
    expect(transferList(reply)).toEqual([bad.buffer]);
  });

  it("record headers are the codec's unsigned LEB128", () => {
    for (const n of [0, 1, 127, 128, 300, 16_383, 16_384, 2 ** 21, 4 * 1024 * 1024 + 17, 2 ** 35 + 3]) {
      const w = new ByteWriter();
      w.uvarint(n);
      expect(Buffer.from(recordHeader(n)).equals(Buffer.from(w.finish()))).toBe(true);
    }
  });

  it("through the pool: the unit's buffer goes to the thread and comes back with the output", async () => {
    const module = await bundleModule(pathToFileURL(`${process.cwd()}/src/jobs/segment-job.ts`));
    const pool = new Piscina({
      filename: new URL("../../src/jobs/segment-worker.mjs", import.meta.url).href,
      minThreads: 1,
      maxThreads: 1,
      workerData: { module },
    });
    try {
      const input = text(100_000);
      const buffer = new ArrayBuffer(128 * 1024);
      const unit = new Uint8Array(buffer, 0, input.length);
      unit.set(input);
      const reply = (await pool.run(
        { op: "compress", level: "fast", input: unit },
        { transferList: [buffer] },
      )) as UnitReply;
      expect(buffer.byteLength).toBe(0); // transferred, not copied
      expect(reply.input.buffer.byteLength).toBe(128 * 1024);
      expect(Buffer.from(reply.input).equals(input)).toBe(true);
      expect(out(reply).equals(await streamOf(input, "fast", input.length))).toBe(true);
    } finally {
      await pool.destroy();
    }
  }, 60_000);
});

describe("UnitBuffers", () => {
  it("hands a returned buffer out again, keeps at most `keep`, and ignores foreign or detached buffers", () => {
    const buffers = new UnitBuffers(1024, 2);
    const a = buffers.take();
    const b = buffers.take();
    const c = buffers.take();
    expect([a, b, c].every((x) => x.byteLength === 1024)).toBe(true);
    expect(new Set([a, b, c]).size).toBe(3);
    buffers.give(a);
    buffers.give(b);
    buffers.give(c);
    expect(buffers.spare).toBe(2);
    const again = [buffers.take(), buffers.take()];
    expect(again).toContain(a);
    expect(again).toContain(b);
    expect(buffers.spare).toBe(0);
    buffers.give(new ArrayBuffer(512));
    const detached = new ArrayBuffer(1024);
    structuredClone(detached, { transfer: [detached] });
    buffers.give(detached);
    expect(buffers.spare).toBe(0);
  });
});
