import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../src/db/database.js";
import { BullTaskQueue } from "../../src/jobs/queue/bullmq.js";
import { TableTaskQueue } from "../../src/jobs/queue/sqlite.js";
import type { TaskQueue } from "../../src/jobs/queue/types.js";
import { JobRunner } from "../../src/jobs/runner.js";
import { LocalObjectStore } from "../../src/jobs/storage/local.js";
import { jobKeys } from "../../src/jobs/storage/types.js";
import { jobStore } from "../../src/jobs/store.js";
import type { JobRow } from "../../src/jobs/tables.js";
import { type Engine, freshDatabase } from "../support/databases.js";
import { jobRow } from "../support/jobs.js";

/**
 * Issue #21 item 3, at run time: one caller has at most one free job running. Caller A submits
 * two free jobs and caller B one, on a worker that runs two segments at once: A's second job does
 * not start before A's first is done (it waits, then is started by the first one's end), while
 * B's job is planned and queued at once. Without the turn, A's two jobs were planned side by side.
 */

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

const VARIANTS: { name: string; engine: Engine; queue: (db: Db, url: string | undefined) => TaskQueue }[] = [
  {
    name: "table queue on SQLite",
    engine: "sqlite",
    queue: (db) => new TableTaskQueue(db.kysely, { queue: "turns", pollMs: 25, leaseMs: 10_000 }),
  },
  {
    name: "BullMQ on PostgreSQL",
    engine: "postgres",
    queue: (_db, url) => new BullTaskQueue({ connectionString: url as string, queue: "turns", leaseMs: 10_000 }),
  },
];

describe.each(VARIANTS)("one running free job per caller: $name", (variant) => {
  let db: Db;
  let dir: string;
  let runner: JobRunner;
  /** `<job>#<segment>` in the order segments started, with the time */
  const started: { seg: string; at: number }[] = [];

  beforeAll(async () => {
    const fresh = await freshDatabase(variant.engine);
    db = fresh.db;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-turns-"));
    runner = new JobRunner({
      db: db.kysely,
      store: new LocalObjectStore(dir),
      queue: variant.queue(db, fresh.databaseUrl),
      segmentBytes: 64 * 1024,
      chunkBytes: 64 * 1024,
      attempts: 2,
      backoffMs: 50,
      threads: 1,
      concurrency: 2,
      beforeSegment: async (jobId, idx) => {
        started.push({ seg: `${jobId}#${idx}`, at: Date.now() });
        await sleep(150); // long enough for a second job to start beside it, if it may
      },
    });
    await runner.start();
  });
  afterAll(async () => {
    await runner.stop({ graceMs: 0 });
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function submit(caller: string, fill: string): Promise<JobRow> {
    const input = Buffer.alloc(128 * 1024, fill);
    const job = jobRow({ caller, paid_by: "free", bytes_quoted: input.length, bytes_in: input.length });
    await jobStore.insertJob(db.kysely, job);
    await new LocalObjectStore(dir).put(jobKeys.input(job.id), Readable.from([input]));
    await runner.schedule(job);
    return job;
  }

  async function doneAt(id: string, timeoutMs = 60_000): Promise<number> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const job = await jobStore.job(db.kysely, id);
      if (job?.state === "done") return Date.parse(job.finished_at as string);
      if (job?.state === "failed") throw new Error(`job ${id} failed: ${job.error_detail}`);
      if (Date.now() > end) throw new Error(`job ${id} not done (${job?.state})`);
      await sleep(25);
    }
  }

  it("a caller's second free job waits for its first; another caller's job runs beside it", async () => {
    const a1 = await submit("ip:caller-a", "a");
    const a2 = await submit("ip:caller-a", "b");
    const b1 = await submit("ip:caller-b", "c");
    // A's second job is not planned while the first has the turn; B's job (another caller) is
    expect((await jobStore.job(db.kysely, a2.id))?.segments_total).toBe(0);
    expect((await jobStore.job(db.kysely, b1.id))?.segments_total).toBe(2);

    const a1Done = await doneAt(a1.id);
    await doneAt(b1.id);
    await doneAt(a2.id); // started by a1's end, with nobody calling schedule again
    const first = (job: JobRow) => Math.min(...started.filter((s) => s.seg.startsWith(job.id)).map((s) => s.at));
    expect(first(a2)).toBeGreaterThanOrEqual(a1Done);
    // B did not wait for A's second job: its segments were queued before it, so they start first
    expect(first(b1)).toBeLessThan(first(a2));
  }, 90_000);

  it("a paid job of the same caller never waits", async () => {
    const free = await submit("ip:caller-c", "d");
    const paidInput = Buffer.alloc(128 * 1024, "p");
    const paid = jobRow({
      caller: "ip:caller-c",
      paid_by: "x402_base_usdc",
      bytes_quoted: paidInput.length,
      bytes_in: paidInput.length,
    });
    await jobStore.insertJob(db.kysely, paid);
    await new LocalObjectStore(dir).put(jobKeys.input(paid.id), Readable.from([paidInput]));
    await runner.schedule(paid);
    expect((await jobStore.job(db.kysely, paid.id))?.segments_total).toBe(2);
    await doneAt(free.id);
    await doneAt(paid.id);
  }, 90_000);
});
