import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Db, nowIso, openDatabase } from "../../src/db/database.js";
import type { App } from "../../src/http/types.js";
import { JobRetention, tusSpoolDir } from "../../src/jobs/retention.js";
import { jobKeys, type ObjectStore } from "../../src/jobs/storage/types.js";
import { jobStore } from "../../src/jobs/store.js";
import type { JobRow } from "../../src/jobs/tables.js";
import { appOn } from "../support/app.js";
import { type Engine, freshDatabase } from "../support/databases.js";
import { freeJob } from "../support/jobs.js";
import { startS3rver, type TestS3 } from "../support/s3rver.js";

/**
 * Issue #21 item 3: job data expires. With a clock the test controls: a job that ended 73 h ago is
 * swept (its input and outputs gone from the local disk or from S3 via s3rver) and answers 410
 * job_expired on its status, output and input routes; one that ended 71 h ago is kept; an upload
 * abandoned for more than 24 h is removed (partial input, growing file, tus spool), an orphan spool
 * file too; on PostgreSQL two sweepers at once: one works, the other stands aside. Before the fix
 * nothing was ever deleted and every job answered 200 for ever.
 */

const HOUR = 3600_000;

const CASES: { store: "local" | "s3"; engine: Engine }[] = [
  { store: "local", engine: "sqlite" },
  { store: "s3", engine: "sqlite" },
  { store: "local", engine: "postgres" },
];

