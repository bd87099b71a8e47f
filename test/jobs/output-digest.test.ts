import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { testConfig } from "../../src/config.js";
import { JobEvents } from "../../src/jobs/events.js";
import { OutputDigests } from "../../src/jobs/output-digest.js";
import { TableTaskQueue } from "../../src/jobs/queue/sqlite.js";
import { type ClosableObjectStore, createObjectStore } from "../../src/jobs/storage/index.js";
import { jobKeys } from "../../src/jobs/storage/types.js";
import type { JobSegmentRow } from "../../src/jobs/tables.js";
import { testApp } from "../support/app.js";
import { freshDatabase } from "../support/databases.js";
import { startS3rver, type TestS3 } from "../support/s3rver.js";

/**
 * Issue #23 item 6, the job's tail: the output's SHA-256 is kept as the segments finish in order
 * (output-digest.ts) instead of read again at the job's end; a followed download and the table
 * queue's idle workers are woken by events instead of waiting for their polls (events.ts, the
 * queue's wake file). The digest must stay the SHA-256 of the whole output, whatever order the
 * segments finish in and whichever process coded them.
 */

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

function rows(jobId: string, gen: string | null, outs: Buffer[]): JobSegmentRow[] {
  return outs.map((o, idx) => ({
    job_id: jobId,
    idx,
    state: "done",
    in_offset: 0,
    in_length: 0,
    out_bytes: o.length,
    out_sha256: sha(o),
    attempts: 1,
    worker: null,
    error: null,
    updated_at: "2026-11-28T00:00:00.000Z",
    gen,
  }));
}

interface Subject {
  store: ClosableObjectStore;
  close(): Promise<void>;
}

