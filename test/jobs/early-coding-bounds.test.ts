import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { PassThrough, Readable } from "node:stream";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decompressStream } from "../../src/codec/index.js";
import type { Db } from "../../src/db/database.js";
import type { SegmentExecution } from "../../src/jobs/execution.js";
import { earlySegmentBytes } from "../../src/jobs/planning.js";
import { TableTaskQueue } from "../../src/jobs/queue/sqlite.js";
import { JobRunner } from "../../src/jobs/runner.js";
import { JobService } from "../../src/jobs/service.js";
import { LocalObjectStore } from "../../src/jobs/storage/local.js";
import { jobStore } from "../../src/jobs/store.js";
import type { JobRow } from "../../src/jobs/tables.js";
import { JobTransfers } from "../../src/jobs/transfer.js";
import { InflightBytes } from "../../src/jobs/units.js";
import { freshDatabase } from "../support/databases.js";
import { jobRow } from "../support/jobs.js";

/**
 * Many cores (issue #23 item 6), the mechanisms bench:suite measures: a job coded while its input
 * arrives gets segments of `threads × 2` units (not JOB_SEGMENT_BYTES), so the threads start on the
 * first units to land instead of after a whole segment; and the units in flight across the
 * segments a worker runs at once are held to threads + concurrency units (the worker's memory).
 */

const SEGMENT = 1024 * 1024;
const CHUNK = 64 * 1024;
const THREADS = 1;
const CONCURRENCY = 2;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

function textBytes(n: number, seed: number): Buffer {
  const lines: string[] = [];
  let x = seed;
  let len = 0;
  while (len < n) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    const line = `2026-11-27T15:${String(x % 60).padStart(2, "0")}:00Z level=info worker=${x % 7} bytes=${x % 100_003}\n`;
    lines.push(line);
    len += line.length;
  }
  return Buffer.from(lines.join("")).subarray(0, n);
}

async function readAll(r: AsyncIterable<unknown>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of r) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