describe.each(CASES)("job data retention: $store store, $engine", ({ store, engine }) => {
  let s3: TestS3 | undefined;
  let t: { app: App };
  let databaseUrl: string | undefined;
  let base: string;
  let db: Db;
  let storage: ObjectStore;
  let dataDir: string;
  const _seq = 0;

  beforeAll(async () => {
    s3 = store === "s3" ? await startS3rver() : undefined;
    const fresh = await freshDatabase(engine);
    databaseUrl = fresh.databaseUrl;
    t = { app: await appOn(fresh.db, s3?.env ?? {}) };
    await t.app.listen({ host: "127.0.0.1", port: 0 });
    const addr = t.app.server.address();
    if (!addr || typeof addr === "string") throw new Error("no address");
    base = `http://127.0.0.1:${addr.port}`;
    db = t.app.services.db;
    storage = t.app.services.storage;
    dataDir = t.app.services.config.dataDir;
    // the jobs' scheduler is not under test: a completed upload only queues the job
    t.app.services.jobs.scheduler = { schedule: async () => {} };
  });
  afterAll(async () => {
    await t?.app.close();
    await db?.close();
    await s3?.close();
  });

  /** a sweeper over the app's database and store, on the test's clock */
  const sweeper = (now: number, over: Partial<ConstructorParameters<typeof JobRetention>[0]> = {}) =>
    new JobRetention({
      db: db.kysely,
      kind: db.kind,
      store: storage,
      spoolDir: tusSpoolDir(dataDir),
      localRoot: storage.kind === "local" ? dataDir : undefined,
      retentionHours: 72,
      abandonedUploadHours: 24,
      now: () => now,
      ...over,
    });

  const newJob = (bytes = 10_000) => freeJob(t.app, bytes);

  /** a done job with an input and two segment outputs, ended at `finishedAt` */
  async function doneJob(finishedAt: number): Promise<{ job: JobRow; auth: Record<string, string> }> {
    const { job, auth } = await newJob();
    await storage.put(jobKeys.input(job.id), Readable.from([randomBytes(3000)]));
    const outs = [randomBytes(700), randomBytes(500)];
    for (const [idx, out] of outs.entries()) {
      await storage.put(jobKeys.segmentOut(job.id, idx), Readable.from([out]));
      await db.kysely
        .insertInto("job_segments")
        .values({
          job_id: job.id,
          idx,
          state: "done",
          in_offset: idx * 1500,
          in_length: 1500,
          out_bytes: out.length,
          out_sha256: "0".repeat(64),
          attempts: 1,
          worker: null,
          error: null,
          updated_at: nowIso(),
          gen: null,
        })
        .execute();
    }
    const ended = new Date(finishedAt).toISOString();
    const moved = await jobStore.jobTransition(db.kysely, job.id, ["awaiting_input"], {
      state: "done",
      bytes_in: 3000,
      bytes_out: 1200,
      output_sha256: "a".repeat(64),
      segments_total: 2,
      segments_done: 2,
      started_at: ended,
      finished_at: ended,
      updated_at: ended,
    });
    expect(moved).toBe(true);
    return { job, auth };
  }

  const keysOf = (id: string) => [jobKeys.input(id), jobKeys.segmentOut(id, 0), jobKeys.segmentOut(id, 1)];
  const sizes = (id: string) => Promise.all(keysOf(id).map((k) => storage.size(k)));
  const row = async (id: string) => (await jobStore.job(db.kysely, id)) as JobRow;
  const get = (url: string, auth: Record<string, string>) => fetch(`${base}${url}`, { headers: auth });
  const put = (id: string, auth: Record<string, string>, body = Buffer.from("new bytes")) =>
    fetch(`${base}/api/jobs/${id}/input`, {
      method: "PUT",
      headers: { ...auth, "Content-Type": "application/octet-stream" },
      body,
    });
  const tus = (auth: Record<string, string>, extra: Record<string, string>) => ({
    ...auth,
    "Tus-Resumable": "1.0.0",
    ...extra,
  });

  it("a job that ended 73 h ago is swept and answers 410 job_expired; one that ended 71 h ago is kept", async () => {
    const now = Date.now();
    const old = await doneJob(now - 73 * HOUR);
    const young = await doneJob(now - 71 * HOUR);
    expect(await sizes(old.job.id)).toEqual([3000, 700, 500]);

    const result = await sweeper(now).sweep();
    expect(result.swept).toBe(true);
    if (!result.swept) return;
    expect(result.expired).toContain(old.job.id);
    expect(result.expired).not.toContain(young.job.id);
    expect(result.failed).toEqual([]);

    // the old job's data is gone (files under DATA_DIR/jobs, or the bucket's objects)
    expect(await sizes(old.job.id)).toEqual([undefined, undefined, undefined]);
    if (store === "local") expect(fs.existsSync(path.join(dataDir, "jobs", old.job.id))).toBe(false);
    // the young one's is all there
    expect(await sizes(young.job.id)).toEqual([3000, 700, 500]);

    // recorded in the row (so it holds after a restart)
    const expired = await row(old.job.id);
    expect(expired.expired_at).toBe(new Date(now).toISOString());
    expect(expired.purged_at).not.toBeNull();
    expect(expired.state).toBe("done");
    expect((await row(young.job.id)).expired_at).toBeNull();

    // 410 job_expired on status, output and input; the young job's output is still served
    const status = await get(`/api/jobs/${old.job.id}`, old.auth);
    expect(status.status).toBe(410);
    const problem = (await status.json()) as Record<string, unknown>;
    expect(problem).toMatchObject({
      code: "job_expired",
      job_id: old.job.id,
      state: "done",
      expired_at: expired.expired_at,
      output_sha256: "a".repeat(64),
    });
    const output = await get(`/api/jobs/${old.job.id}/output`, old.auth);
    expect(output.status).toBe(410);
    expect(((await output.json()) as { code: string }).code).toBe("job_expired");
    const input = await put(old.job.id, old.auth);
    expect(input.status).toBe(410);
    expect(((await input.json()) as { code: string }).code).toBe("job_expired");
    const youngStatus = await get(`/api/jobs/${young.job.id}`, young.auth);
    expect(youngStatus.status).toBe(200);
    expect(((await youngStatus.json()) as { data_expires_at: string }).data_expires_at).toBe(
      new Date(now - 71 * HOUR + 72 * HOUR).toISOString(),
    );
    const kept = await get(`/api/jobs/${young.job.id}/output`, young.auth);
    expect(kept.status).toBe(200);
    expect((await kept.arrayBuffer()).byteLength).toBe(1200);

    // a second sweep finds nothing more to do
    const again = await sweeper(now).sweep();
    expect(again).toMatchObject({ swept: true, expired: [], abandoned: [], failed: [] });

    // a restarted service (a new app on the same database) still answers 410
    const restarted = await appOn(db, s3?.env ?? {});
    try {
      const res = await restarted.inject({ method: "GET", url: `/api/jobs/${old.job.id}`, headers: old.auth });
      expect(res.statusCode).toBe(410);
      expect(res.json()).toMatchObject({ code: "job_expired", expired_at: expired.expired_at });
    } finally {
      await restarted.close();
    }
  });

  it("an upload abandoned for more than 24 h is removed (partial input, growing file, tus spool); a younger one is kept", async () => {
    const spool = tusSpoolDir(dataDir);
    // A: a tus upload that stopped half way (spool file, job uploading)
    const a = await newJob(4000);
    const created = await fetch(`${base}/api/jobs/uploads`, {
      method: "POST",
      headers: tus(a.auth, {
        "Upload-Length": "4000",
        "Upload-Metadata": `job_id ${Buffer.from(a.job.id).toString("base64")}`,
      }),
    });
    expect(created.status).toBe(201);
    const url = new URL(created.headers.get("location") as string).pathname;
    const patched = await fetch(`${base}${url}`, {
      method: "PATCH",
      headers: tus(a.auth, { "Upload-Offset": "0", "Content-Type": "application/offset+octet-stream" }),
      body: randomBytes(1500),
    });
    expect(patched.status).toBe(204);
    expect(fs.existsSync(path.join(spool, a.job.id))).toBe(true);
    expect((await row(a.job.id)).state).toBe("uploading");

    // B: a PUT cut off by a crash: part of its input stored, and on the local store a growing file
    const b = await newJob(4000);
    await jobStore.jobTransition(db.kysely, b.job.id, ["awaiting_input"], { state: "uploading", upload_gen: "abc" });
    await storage.put(jobKeys.input(b.job.id), Readable.from([randomBytes(1000)]));
    const growing = path.join(dataDir, "jobs", b.job.id, ".input.abc.growing");
    if (store === "local") fs.writeFileSync(growing, randomBytes(500));

    // C: a job bought 23 h before the sweep's clock (nothing uploaded yet): kept
    const c = await newJob();
    // an orphan spool entry (its job is gone)
    fs.writeFileSync(path.join(spool, "job_orphan000"), "x");
    fs.writeFileSync(path.join(spool, "job_orphan000.json"), "{}");

    // the sweep runs 25 h from now; C's last change is 23 h before that
    const later = Date.now() + 25 * HOUR;
    await db.kysely
      .updateTable("jobs")
      .set({ updated_at: new Date(later - 23 * HOUR).toISOString() })
      .where("id", "=", c.job.id)
      .execute();

    // 23 h of silence is not enough: nothing abandoned yet
    const early = await sweeper(Date.now() + 23 * HOUR).sweep();
    expect(early.swept && early.abandoned).toEqual([]);
    expect(fs.existsSync(path.join(spool, a.job.id))).toBe(true);

    const result = await sweeper(later).sweep();
    expect(result.swept).toBe(true);
    if (!result.swept) return;
    expect([...result.abandoned].sort()).toEqual([a.job.id, b.job.id].sort());
    expect(result.spoolRemoved).toEqual(["job_orphan000"]);

    expect(fs.existsSync(path.join(spool, a.job.id))).toBe(false);
    expect(fs.existsSync(path.join(spool, `${a.job.id}.json`))).toBe(false);
    expect(fs.existsSync(path.join(spool, "job_orphan000"))).toBe(false);
    expect(await storage.size(jobKeys.input(b.job.id))).toBeUndefined();
    if (store === "local") expect(fs.existsSync(growing)).toBe(false);

    for (const j of [a, b]) {
      const r = await row(j.job.id);
      expect(r).toMatchObject({ state: "cancelled", error_code: "upload_abandoned" });
      expect(r.expired_at).toBe(new Date(later).toISOString());
      const res = await get(`/api/jobs/${j.job.id}`, j.auth);
      expect(res.status).toBe(410);
      expect(((await res.json()) as { code: string }).code).toBe("job_expired");
    }
    // the abandoned upload cannot be resumed or sent again
    const head = await fetch(`${base}${url}`, { method: "HEAD", headers: tus(a.auth, {}) });
    expect(head.status).toBe(410);
    const resumed = await fetch(`${base}${url}`, {
      method: "PATCH",
      headers: tus(a.auth, { "Upload-Offset": "1500", "Content-Type": "application/offset+octet-stream" }),
      body: randomBytes(10),
    });
    expect(resumed.status).toBe(410);
    expect((await put(b.job.id, b.auth)).status).toBe(410);

    // C is kept and still takes its input
    expect((await row(c.job.id)).expired_at).toBeNull();
    const sent = await put(c.job.id, c.auth);
    expect(sent.status).toBe(200);
  });

  it.runIf(engine === "postgres")("two sweepers at once on PostgreSQL: one works, the other stands aside", async () => {
    const now = Date.now();
    const old = await doneJob(now - 100 * HOUR);
    // a second process's connection pool to the same database
    const other = openDatabase({ dataDir, databaseUrl });
    expect(other.kind).toBe("postgres");
    let deletions = 0;
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let entered: () => void = () => {};
    const inside = new Promise<void>((r) => {
      entered = r;
    });
    const slowStore: ObjectStore = {
      ...storage,
      kind: storage.kind,
      readsGrowing: storage.readsGrowing,
      put: storage.put.bind(storage),
      get: storage.get.bind(storage),
      size: storage.size.bind(storage),
      deletePrefix: async (prefix) => {
        deletions++;
        entered();
        await gate;
        await storage.deletePrefix(prefix);
      },
    };
    try {
      const first = sweeper(now, { store: slowStore }).sweep();
      await inside;
      // the first holds the lock while it deletes: the second (another pool) stands aside
      const second = await sweeper(now, { db: other.kysely, store: slowStore }).sweep();
      expect(second).toEqual({ swept: false, reason: "busy" });
      release();
      const done = await first;
      expect(done.swept && done.expired).toEqual([old.job.id]);
      expect(deletions).toBe(1);
      // the lock is free again once the first has finished
      const third = await sweeper(now, { db: other.kysely, store: slowStore }).sweep();
      expect(third).toMatchObject({ swept: true, expired: [] });
    } finally {
      release();
      await other.close();
    }
  });
});