const SUBJECTS: Record<string, () => Promise<Subject>> = {
  local: async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-digest-"));
    const store = createObjectStore(testConfig({ DATA_DIR: dir }));
    return {
      store,
      close: async () => {
        await store.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  s3: async () => {
    const s3: TestS3 = await startS3rver();
    const store = createObjectStore(testConfig({ DATA_DIR: os.tmpdir(), ...s3.env }));
    return {
      store,
      close: async () => {
        await store.close();
        await s3.close();
      },
    };
  },
};

describe.each(Object.keys(SUBJECTS))("the output's SHA-256 kept as segments finish (%s store)", (kind) => {
  let subject: Subject;
  let store: ClosableObjectStore;
  let seq = 0;
  beforeAll(async () => {
    subject = await (SUBJECTS[kind] as () => Promise<Subject>)();
    store = subject.store;
  });
  afterAll(async () => {
    await subject?.close();
  });

  /** a job's segment outputs (sizes in bytes), stored under upload `gen` */
  const stored = async (sizes: number[], gen: string | null = "g1") => {
    const jobId = `job_digest${++seq}`;
    const outs = sizes.map((n) => randomBytes(n));
    for (const [idx, o] of outs.entries()) await store.put(jobKeys.segmentOut(jobId, idx, gen), Readable.from([o]));
    return { jobId, outs, segs: rows(jobId, gen, outs), whole: sha(Buffer.concat(outs)) };
  };

  it("segments finishing out of order: hashed once the gap before them closes; the end reads nothing again", async () => {
    const { jobId, outs, segs, whole } = await stored([70_000, 1, 0, 300_000, 5]);
    const digests = new OutputDigests(store);
    digests.coded(jobId, "g1", 2, 0);
    digests.coded(jobId, "g1", 1, 1);
    digests.coded(jobId, "g1", 4, 5);
    await vi.waitFor(() => expect(digests.size).toBe(1));
    expect(digests.position(jobId, "g1")).toBe(0); // segment 0 not done yet: nothing hashed
    digests.coded(jobId, "g1", 0, outs[0]?.length as number);
    digests.coded(jobId, "g1", 3, outs[3]?.length as number);
    await vi.waitFor(() => expect(digests.position(jobId, "g1")).toBe(5));
    // every segment was hashed as it came: the job's end needs none of them again
    await store.deletePrefix(jobKeys.prefix(jobId));
    expect(await digests.digest(jobId, segs)).toEqual({ bytes: 370_006, sha256: whole });
    expect(digests.size).toBe(0);
  });

  it("segments coded by another process are read at the job's end, from where the running hash stopped", async () => {
    const { jobId, segs, whole } = await stored([10_000, 20_000, 30_000, 40_000]);
    const digests = new OutputDigests(store);
    digests.coded(jobId, "g1", 0, 10_000);
    digests.coded(jobId, "g1", 2, 30_000); // segment 1 was coded elsewhere
    await vi.waitFor(() => expect(digests.position(jobId, "g1")).toBe(1));
    expect(await digests.digest(jobId, segs)).toEqual({ bytes: 100_000, sha256: whole });
    // a process that coded none of them (a fresh worker): the whole output, read at the end
    expect(await new OutputDigests(store).digest(jobId, segs)).toEqual({ bytes: 100_000, sha256: whole });
  });

  it("a new upload of the job starts the hash over; two ends at once take one digest", async () => {
    const first = await stored([1000, 2000], "old");
    const digests = new OutputDigests(store);
    digests.coded(first.jobId, "old", 0, 1000);
    await vi.waitFor(() => expect(digests.position(first.jobId, "old")).toBe(1));
    // the same job, sent again: other outputs under another generation
    const outs = [randomBytes(3000), randomBytes(4000)];
    for (const [idx, o] of outs.entries()) {
      await store.put(jobKeys.segmentOut(first.jobId, idx, "new"), Readable.from([o]));
    }
    digests.coded(first.jobId, "new", 0, 3000);
    digests.coded(first.jobId, "new", 1, 4000);
    const segs = rows(first.jobId, "new", outs);
    const [a, b] = await Promise.all([digests.digest(first.jobId, segs), digests.digest(first.jobId, segs)]);
    expect(a).toEqual({ bytes: 7000, sha256: sha(Buffer.concat(outs)) });
    expect(b).toEqual(a);
  });

  it("a segment whose output differs from its row's size: the running hash is dropped and the end refuses", async () => {
    const { jobId, segs, whole } = await stored([500, 600, 700]);
    const log: string[] = [];
    const digests = new OutputDigests(store, 256, (l) => log.push(l));
    digests.coded(jobId, "g1", 0, 500);
    digests.coded(jobId, "g1", 1, 601); // the row says 601: the running hash stops
    await vi.waitFor(() => expect(log.join("\n")).toMatch(/running SHA-256 stopped.*600 bytes.*601/));
    expect(digests.position(jobId, "g1")).toBe(0);
    // the rows are right: the end reads the whole output again and gets the right digest
    expect(await digests.digest(jobId, segs)).toEqual({ bytes: 1800, sha256: whole });
    // rows that disagree with the stored outputs: refused, never a wrong digest
    const wrong = segs.map((s, i) => (i === 2 ? { ...s, out_bytes: 699 } : s));
    await expect(new OutputDigests(store).digest(jobId, wrong)).rejects.toThrow(/700 bytes, its row records 699/);
  });
});

describe("job events: a waiter wakes on a change, a timeout or an abort", () => {
  it("wakes on changed(job) at once, only that job's waiters", async () => {
    vi.useFakeTimers();
    try {
      const ev = new JobEvents();
      let a = false;
      let b = false;
      void ev.wait("job_a", 60_000).then(() => {
        a = true;
      });
      void ev.wait("job_b", 60_000).then(() => {
        b = true;
      });
      expect(ev.waiting).toBe(2);
      ev.changed("job_a");
      await vi.advanceTimersByTimeAsync(0);
      expect([a, b]).toEqual([true, false]);
      await vi.advanceTimersByTimeAsync(60_000);
      expect(b).toBe(true);
      expect(ev.waiting).toBe(0);
      const ac = new AbortController();
      const w = ev.wait("job_c", 60_000, ac.signal);
      ac.abort();
      await w;
      expect(ev.waiting).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("the table queue's idle workers wake on another process's enqueue (wake file)", () => {
  it("a worker polling once an hour takes a task enqueued by another queue object on the same file at once", async () => {
    const { db, dataDir } = await freshDatabase("sqlite");
    const wakeFile = path.join(dataDir, "queue-suite.wake");
    // two queue objects share nothing in memory: as a service and a `labphi worker` on one SQLite file
    const producer = new TableTaskQueue(db.kysely, { queue: "wake", pollMs: 3_600_000, wakeFile });
    const worker = new TableTaskQueue(db.kysely, { queue: "wake", pollMs: 3_600_000, wakeFile });
    const ran: string[] = [];
    try {
      await worker.work(async (_name, payload) => {
        ran.push((payload as { n: string }).n);
      });
      // the worker's first claim found nothing: it sleeps for an hour unless woken
      await new Promise((r) => setTimeout(r, 50));
      await producer.enqueue("t", { n: "one" }, { id: "wake-1" });
      await vi.waitFor(() => expect(ran).toEqual(["one"]), { timeout: 10_000 });
    } finally {
      await worker.stop({ graceMs: 1000 });
      await db.close();
    }
  });
});

describe("a followed download in the worker's process ends on the job's events, not a poll", () => {
  it("follow with hour-long polls still streams every segment and ends when the job is done", async () => {
    const t = await testApp("sqlite", { JOB_SEGMENT_BYTES: String(64 * 1024), JOB_WORKER_IN_SERVICE: "true" });
    try {
      const data = Buffer.from(
        Array.from({ length: 12_000 }, (_, i) => `line ${i} value=${(i * 7919) % 10007}\n`).join(""),
      );
      const bought = await t.app.inject({
        method: "POST",
        url: "/api/x402-suite",
        payload: { product: "auto", dataClass: "text", op: "compress", level: "fast", bytes: data.length },
      });
      expect(bought.statusCode, bought.body).toBe(200);
      const { job_id: id, job_token: token } = bought.json() as { job_id: string; job_token: string };
      const { transfers } = t.app.services;
      // started before the input: it waits for the segments, and only events can wake it
      const followed = transfers.follow(id, { pollMs: 3_600_000, endPollMs: 3_600_000 });
      const got: Buffer[] = [];
      const reading = (async () => {
        for await (const c of followed) got.push(c as Buffer);
      })();
      const put = await t.app.inject({
        method: "PUT",
        url: `/api/jobs/${id}/input`,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/octet-stream" },
        payload: data,
      });
      expect(put.statusCode, put.body).toBe(200);
      await reading;
      const job = await t.app.services.jobs.get(id);
      expect(job.state).toBe("done");
      expect(job.segments_total).toBeGreaterThan(1);
      expect(sha(Buffer.concat(got))).toBe(job.output_sha256);
    } finally {
      await t.close();
    }
  }, 60_000);
});