describe("early segments follow the threads, in-flight units are bounded (local store, SQLite queue)", () => {
  let db: Db;
  let dir: string;
  let runner: JobRunner;
  let transfers: JobTransfers;

  beforeAll(async () => {
    ({ db } = await freshDatabase("sqlite"));
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-early-bounds-"));
    const store = new LocalObjectStore(dir);
    const jobs = new JobService(db.kysely, "http://x", "e".repeat(32));
    runner = new JobRunner({
      db: db.kysely,
      store,
      queue: new TableTaskQueue(db.kysely, { pollMs: 20, leaseMs: 10_000 }),
      segmentBytes: SEGMENT,
      chunkBytes: CHUNK,
      attempts: 2,
      backoffMs: 20,
      threads: THREADS,
      concurrency: CONCURRENCY,
    });
    jobs.scheduler = runner;
    transfers = new JobTransfers(db.kysely, jobs, store, pino({ enabled: false }));
    await runner.start();
  });
  afterAll(async () => {
    await runner.stop({ graceMs: 0 });
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const execution = () => (runner as unknown as { execution: SegmentExecution }).execution;
  const row = async (id: string) => (await jobStore.job(db.kysely, id)) as JobRow;

  async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const v = await probe();
      if (v !== undefined) return v;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await sleep(20);
    }
  }

  async function newJob(bytes: number): Promise<JobRow> {
    const job = jobRow({ state: "awaiting_input", op: "compress", bytes_quoted: bytes });
    await jobStore.insertJob(db.kysely, job);
    return job;
  }

  async function restored(job: JobRow): Promise<Buffer> {
    const { parts, total } = await transfers.output(job);
    const out = await readAll(transfers.openOutput(parts, 0, total - 1));
    expect(sha256(out)).toBe(job.output_sha256);
    return readAll(Readable.from([out]).pipe(decompressStream()));
  }

  const finished = (id: string) =>
    until(`job ${id} to end`, async () => {
      const j = await row(id);
      return j.state === "done" || j.state === "failed" ? j : undefined;
    });

  it("sizes early segments at threads × 2 units, capped by JOB_SEGMENT_BYTES", () => {
    expect(earlySegmentBytes(64 << 20, 4 << 20, 1)).toBe(8 << 20);
    expect(earlySegmentBytes(64 << 20, 4 << 20, 2)).toBe(16 << 20);
    expect(earlySegmentBytes(64 << 20, 4 << 20, 8)).toBe(64 << 20);
    expect(earlySegmentBytes(64 << 20, 4 << 20, 16)).toBe(64 << 20);
    expect(earlySegmentBytes(100 << 10, 64 << 10, 1)).toBe(100 << 10);
  });

  it("codes the first segment while less than one JOB_SEGMENT_BYTES of the input has arrived", async () => {
    const data = textBytes(2 * SEGMENT + 777, 11);
    const job = await newJob(data.length);
    const body = new PassThrough();
    const received = transfers.receive(job.id, body);
    received.catch(() => {});
    // 300 KiB of a 2 MiB input: not one whole 1 MiB segment, but two whole 128 KiB early segments
    const hold = 300 * 1024;
    for (let at = 0; at < hold; at += 32 * 1024) body.write(data.subarray(at, Math.min(hold, at + 32 * 1024)));
    const during = await until("a segment coded before the upload's last byte", async () => {
      const j = await row(job.id);
      return j.segments_done >= 1 ? j : undefined;
    });
    expect(during.state).toBe("uploading");
    body.end(data.subarray(hold));
    await received;
    const done = await finished(job.id);
    expect(done.state).toBe("done");
    const size = earlySegmentBytes(SEGMENT, CHUNK, THREADS);
    const segments = await jobStore.segments(db.kysely, job.id);
    expect(segments).toHaveLength(Math.ceil(data.length / size));
    expect(segments.every((s, i) => Number(s.in_offset) === i * size)).toBe(true);
    expect(sha256(await restored(done))).toBe(sha256(data));
  });

  it("holds the units in flight to threads + concurrency across segments coded at once", async () => {
    const ex = execution();
    const limit = (THREADS + CONCURRENCY) * CHUNK;
    expect(ex.inflightBytes.limit).toBe(limit);
    // two jobs of whole 1 MiB segments (16 units each) at once: before, each segment had
    // threads × 2 / concurrency units on the pool and one being read, 2 × (1 + 1) in all
    const inputs = [textBytes(3 * SEGMENT, 21), textBytes(3 * SEGMENT, 22)];
    const jobs = await Promise.all(inputs.map((d) => newJob(d.length)));
    await Promise.all(jobs.map((j, i) => transfers.receive(j.id, Readable.from([inputs[i] as Buffer]))));
    const done = await Promise.all(jobs.map((j) => finished(j.id)));
    expect(done.map((j) => j.state)).toEqual(["done", "done"]);
    expect(ex.inflightBytes.peak).toBeGreaterThan(0);
    expect(ex.inflightBytes.peak).toBeLessThanOrEqual(limit);
    expect(ex.inflightBytes.inFlight).toBe(0);
    // the unit buffers ever made: no more than the units allowed in flight
    const buffers = (ex as unknown as { buffers: { allocated: number } }).buffers;
    expect(buffers.allocated).toBeLessThanOrEqual(THREADS + CONCURRENCY);
    for (const [i, j] of done.entries()) expect(sha256(await restored(j))).toBe(sha256(inputs[i] as Buffer));
  });
});

describe("InflightBytes", () => {
  it("waits at the limit until bytes are released, and lets one unit through when none is in flight", async () => {
    const b = new InflightBytes(100);
    expect(b.tryAcquire(60)).toBe(true);
    expect(b.tryAcquire(40)).toBe(true);
    expect(b.tryAcquire(1)).toBe(false);
    let woke = false;
    const waiting = b.released().then(() => {
      woke = true;
    });
    await Promise.resolve();
    expect(woke).toBe(false);
    b.release(60);
    await waiting;
    expect(woke).toBe(true);
    expect(b.tryAcquire(60)).toBe(true);
    expect(b.peak).toBe(100);
    b.release(100);
    expect(b.inFlight).toBe(0);
    // larger than the limit, alone: allowed (never stuck)
    expect(b.tryAcquire(500)).toBe(true);
    expect(b.tryAcquire(1)).toBe(false);
    const ac = new AbortController();
    const aborted = b.released(ac.signal);
    ac.abort(new Error("stop"));
    await expect(aborted).rejects.toThrow("stop");
  });
});
