import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { PassThrough, Readable } from "node:stream";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decompressStream } from "../../src/codec/index.js";
import type { Db } from "../../src/db/database.js";
import { TableTaskQueue } from "../../src/jobs/queue/sqlite.js";
import { JobRunner } from "../../src/jobs/runner.js";
import { JobService } from "../../src/jobs/service.js";
import { LocalObjectStore } from "../../src/jobs/storage/local.js";
import { jobKeys } from "../../src/jobs/storage/types.js";
import { jobStore } from "../../src/jobs/store.js";
import type { JobRow } from "../../src/jobs/tables.js";
import { JobTransfers } from "../../src/jobs/transfer.js";
import { freshDatabase } from "../support/databases.js";
import { jobRow } from "../support/jobs.js";

/**
 * Coding while the input arrives (runner `early`, transfer `receive`): whole segments are coded as
 * soon as their bytes are in the store, the job's output is the same stream as when coded after
 * the upload, and whatever was begun for an upload that failed never counts for the next one.
 */

const SEGMENT = 256 * 1024;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

/** text-like bytes, seeded (compressible, different per seed) */
function textBytes(n: number, seed: number): Buffer {
  const words = ["early", "segment", "upload", "gen", "worker", "codec", "stream", "record", "7", "\n"];
  const parts: string[] = [];
  let x = seed;
  let len = 0;
  while (len < n) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    const w = `${words[(x >>> 16) % words.length]}${x % 97} `;
    parts.push(w);
    len += w.length;
  }
  return Buffer.from(parts.join("")).subarray(0, n);
}

async function readAll(r: AsyncIterable<unknown>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of r) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

