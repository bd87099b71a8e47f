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
 * Issue #21 item 3: paid work first. Twenty free jobs are queued (two segments each) and the
 * worker is busy with the first free segment; a paid job is submitted behind them: its first
 * segment is the next one the runner starts, on both queues (the table queue on SQLite, BullMQ on
 * PostgreSQL). Before the fix the queues were first in, first out and the paid job started 40th.
 */

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

const VARIANTS: { name: string; engine: Engine; queue: (db: Db, url: string | undefined) => TaskQueue }[] = [
  {
    name: "table queue on SQLite",
    engine: "sqlite",
    queue: (db) => new TableTaskQueue(db.kysely, { queue: "prio", pollMs: 50, leaseMs: 10_000 }),
  },
  {
    name: "BullMQ on PostgreSQL",
    engine: "postgres",
    queue: (_db, url) => new BullTaskQueue({ connectionString: url as string, queue: "prio", leaseMs: 10_000 }),
  },
];

describe.each(VARIANTS)("paid jobs before free ones: $name", (variant) => {
  let db: Db;
  let dir: string;
  let runner: JobRunner;
  const started: string[] = [];
  let release: () => void = () => {};
  const held = new Promise<void>((r) => {
    release = r;
  });

  beforeAll(async () => {
    const fresh = await freshDatabase(variant.engine);
    db = fresh.db;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-priority-"));
    runner = new JobRunner({
      db: db.kysely,
      store: new LocalObjectStore(dir),
      queue: variant.queue(db, fresh.databaseUrl),
      segmentBytes: 64 * 1024,
      chunkBytes: 64 * 1024,
      attempts: 2,
      backoffMs: 50,
      threads: 1,
      concurrency: 1,
      beforeSegment: async (jobId, idx) => {
        started.push(`${jobId}#${idx}`);
        // the worker stays on the first free segment until the paid job has been submitted
        if (started.length === 1) await held;
      },
    });
    await runner.start();
  });
  afterAll(async () => {
    release();
    await runner.stop({ graceMs: 0 });
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function submit(paidBy: string): Promise<JobRow> {
    const input = Buffer.alloc(128 * 1024, paidBy === "free" ? "f" : "p");
    const job = jobRow({ paid_by: paidBy, bytes_quoted: input.length, bytes_in: input.length });
    await jobStore.insertJob(db.kysely, job);
    await new LocalObjectStore(dir).put(jobKeys.input(job.id), Readable.from([input]));
    await runner.schedule(job);
    return job;
  }

  async function until(what: string, ok: () => boolean, timeoutMs = 30_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (!ok()) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await sleep(25);
    }
  }

  it("a paid job submitted behind 20 free ones starts next", async () => {
    const free: JobRow[] = [];
    for (let i = 0; i < 20; i++) free.push(await submit("free"));
    await until("the first free segment started", () => started.length === 1);
    const paid = await submit("x402_base_usdc");
    release();
    await until("both paid segments started", () => started.filter((s) => s.startsWith(paid.id)).length === 2);
    // the free segment that was running, then the paid job's two segments, then the free ones
    expect(started[0]?.startsWith((free[0] as JobRow).id)).toBe(true);
    expect(started[1]).toBe(`${paid.id}#0`);
    expect(started[2]).toBe(`${paid.id}#1`);
    await until("every segment ran", () => started.length === 42, 60_000);
    const done = await jobStore.job(db.kysely, paid.id);
    expect(done?.state).toBe("done");
  }, 90_000);
});
