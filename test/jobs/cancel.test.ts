import { randomBytes } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../src/db/database.js";
import type { App } from "../../src/http/types.js";
import { JobManager } from "../../src/jobs/manage.js";
import { BullTaskQueue } from "../../src/jobs/queue/bullmq.js";
import { TableTaskQueue } from "../../src/jobs/queue/sqlite.js";
import type { TaskQueue } from "../../src/jobs/queue/types.js";
import { JobRunner, taskId } from "../../src/jobs/runner.js";
import { JobService } from "../../src/jobs/service.js";
import { LocalObjectStore } from "../../src/jobs/storage/local.js";
import { jobKeys, type ObjectStore } from "../../src/jobs/storage/types.js";
import { jobStore } from "../../src/jobs/store.js";
import type { JobRow } from "../../src/jobs/tables.js";
import { UsageLedger } from "../../src/jobs/usage.js";
import { appOn } from "../support/app.js";
import { type Engine, freshDatabase } from "../support/databases.js";
import { jobRow } from "../support/jobs.js";

/**
 * Issue #23 item 2, cancel: `POST /api/jobs/:id/cancel` with the job token ends the job
 * `cancelled` (200 with its view, the same again), removes its waiting segment tasks from the
 * queue (table queue and BullMQ), stops a running segment at its next unit within 5 s (measured on
 * both queues), refuses further input (409 job_cancelled, also mid-upload), and gives the free
 * volume the job did not code back to its caller (an identity's month, an IP's day). Cancel is not
 * a refund. Before the feature: the route was 404, and a running segment ran to its end.
 */