describe("coding while the input arrives (local store, SQLite queue)", () => {
  let db: Db;
  let dir: string;
  let store: LocalObjectStore;
  let runner: JobRunner;
  let transfers: JobTransfers;
  /** job id → segment index that fails on every attempt */
  const failing = new Map<string, number>();
  /** segment starts seen: `<job>:<idx>:<state of the job then>` */
  const starts: string[] = [];

  beforeAll(async () => {
    ({ db } = await freshDatabase("sqlite"));
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-early-"));
    store = new LocalObjectStore(dir);
    const jobs = new JobService(db.kysely, "http://x", "e".repeat(32));
    runner = new JobRunner({
      db: db.kysely,
      store,
      queue: new TableTaskQueue(db.kysely, { pollMs: 20, leaseMs: 10_000 }),
      segmentBytes: SEGMENT,
      chunkBytes: 64 * 1024,
      attempts: 2,
      backoffMs: 20,
      threads: 2,
      concurrency: 2,
      beforeSegment: async (jobId, idx) => {
        const job = await jobStore.job(db.kysely, jobId);
        starts.push(`${jobId}:${idx}:${job?.state}`);
        if (failing.get(jobId) === idx) throw new Error(`injected failure of segment ${idx + 1}`);
      },
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

  async function newJob(bytes: number, op = "compress"): Promise<JobRow> {
    const job = jobRow({ state: "awaiting_input", op, bytes_quoted: bytes });
    await jobStore.insertJob(db.kysely, job);
    return job;
  }

  async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const v = await probe();
      if (v !== undefined) return v;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await sleep(20);
    }
  }

  const row = async (id: string) => (await jobStore.job(db.kysely, id)) as JobRow;
  const finished = (id: string) =>
    until(`job ${id} to end`, async () => {
      const j = await row(id);
      return j.state === "done" || j.state === "failed" ? j : undefined;
    });

  /** the job's output (its segments in order), decompressed */
  async function restored(job: JobRow): Promise<Buffer> {
    const { parts, total } = await transfers.output(job);
    const out = await readAll(transfers.openOutput(parts, 0, total - 1));
    expect(sha256(out)).toBe(job.output_sha256);
    return readAll(Readable.from([out]).pipe(decompressStream()));
  }

  /** Sends `data` into a receive() through a stream the test feeds: the first `hold` bytes, then waits for `release`. */
  function upload(jobId: string, data: Buffer, hold: number) {
    const body = new PassThrough();
    const received = transfers.receive(jobId, body);
    received.catch(() => {});
    for (let at = 0; at < hold; at += 32 * 1024) body.write(data.subarray(at, Math.min(hold, at + 32 * 1024)));
    return {
      received,
      rest: () => {
        body.end(data.subarray(hold));
        return received;
      },
      fail: () => body.destroy(new Error("the client went away")),
    };
  }

  it("codes whole segments while the rest of the input is still arriving; the output restores the input", async () => {
    const data = textBytes(5 * SEGMENT + 1234, 1);
    const job = await newJob(data.length);
    const u = upload(job.id, data, 3 * SEGMENT + 100);
    // three whole segments are in the store: they are coded while the job is still uploading
    const during = await until("3 segments coded during the upload", async () => {
      const j = await row(job.id);
      return j.segments_done >= 3 ? j : undefined;
    });
    expect(during.state).toBe("uploading");
    expect(during.segments_total).toBe(0); // not planned as a whole until the input is complete
    expect(starts.filter((s) => s.startsWith(`${job.id}:`) && s.endsWith(":uploading"))).toHaveLength(3);
    await u.rest();
    const done = await finished(job.id);
    expect(done.state).toBe("done");
    expect(done.segments_total).toBe(6);
    expect(Number(done.bytes_in)).toBe(data.length);
    expect(done.input_sha256).toBe(sha256(data));
    const segments = await jobStore.segments(db.kysely, job.id);
    expect(segments.map((s) => [s.idx, Number(s.in_offset), Number(s.in_length), s.gen])).toEqual(
      [0, 1, 2, 3, 4, 5].map((i) => [i, i * SEGMENT, i < 5 ? SEGMENT : 1234, done.upload_gen]),
    );
    expect(sha256(await restored(done))).toBe(sha256(data));
    // the growing file was renamed into place: one input object, no leftovers
    expect(fs.readdirSync(path.join(dir, "jobs", job.id)).sort()).toEqual(["input", "out"]);
  });

  it("an upload that fails after segments were coded early: the next upload's bytes are the job's, not the old segments", async () => {
    const first = textBytes(4 * SEGMENT, 2);
    const second = textBytes(4 * SEGMENT - 999, 3); // other bytes, another length
    const job = await newJob(4 * SEGMENT);
    const u1 = upload(job.id, first, 3 * SEGMENT);
    await until("2 segments of the first upload coded", async () =>
      (await row(job.id)).segments_done >= 2 ? 1 : undefined,
    );
    const gen1 = (await row(job.id)).upload_gen;
    u1.fail();
    await expect(u1.received).rejects.toThrow();
    expect((await row(job.id)).state).toBe("uploading");

    const u2 = upload(job.id, second, 0);
    await u2.rest();
    const done = await finished(job.id);
    expect(done.state).toBe("done");
    expect(done.upload_gen).not.toBe(gen1);
    expect(done.input_sha256).toBe(sha256(second));
    const segments = await jobStore.segments(db.kysely, job.id);
    expect(segments.every((s) => s.gen === done.upload_gen)).toBe(true);
    expect(segments).toHaveLength(4);
    expect(sha256(await restored(done))).toBe(sha256(second));
  });

  it("a segment coded early that keeps failing fails the job once its input is complete, with the reason (never stuck)", async () => {
    const data = textBytes(3 * SEGMENT + 10, 4);
    const job = await newJob(data.length);
    failing.set(job.id, 0);
    const u = upload(job.id, data, 2 * SEGMENT);
    await until("segment 1 failed", async () => {
      const s = (await jobStore.segments(db.kysely, job.id)).find((x) => x.idx === 0);
      return s?.state === "failed" ? s : undefined;
    });
    expect((await row(job.id)).state).toBe("uploading");
    await u.rest();
    const failed = await finished(job.id);
    expect(failed.state).toBe("failed");
    expect(failed.error_code).toBe("segment_failed");
    expect(failed.error_detail).toContain("injected failure of segment 1");
  });

  it("decompress jobs wait for the whole input (records are found by reading it)", () => {
    const job = { op: "decompress" } as JobRow;
    expect(runner.early(job, "g1")).toBeUndefined();
    expect(runner.early({ op: "compress" } as JobRow, "g1")).toBeDefined();
  });
});

describe("LocalObjectStore: reading an object while it is written", () => {
  let dir: string;
  let store: LocalObjectStore;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-growing-"));
    store = new LocalObjectStore(dir);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("reports each length once its bytes can be read, serves them under the tag, then the complete object", async () => {
    const key = jobKeys.input("job_growing");
    const data = randomBytes(300_000);
    const body = new PassThrough();
    const lengths: number[] = [];
    const put = store.put(key, body, { growing: { tag: "abc123", written: (n) => lengths.push(n) } });
    body.write(data.subarray(0, 100_000));
    await until(() => lengths.at(-1) === 100_000);
    // not an object yet under its key, but its first bytes are readable under the tag
    expect(await store.size(key)).toBeUndefined();
    const part = await readAll(await store.get(key, { start: 10, end: 99_999 }, { growing: "abc123" }));
    expect(part.equals(data.subarray(10, 100_000))).toBe(true);
    const reader = await store.openReader(key, { growing: "abc123" });
    const into = new Uint8Array(50_000);
    expect(await reader.read(into, 60_000)).toBe(40_000); // short: only what is written so far
    expect(Buffer.from(into.subarray(0, 40_000)).equals(data.subarray(60_000, 100_000))).toBe(true);
    body.end(data.subarray(100_000));
    expect(await put).toEqual({ bytes: 300_000, sha256: sha256(data) });
    expect(lengths.at(-1)).toBe(300_000);
    expect(lengths).toEqual([...lengths].sort((a, b) => a - b));
    // the reader opened before the rename keeps reading the same file
    expect(await reader.read(into, 250_000)).toBe(50_000);
    await reader.close();
    // after the rename, the tag reads the complete object
    const whole = await readAll(await store.get(key, undefined, { growing: "abc123" }));
    expect(whole.equals(data)).toBe(true);
    expect(fs.readdirSync(path.join(dir, "jobs", "job_growing"))).toEqual(["input"]);
  });

  it("a new growing put removes the file an earlier, interrupted one left under another tag", async () => {
    const key = jobKeys.input("job_leftover");
    const folder = path.join(dir, "jobs", "job_leftover");
    fs.mkdirSync(folder, { recursive: true });
    // what a process killed during an upload leaves behind, and another object's temporary file
    fs.writeFileSync(path.join(folder, ".input.0badc0ffee00.growing"), randomBytes(70_000));
    fs.writeFileSync(path.join(folder, ".other.0badc0ffee00.growing"), "not this key's");
    const data = randomBytes(20_000);
    const put = await store.put(key, Readable.from([data]), { growing: { tag: "f00d", written: () => {} } });
    expect(put).toEqual({ bytes: 20_000, sha256: sha256(data) });
    expect(fs.readdirSync(folder).sort()).toEqual([".other.0badc0ffee00.growing", "input"]);
    expect(fs.readFileSync(path.join(folder, "input")).equals(data)).toBe(true);
  });

  it("rejects a tag that is not a plain name", async () => {
    await expect(
      store.put(jobKeys.input("job_badtag"), Readable.from([Buffer.from("x")]), {
        growing: { tag: "../x", written: () => {} },
      }),
    ).rejects.toThrow(/invalid object tag/);
  });

  async function until(ok: () => boolean, timeoutMs = 5000): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (!ok()) {
      if (Date.now() > end) throw new Error("timed out");
      await sleep(5);
    }
  }
});
