import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compressStream, decompressStream } from "../../src/codec/index.js";
import type { Db } from "../../src/db/database.js";
import { TableTaskQueue } from "../../src/jobs/queue/sqlite.js";
import { JobRunner } from "../../src/jobs/runner.js";
import { JobService } from "../../src/jobs/service.js";
import { LocalObjectStore } from "../../src/jobs/storage/local.js";
import { jobKeys, type ObjectStore } from "../../src/jobs/storage/types.js";
import { jobStore } from "../../src/jobs/store.js";
import type { JobRow } from "../../src/jobs/tables.js";
import { freshDatabase } from "../support/databases.js";
import { jobRow } from "../support/jobs.js";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

/** text-like bytes: words from a small vocabulary, seeded */
function textBytes(n: number, seed: number): Buffer {
  const words = ["lab", "phi", "segment", "worker", "queue", "lease", "codec", "stream", "record", "job", "42", "\n"];
  const parts: string[] = [];
  let x = seed;
  let len = 0;
  while (len < n) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    const w = `${words[(x >>> 16) % words.length]} `;
    parts.push(w);
    len += w.length;
  }
  return Buffer.from(parts.join("")).subarray(0, n);
}

async function readAll(r: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of r) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

async function decompressAll(stream: Uint8Array): Promise<Buffer> {
  return readAll(Readable.from([Buffer.from(stream)]).pipe(decompressStream()));
}