const SEED = "correct horse battery staple 1234"; // 33 ASCII bytes
const BODY = { product: "auto", dataClass: "text", op: "compress", level: "fast" } as const;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe.each(["sqlite", "postgres"] as Engine[])("cancelling a job over HTTP (%s)", (engine) => {
  let app: App;
  let db: Db;
  let queue: TaskQueue;
  let ipSeq = 0;
  const newIp = () => `203.0.113.${++ipSeq}`;

  beforeAll(async () => {
    const fresh = await freshDatabase(engine);
    db = fresh.db;
    app = await appOn(db, {
      // segments are queued, not run (no worker here): the queue's waiting tasks are under test
      JOB_WORKER_IN_SERVICE: "false",
      JOB_SEGMENT_BYTES: String(64 * 1024),
      // PostgreSQL: the BullMQ queue, as in production
      ...(fresh.databaseUrl ? { DATABASE_URL: fresh.databaseUrl } : {}),
    });
    queue = app.services.runner.queue;
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  const join = async (ip: string) => {
    const r = await app.inject({
      method: "POST",
      url: "/api/join-work",
      remoteAddress: ip,
      payload: { name: "Ada", intent: "I want to compress my sensor logs.", seed: SEED },
    });
    expect(r.statusCode, r.body).toBe(201);
    return r.json() as { token: string; identity_id: string };
  };
  /** a free job bought over HTTP, as a browser or an agent does */
  const buy = async (bytes: number, who: { ip: string; token?: string }) => {
    const r = await app.inject({
      method: "POST",
      url: "/api/x402-suite",
      remoteAddress: who.ip,
      payload: { ...BODY, bytes },
      headers: who.token ? { "x-identity-token": who.token } : {},
    });
    expect(r.statusCode, r.body).toBe(200);
    const { job_id, job_token } = r.json() as { job_id: string; job_token: string };
    return { id: job_id, auth: { authorization: `Bearer ${job_token}` } };
  };
  const cancel = (id: string, headers: Record<string, string>) =>
    app.inject({ method: "POST", url: `/api/jobs/${id}/cancel`, headers });
  const put = (id: string, headers: Record<string, string>, bytes: Buffer) =>
    app.inject({
      method: "PUT",
      url: `/api/jobs/${id}/input`,
      headers: { ...headers, "content-type": "application/octet-stream" },
      payload: bytes,
    });

  it("cancels a job waiting for its input: 200 with its view, the same 200 again; its input is refused after", async () => {
    const job = await buy(10_000, { ip: newIp() });
    expect((await cancel(job.id, {})).statusCode).toBe(401);
    expect((await cancel(job.id, { authorization: "Bearer jt_nope" })).statusCode).toBe(401);

    const r = await cancel(job.id, job.auth);
    expect(r.statusCode, r.body).toBe(200);
    const view = r.json();
    expect(view).toMatchObject({ job_id: job.id, state: "cancelled", error: { code: "cancelled" } });
    expect(view.finished_at).not.toBeNull();
    const again = await cancel(job.id, job.auth);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(view);
    const status = await app.inject({ method: "GET", url: `/api/jobs/${job.id}`, headers: job.auth });
    expect(status.json()).toMatchObject({ state: "cancelled", error: { code: "cancelled" } });

    // no input any more: PUT and tus creation and PATCH say why
    const p = await put(job.id, job.auth, randomBytes(100));
    expect(p.statusCode).toBe(409);
    expect(p.json()).toMatchObject({ code: "job_cancelled", state: "cancelled" });
    const tus = await app.inject({
      method: "POST",
      url: "/api/jobs/uploads",
      headers: {
        ...job.auth,
        "tus-resumable": "1.0.0",
        "upload-length": "100",
        "upload-metadata": `job_id ${Buffer.from(job.id).toString("base64")}`,
      },
    });
    expect(tus.statusCode).toBe(409);
    expect(tus.json().code).toBe("job_cancelled");
    const patch = await app.inject({
      method: "PATCH",
      url: `/api/jobs/uploads/${job.id}`,
      headers: {
        ...job.auth,
        "tus-resumable": "1.0.0",
        "upload-offset": "0",
        "content-type": "application/offset+octet-stream",
      },
      payload: randomBytes(100),
    });
    expect(patch.statusCode).toBe(409);
    expect(patch.json().code).toBe("job_cancelled");
  });

  it("a done or failed job is not cancelled (409 job_ended); a deleted one answers 410", async () => {
    for (const state of ["done", "failed"] as const) {
      const row = jobRow({ state, finished_at: new Date().toISOString() });
      await jobStore.insertJob(db.kysely, row);
      // jobRow's token is its id (token_hash = sha256(id))
      const r = await cancel(row.id, { authorization: `Bearer ${row.id}` });
      expect(r.statusCode, state).toBe(409);
      expect(r.json()).toMatchObject({ code: "job_ended", state });
      expect((await jobStore.job(db.kysely, row.id))?.state).toBe(state);
    }
    const job = await buy(10_000, { ip: newIp() });
    expect((await app.inject({ method: "DELETE", url: `/api/jobs/${job.id}`, headers: job.auth })).statusCode).toBe(
      204,
    );
    const r = await cancel(job.id, job.auth);
    expect(r.statusCode).toBe(410);
    expect(r.json().code).toBe("job_deleted");
  });

  it("an identity's month gets back what a cancelled job did not code; its waiting tasks leave the queue", async () => {
    const ip = newIp();
    const me = await join(ip);
    const quotes = app.services.quotes;
    const before = await quotes.freeRemaining(me.identity_id);
    expect(before).toBe(100_000_000_000n);

    // cancelled before any byte arrived: the month is as before the quote
    const waiting = await buy(10_000_000, { ip, token: me.token });
    expect(await quotes.freeRemaining(me.identity_id)).toBe(before - 10_000_000n);
    expect((await cancel(waiting.id, waiting.auth)).statusCode).toBe(200);
    expect(await quotes.freeRemaining(me.identity_id)).toBe(before);

    // input complete (recorded in the ledger), 4 segments queued, 2 of them coded: 131072 bytes stay counted
    const input = randomBytes(200_000);
    const job = await buy(200_000, { ip, token: me.token });
    const up = await put(job.id, job.auth, input);
    expect(up.statusCode, up.body).toBe(200);
    expect(up.json().state).toBe("queued");
    expect(await quotes.freeRemaining(me.identity_id)).toBe(before - 200_000n);
    const row = (await jobStore.job(db.kysely, job.id)) as JobRow;
    const segments = await jobStore.segments(db.kysely, job.id);
    expect(segments.map((s) => Number(s.in_length))).toEqual([65536, 65536, 65536, 3392]);
    const ids = segments.map((s) => taskId(job.id, s.gen, s.idx));
    for (const id of ids) expect((await queue.status(id))?.state).toBe("waiting");
    await db.kysely
      .updateTable("job_segments")
      .set({ state: "done", out_bytes: 1000 })
      .where("job_id", "=", job.id)
      .where("idx", "in", [0, 1])
      .execute();
    const r = await cancel(job.id, job.auth);
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json().state).toBe("cancelled");
    expect(await quotes.freeRemaining(me.identity_id)).toBe(before - 131_072n);
    // the waiting tasks are gone from the queue (the runner would skip them anyway)
    for (const id of ids) expect(await queue.status(id)).toBeUndefined();
    // idempotent: a second cancel gives nothing back twice
    expect((await cancel(job.id, job.auth)).statusCode).toBe(200);
    expect(await quotes.freeRemaining(me.identity_id)).toBe(before - 131_072n);
    expect(row.identity_id).toBe(me.identity_id);
  });

  it("an anonymous IP's day gets back the free bytes a cancelled job did not code", async () => {
    const ip = newIp();
    const quotes = app.services.quotes;
    const hash = quotes.ipHash({ ip }) as string;
    const before = await quotes.anonFreeRemaining(hash);
    expect(before).toBe(1_000_000_000n);
    const job = await buy(300_000_000, { ip });
    expect(await quotes.anonFreeRemaining(hash)).toBe(before - 300_000_000n);
    expect((await cancel(job.id, job.auth)).statusCode).toBe(200);
    expect(await quotes.anonFreeRemaining(hash)).toBe(before);
    // and the whole day's allowance can be bought again
    await buy(1_000_000_000, { ip });
    expect(await quotes.anonFreeRemaining(hash)).toBe(0n);
  });

  it("cancel is not a refund: a paid job ends cancelled, its payment stays, nothing is refunded", async () => {
    const refundsBefore = await db.kysely
      .selectFrom("refunds")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .executeTakeFirst();
    const row = jobRow({ state: "queued", paid_by: "x402_base_usdc", payment_ref: "proof_1" });
    await jobStore.insertJob(db.kysely, row);
    const r = await cancel(row.id, { authorization: `Bearer ${row.id}` });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ state: "cancelled", paid_by: "x402_base_usdc" });
    const refundsAfter = await db.kysely
      .selectFrom("refunds")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .executeTakeFirst();
    expect(Number(refundsAfter?.n)).toBe(Number(refundsBefore?.n));
    expect((await jobStore.job(db.kysely, row.id))?.payment_ref).toBe("proof_1");
  });

  it("an upload in progress stops taking bytes once the job is cancelled (409 job_cancelled)", async () => {
    const job = await buy(50_000_000, { ip: newIp() });
    let sent = 0;
    let stopped = false;
    // 64 KB every 50 ms: about 60 s for the whole input, unless the server stops it
    const body = new Readable({
      read() {
        if (stopped || sent >= 50_000_000) return this.push(null);
        setTimeout(() => {
          sent += 65_536;
          this.push(randomBytes(65_536));
        }, 50);
      },
    });
    const answer = app.inject({
      method: "PUT",
      url: `/api/jobs/${job.id}/input`,
      headers: { ...job.auth, "content-type": "application/octet-stream" },
      payload: body,
    });
    // the upload is under way
    for (let i = 0; i < 100 && ((await jobStore.job(db.kysely, job.id))?.state !== "uploading" || sent < 300_000); i++)
      await sleep(50);
    const t0 = Date.now();
    expect((await cancel(job.id, job.auth)).statusCode).toBe(200);
    const r = await answer;
    const ms = Date.now() - t0;
    stopped = true;
    expect(r.statusCode, r.body).toBe(409);
    expect(r.json().code).toBe("job_cancelled");
    expect(ms).toBeLessThan(5000);
    expect(sent).toBeLessThan(50_000_000);
    const stored = await app.services.storage.size(jobKeys.input(job.id));
    expect(stored === undefined || stored < sent).toBe(true);
    expect((await jobStore.job(db.kysely, job.id))?.state).toBe("cancelled");
  });

  it("a tus PATCH in progress stops taking bytes once the job is cancelled; the next request answers 409", async () => {
    const job = await buy(50_000_000, { ip: newIp() });
    const tusHeaders = { ...job.auth, "tus-resumable": "1.0.0" };
    const created = await app.inject({
      method: "POST",
      url: "/api/jobs/uploads",
      headers: {
        ...tusHeaders,
        "upload-length": "50000000",
        "upload-metadata": `job_id ${Buffer.from(job.id).toString("base64")}`,
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    // a real socket: the chunk trickles in (64 KB every 50 ms) until the server stops it
    const address = await app.listen({ port: 0, host: "127.0.0.1" });
    let sent = 0;
    const ended = new Promise<{ status?: number; error?: string }>((resolve) => {
      const req = http.request(`${address}/api/jobs/uploads/${job.id}`, {
        method: "PATCH",
        headers: { ...tusHeaders, "upload-offset": "0", "content-type": "application/offset+octet-stream" },
      });
      req.on("response", (res) => {
        res.resume();
        resolve({ status: res.statusCode });
      });
      req.on("error", (err) => resolve({ error: err.message }));
      const tick = setInterval(() => {
        if (req.destroyed || sent >= 50_000_000) {
          clearInterval(tick);
          return;
        }
        sent += 65_536;
        req.write(randomBytes(65_536));
      }, 50);
      req.on("close", () => clearInterval(tick));
    });
    for (let i = 0; i < 100 && sent < 400_000; i++) await sleep(50);
    const t0 = Date.now();
    expect((await cancel(job.id, job.auth)).statusCode).toBe(200);
    const end = await ended;
    const ms = Date.now() - t0;
    expect(ms).toBeLessThan(5000);
    expect(end.status === undefined || end.status >= 400).toBe(true);
    const sentAtStop = sent;
    await sleep(300);
    expect(sent).toBe(sentAtStop); // the client could send no more
    expect(sent).toBeLessThan(50_000_000);
    const patch = await app.inject({
      method: "PATCH",
      url: `/api/jobs/uploads/${job.id}`,
      headers: { ...tusHeaders, "upload-offset": "0", "content-type": "application/offset+octet-stream" },
      payload: randomBytes(100),
    });
    expect(patch.statusCode).toBe(409);
    expect(patch.json().code).toBe("job_cancelled");
    console.log(`${engine}: tus PATCH stopped ${ms} ms after the cancel (${sent} bytes sent; ${JSON.stringify(end)})`);
  });
});

// ---------------------------------------------------------------- a running segment stops

/** Text-like bytes. */
function textBytes(n: number, seed: number): Buffer {
  const words = ["lab", "phi", "segment", "worker", "queue", "lease", "codec", "stream", "\n"];
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

/** A local store whose positional reads (one per unit) take `delayMs`: a slow segment, unit by unit. */
function slowStore(inner: LocalObjectStore, delayMs: number, reads: number[]): ObjectStore {
  const slow = Object.create(inner) as ObjectStore;
  slow.openReader = async (key, opts) => {
    const reader = await inner.openReader(key, opts);
    return {
      read: async (into, position) => {
        await sleep(delayMs);
        reads.push(Date.now());
        return reader.read(into, position);
      },
      close: () => reader.close(),
    };
  };
  return slow;
}

const QUEUES: { name: string; engine: Engine }[] = [
  { name: "table queue on SQLite", engine: "sqlite" },
  { name: "BullMQ on PostgreSQL", engine: "postgres" },
];

describe.each(QUEUES)("a running segment stops at its next unit: $name", ({ engine }) => {
  let db: Db;
  let dir: string;
  let runner: JobRunner;
  let store: ObjectStore;
  let manager: JobManager;
  /** when each unit was read (one read per unit of 4 KiB) */
  const reads: number[] = [];

  beforeAll(async () => {
    const fresh = await freshDatabase(engine);
    db = fresh.db;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-cancel-"));
    // 150 ms per 4 KiB unit: a 256 KiB segment (64 units) takes about 10 s
    store = slowStore(new LocalObjectStore(dir), 150, reads);
    const queue: TaskQueue = fresh.databaseUrl
      ? new BullTaskQueue({ connectionString: fresh.databaseUrl, queue: "cancel", leaseMs: 10_000 })
      : new TableTaskQueue(db.kysely, { pollMs: 50, leaseMs: 10_000 });
    runner = new JobRunner({
      db: db.kysely,
      store,
      queue,
      segmentBytes: 256 * 1024,
      chunkBytes: 4096,
      attempts: 3,
      backoffMs: 50,
      threads: 1,
      concurrency: 2,
    });
    await runner.start();
    const jobs = new JobService(db.kysely, "http://x", "s".repeat(32));
    manager = new JobManager(db.kysely, jobs, { store, queue, usage: new UsageLedger(db.kysely) });
  }, 60_000);
  afterAll(async () => {
    await runner?.stop({ graceMs: 0 });
    await db?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("cancel: the two running segments stop within 5 s, the two waiting ones leave the queue, nothing more is coded", async () => {
    const input = textBytes(4 * 256 * 1024, 3);
    const row = jobRow({ op: "compress", bytes_quoted: input.length, bytes_in: input.length });
    await jobStore.insertJob(db.kysely, row);
    await store.put(jobKeys.input(row.id), Readable.from([input]));
    await runner.schedule(row);
    // both runners' segments are under way (a few units read)
    const until = Date.now() + 20_000;
    for (;;) {
      const segs = await jobStore.segments(db.kysely, row.id);
      if (segs.filter((s) => s.state === "running").length === 2 && reads.length >= 6) break;
      if (Date.now() > until) throw new Error(`segments not running: ${segs.map((s) => s.state)}`);
      await sleep(50);
    }
    const segs = await jobStore.segments(db.kysely, row.id);
    const waiting = segs.filter((s) => s.state === "pending").map((s) => taskId(row.id, s.gen, s.idx));
    const running = segs.filter((s) => s.state === "running").map((s) => taskId(row.id, s.gen, s.idx));
    expect(waiting).toHaveLength(2);

    const t0 = Date.now();
    const after = await manager.cancel((await jobStore.job(db.kysely, row.id)) as JobRow);
    expect(after.state).toBe("cancelled");
    for (const id of waiting) expect(await runner.queue.status(id)).toBeUndefined();
    // the running tasks end (not failed, not retried) once their segments stopped
    for (;;) {
      const states = await Promise.all(running.map(async (id) => (await runner.queue.status(id))?.state));
      if (states.every((s) => s === "done")) break;
      if (Date.now() - t0 > 15_000) throw new Error(`running tasks still ${states}`);
      await sleep(25);
    }
    const stoppedMs = Date.now() - t0;
    const lastRead = reads[reads.length - 1] as number;
    const unitsAfter = reads.filter((t) => t > t0).length;
    // no unit is read or coded once stopped
    const count = reads.length;
    await sleep(1500);
    expect(reads.length).toBe(count);
    console.log(
      `${engine}: cancel → both running segments stopped in ${stoppedMs} ms (last unit read ${lastRead - t0} ms after the cancel; ${unitsAfter} unit(s) read after it)`,
    );
    expect(stoppedMs).toBeLessThanOrEqual(5000);
    const ended = (await jobStore.job(db.kysely, row.id)) as JobRow;
    expect(ended.state).toBe("cancelled");
    expect(ended.error_code).toBe("cancelled");
    expect(ended.segments_done).toBe(0);
    const final = await jobStore.segments(db.kysely, row.id);
    expect(final.every((s) => s.state !== "done")).toBe(true);
    expect(final.filter((s) => s.error === "cancelled")).toHaveLength(2);
    // no segment output was written
    for (const s of final) expect(await store.size(jobKeys.segmentOut(row.id, s.idx, s.gen))).toBeUndefined();
  }, 60_000);
});