describe("job runner (SQLite, in-process queue)", () => {
  let db: Db;
  let dir: string;
  let store: ObjectStore;
  let runner: JobRunner;
  const failSegment = new Map<string, number>();
  const service = () => new JobService(db.kysely, "http://x", "s".repeat(32));

  beforeAll(async () => {
    ({ db } = await freshDatabase("sqlite"));
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-runner-"));
    store = new LocalObjectStore(dir);
    runner = new JobRunner({
      db: db.kysely,
      store,
      queue: new TableTaskQueue(db.kysely, { pollMs: 50, leaseMs: 10_000 }),
      segmentBytes: 256 * 1024,
      chunkBytes: 64 * 1024,
      attempts: 2,
      backoffMs: 50,
      threads: 2,
      concurrency: 2,
      beforeSegment: (jobId, idx) => {
        if (failSegment.get(jobId) === idx) throw new Error(`injected failure of segment ${idx + 1}`);
      },
    });
    await runner.start();
  });
  afterAll(async () => {
    await runner.stop({ graceMs: 0 });
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** `quoted`: the job's quote (for decompress, the decompressed size; default the input's size) */
  async function submit(op: string, input: Uint8Array, level = "fast", quoted = input.length): Promise<JobRow> {
    const job = jobRow({
      op,
      level,
      bytes_quoted: quoted,
      bytes_in: input.length,
      input_sha256: sha256(input),
    });
    const id = job.id;
    await jobStore.insertJob(db.kysely, job);
    await store.put(jobKeys.input(id), Readable.from([Buffer.from(input)]));
    await runner.schedule(job);
    return job;
  }

  async function finished(id: string, timeoutMs = 60_000): Promise<JobRow> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const j = await jobStore.job(db.kysely, id);
      if (j && (j.state === "done" || j.state === "failed")) return j;
      if (Date.now() > end) throw new Error(`job ${id} still ${j?.state}`);
      await sleep(50);
    }
  }

  async function output(job: JobRow): Promise<Buffer> {
    const parts: Buffer[] = [];
    for (let i = 0; i < job.segments_total; i++)
      parts.push(await readAll(await store.get(jobKeys.segmentOut(job.id, i))));
    return Buffer.concat(parts);
  }

  const original = textBytes(3 * 1024 * 1024 + 12345, 7);
  let compressed: Buffer;

  it("compresses a few MiB in segments; the output is one stream that decompressStream restores", async () => {
    const job = await finished((await submit("compress", original)).id);
    expect(job.state).toBe("done");
    expect(job.segments_total).toBe(13);
    expect(job.segments_done).toBe(13);
    compressed = await output(job);
    // byte for byte what compressStream writes for 64 KiB records (the last unit is short and was
    // read into a reused buffer)
    const stream = compressStream({ level: "fast", chunkSize: 64 * 1024 });
    expect(compressed.equals(await readAll(Readable.from([original]).pipe(stream)))).toBe(true);
    expect(Number(job.bytes_out)).toBe(compressed.length);
    expect(job.output_sha256).toBe(sha256(compressed));
    expect(compressed.length).toBeLessThan(original.length / 2);
    const back = await decompressAll(compressed);
    expect(back.equals(original)).toBe(true);
    const view = service().view(job);
    expect(view.progress).toBe(1);
    expect(view.error).toBeNull();
    const segs = await jobStore.segments(db.kysely, job.id);
    expect(segs.every((s) => s.state === "done" && s.attempts === 1)).toBe(true);
  });

  it("decompresses a stream, cut at record boundaries", async () => {
    const job = await finished((await submit("decompress", compressed, "fast", original.length)).id);
    expect(job.state).toBe("done");
    expect(job.segments_total).toBeGreaterThan(1);
    const out = await output(job);
    expect(out.equals(original)).toBe(true);
    expect(job.output_sha256).toBe(sha256(original));
    // segments hold whole records: each segment's input decodes on its own
    const segs = await jobStore.segments(db.kysely, job.id);
    const first = segs[0] as (typeof segs)[0];
    const part = compressed.subarray(Number(first.in_offset), Number(first.in_offset) + Number(first.in_length));
    expect((await decompressAll(part)).length).toBe(Number(first.out_bytes));
  });

  it("roundtrip: compresses, verifies each chunk decodes to the same hash, outputs the stream", async () => {
    const input = textBytes(700_000, 11);
    const job = await finished((await submit("roundtrip", input, "balanced")).id);
    expect(job.state).toBe("done");
    const out = await output(job);
    expect((await decompressAll(out)).equals(input)).toBe(true);
    expect(job.output_sha256).toBe(sha256(out));
  });

  it("an empty input is done at once", async () => {
    const job = await finished((await submit("compress", new Uint8Array(0))).id);
    expect(job).toMatchObject({
      state: "done",
      segments_total: 0,
      bytes_out: 0,
      output_sha256: sha256(new Uint8Array(0)),
    });
  });

  it("a corrupted record fails a decompress job with the codec's code, codec_corrupt or codec_checksum_mismatch (no retry can fix it)", async () => {
    const bad = Buffer.from(compressed);
    // a byte in the middle of the second record's container (past its header): a CRC/decoder error
    let at = 0;
    for (let r = 0; r < 2; r++) {
      let len = 0;
      let shift = 0;
      let b: number;
      do {
        b = bad[at++] as number;
        len += (b & 0x7f) * 2 ** shift;
        shift += 7;
      } while (b & 0x80);
      if (r === 1) at += Math.floor(len / 2);
      else at += len;
    }
    bad[at] = (bad[at] as number) ^ 0x55;
    const job = await finished((await submit("decompress", bad, "fast", original.length)).id);
    expect(job.state).toBe("failed");
    // which of the two depends on where the flipped byte lands in the chamber's payload
    expect(["codec_corrupt", "codec_checksum_mismatch"]).toContain(job.error_code);
    expect(job.error_detail).toMatch(/^segment \d+ failed after 1 attempt\(s\): record \d+ of the segment: /);
    const segs = await jobStore.segments(db.kysely, job.id);
    expect(segs.filter((s) => s.state === "failed")).toHaveLength(1);
    expect(service().view(job).error?.code).toBe(job.error_code);
  });

  it("a truncated stream fails at planning", async () => {
    const job = await finished((await submit("decompress", compressed.subarray(0, compressed.length - 10))).id);
    expect(job.state).toBe("failed");
    expect(job.error_code).toBe("input_corrupt");
    expect(job.error_detail).toMatch(/truncated/);
  });

  it("a segment that keeps failing fails the job after the bounded attempts, with the reason", async () => {
    const input = textBytes(1024 * 1024, 3);
    const id = `job_fail_${randomBytes(4).toString("hex")}`;
    failSegment.set(id, 2);
    const at = new Date().toISOString();
    // same as submit(), with a known id for the hook
    const job = await submitWithId(id, input, at);
    const done = await finished(job.id);
    expect(done.state).toBe("failed");
    expect(done.error_code).toBe("segment_failed");
    expect(done.error_detail).toBe("segment 3 failed after 2 attempt(s): injected failure of segment 3");
    expect(done.attempts).toBe(2);
    expect(done.finished_at).not.toBeNull();
    const segs = await jobStore.segments(db.kysely, job.id);
    expect(segs[2]).toMatchObject({ state: "failed", attempts: 2 });
  });

  async function submitWithId(id: string, input: Uint8Array, at: string): Promise<JobRow> {
    const job = jobRow({ id, bytes_quoted: input.length, bytes_in: input.length, created_at: at });
    await jobStore.insertJob(db.kysely, job);
    await store.put(jobKeys.input(id), Readable.from([Buffer.from(input)]));
    await runner.schedule(job);
    return job;
  }

  it("scheduling again (or a redelivered task) changes nothing", async () => {
    const input = textBytes(300_000, 5);
    const job = await finished((await submit("compress", input)).id);
    await runner.schedule(job);
    await runner.handle(
      "segment",
      { job: job.id, idx: 0 },
      {
        id: `${job.id}:0`,
        name: "segment",
        attempt: 1,
        maxAttempts: 2,
        workerId: "test",
        signal: new AbortController().signal,
      },
    );
    const again = await jobStore.job(db.kysely, job.id);
    expect(again).toEqual(job);
  });
});
