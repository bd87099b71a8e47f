import { createHash, randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Db, nowIso } from "../../src/db/database.js";
import type { App } from "../../src/http/types.js";
import { JobManager } from "../../src/jobs/manage.js";
import { JobRetention } from "../../src/jobs/retention.js";
import { jobKeys, type ObjectStore } from "../../src/jobs/storage/types.js";
import { jobStore } from "../../src/jobs/store.js";
import type { JobRow, JobState } from "../../src/jobs/tables.js";
import { appOn } from "../support/app.js";
import { type Engine, freshDatabase } from "../support/databases.js";
import { freeJob, jobRow } from "../support/jobs.js";
import { startS3rver, type TestS3 } from "../support/s3rver.js";

/**
 * Issue #23 item 2 (listing, delete, digests): `GET /api/jobs` lists the jobs of the join-work
 * identity that calls (newest first, keyset pages, a state filter, never another identity's);
 * `DELETE /api/jobs/:id` with the job token deletes its input and output (local disk, S3 via
 * s3rver) and answers 204, then every route of the job answers 410 job_deleted; downloads carry
 * `Repr-Digest: sha-256=:…:` (RFC 9530). Before the feature: GET /api/jobs and DELETE were 404,
 * and the output had no Repr-Digest.
 */

const SEED = "correct horse battery staple 1234"; // 33 ASCII bytes

const CASES: { store: "local" | "s3"; engine: Engine }[] = [
  { store: "local", engine: "sqlite" },
  { store: "s3", engine: "sqlite" },
  { store: "local", engine: "postgres" },
];

describe.each(CASES)("job listing, delete and digests: $store store, $engine", ({ store, engine }) => {
  let s3: TestS3 | undefined;
  let app: App;
  let db: Db;
  let storage: ObjectStore;

  beforeAll(async () => {
    s3 = store === "s3" ? await startS3rver() : undefined;
    const fresh = await freshDatabase(engine);
    db = fresh.db;
    app = await appOn(db, s3?.env ?? {});
    storage = app.services.storage;
    // the jobs' scheduler is not under test
    app.services.jobs.scheduler = { schedule: async () => {} };
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
    await s3?.close();
  });

  const join = async (name: string) => {
    const r = await app.inject({
      method: "POST",
      url: "/api/join-work",
      payload: { name, intent: "I want to compress my sensor logs.", seed: SEED },
    });
    expect(r.statusCode, r.body).toBe(201);
    return r.json() as { token: string; identity_id: string };
  };
  const list = (query: string, headers: Record<string, string>) =>
    app.inject({ method: "GET", url: `/api/jobs${query}`, headers });
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  it("lists the caller's jobs newest first, in keyset pages, filtered by state; never another identity's", async () => {
    const a = await join("Ada");
    const b = await join("Bob");
    const t0 = Date.parse("2026-11-01T00:00:00.000Z");
    const states: JobState[] = ["done", "failed", "done", "queued", "awaiting_input", "done", "cancelled"];
    const mine: JobRow[] = [];
    for (const [i, state] of states.entries()) {
      // two jobs share a creation time: the id breaks the tie
      const at = new Date(t0 + Math.min(i, 5) * 60_000).toISOString();
      const row = jobRow({ identity_id: a.identity_id, state, created_at: at, updated_at: at });
      await jobStore.insertJob(db.kysely, row);
      mine.push(row);
    }
    const theirs = jobRow({ identity_id: b.identity_id, state: "done", created_at: new Date(t0 + 9e6).toISOString() });
    await jobStore.insertJob(db.kysely, theirs);
    await jobStore.insertJob(db.kysely, jobRow({ identity_id: null, state: "done" }));

    const expected = [...mine]
      .sort((x, y) => (x.created_at === y.created_at ? (x.id < y.id ? 1 : -1) : x.created_at < y.created_at ? 1 : -1))
      .map((r) => r.id);

    // every page of 3, following next_cursor
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r = await list(`?limit=3${cursor ? `&cursor=${cursor}` : ""}`, bearer(a.token));
      expect(r.statusCode, r.body).toBe(200);
      const body = r.json() as { items: { job_id: string }[]; limit: number; next_cursor: string | null };
      expect(body.limit).toBe(3);
      expect(body.items.length).toBeLessThanOrEqual(3);
      seen.push(...body.items.map((i) => i.job_id));
      cursor = body.next_cursor;
      pages++;
    } while (cursor && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual(expected);
    expect(seen).not.toContain(theirs.id);

    // one page, default size: the status route's view of each job
    const all = await list("", bearer(a.token));
    expect(all.statusCode).toBe(200);
    const first = all.json().items[0];
    const newest = mine.find((r) => r.id === expected[0]) as JobRow;
    expect(first).toEqual(JSON.parse(JSON.stringify(app.services.jobs.view(newest))));
    expect(all.json().next_cursor).toBeNull();

    // the state filter
    const done = await list("?state=done&limit=2", bearer(a.token));
    expect(done.statusCode).toBe(200);
    const doneIds = expected.filter((id) => mine.find((r) => r.id === id)?.state === "done");
    expect(done.json().items.map((i: { job_id: string }) => i.job_id)).toEqual(doneIds.slice(0, 2));
    const rest = await list(`?state=done&limit=2&cursor=${done.json().next_cursor}`, bearer(a.token));
    expect(rest.json().items.map((i: { job_id: string }) => i.job_id)).toEqual(doneIds.slice(2));
    expect(rest.json().next_cursor).toBeNull();

    // the other identity sees only its own (X-Identity-Token works too)
    const other = await list("", { "x-identity-token": b.token });
    expect(other.json().items.map((i: { job_id: string }) => i.job_id)).toEqual([theirs.id]);

    // bad input: 400, never a 500
    expect((await list("?state=nope", bearer(a.token))).statusCode).toBe(400);
    expect((await list("?limit=101", bearer(a.token))).statusCode).toBe(400);
    const badCursor = await list("?cursor=bm90LWEtY3Vyc29y", bearer(a.token));
    expect(badCursor.statusCode).toBe(400);
    expect(badCursor.json().code).toBe("invalid_cursor");
  });

  it("answers 401 without a valid identity token (a job token is not one)", async () => {
    const none = await list("", {});
    expect(none.statusCode).toBe(401);
    expect(none.headers["content-type"]).toContain("application/problem+json");
    expect(none.json().code).toBe("identity_token_required");
    const wrong = await list("", bearer(`lpi_${"A".repeat(43)}`));
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().code).toBe("identity_token_invalid");
    const { token } = await freeJob(app, 1000);
    const jobToken = await list("", bearer(token));
    expect(jobToken.statusCode).toBe(401);
  });

  /** a done job with an input and two segment outputs in the store; its output_sha256 is the real one */
  async function doneJob(): Promise<{ job: JobRow; auth: Record<string, string>; output: Buffer }> {
    const { job, auth } = await freeJob(app, 10_000);
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
          out_sha256: createHash("sha256").update(out).digest("hex"),
          attempts: 1,
          worker: null,
          error: null,
          updated_at: nowIso(),
          gen: null,
        })
        .execute();
    }
    const output = Buffer.concat(outs);
    const at = nowIso();
    const moved = await jobStore.jobTransition(db.kysely, job.id, ["awaiting_input"], {
      state: "done",
      bytes_in: 3000,
      bytes_out: output.length,
      output_sha256: createHash("sha256").update(output).digest("hex"),
      segments_total: 2,
      segments_done: 2,
      started_at: at,
      finished_at: at,
    });
    expect(moved).toBe(true);
    return { job, auth, output };
  }
  const keysOf = (id: string) => [jobKeys.input(id), jobKeys.segmentOut(id, 0), jobKeys.segmentOut(id, 1)];
  const sizes = (id: string) => Promise.all(keysOf(id).map((k) => storage.size(k)));

  it("downloads carry Repr-Digest: the SHA-256 of the bytes, as RFC 9530 writes it", async () => {
    const { job, auth, output } = await doneJob();
    const r = await app.inject({ method: "GET", url: `/api/jobs/${job.id}/output`, headers: auth });
    expect(r.statusCode).toBe(200);
    expect(r.rawPayload.equals(output)).toBe(true);
    const digest = createHash("sha256").update(r.rawPayload).digest("base64");
    expect(r.headers["repr-digest"]).toBe(`sha-256=:${digest}:`);
    // a range is part of the same representation: the same Repr-Digest
    const part = await app.inject({
      method: "GET",
      url: `/api/jobs/${job.id}/output`,
      headers: { ...auth, range: "bytes=0-9" },
    });
    expect(part.statusCode).toBe(206);
    expect(part.headers["repr-digest"]).toBe(`sha-256=:${digest}:`);
  });

  it("DELETE removes the job's input and output, answers 204, then 410 job_deleted everywhere", async () => {
    const { job, auth } = await doneJob();
    const other = await doneJob();
    expect(await sizes(job.id)).toEqual([3000, 700, 500]);
    const del = (headers: Record<string, string>) =>
      app.inject({ method: "DELETE", url: `/api/jobs/${job.id}`, headers });

    // no token, another job's token: refused as on the other job routes, nothing deleted
    const none = await del({});
    expect(none.statusCode).toBe(401);
    expect(none.json().code).toBe("job_token_required");
    const wrong = await del(other.auth);
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().code).toBe("job_token_invalid");
    expect(await sizes(job.id)).toEqual([3000, 700, 500]);

    const ok = await del(auth);
    expect(ok.statusCode, ok.body).toBe(204);
    expect(ok.body).toBe("");
    expect(await sizes(job.id)).toEqual([undefined, undefined, undefined]);
    const row = (await jobStore.job(db.kysely, job.id)) as JobRow & { deleted_at: string | null };
    expect(row.deleted_at).not.toBeNull();
    expect(row.purged_at).not.toBeNull();
    // the other job is untouched
    expect(await sizes(other.job.id)).toEqual([3000, 700, 500]);

    for (const [method, url] of [
      ["GET", `/api/jobs/${job.id}`],
      ["GET", `/api/jobs/${job.id}/output`],
      ["DELETE", `/api/jobs/${job.id}`],
    ] as const) {
      const r = await app.inject({ method, url, headers: auth });
      expect(r.statusCode, `${method} ${url}`).toBe(410);
      expect(r.json()).toMatchObject({ code: "job_deleted", job_id: job.id, deleted_at: row.deleted_at });
    }
    const input = await app.inject({
      method: "PUT",
      url: `/api/jobs/${job.id}/input`,
      headers: { ...auth, "content-type": "application/octet-stream" },
      payload: Buffer.from("again"),
    });
    expect(input.statusCode).toBe(410);
    expect(input.json().code).toBe("job_deleted");
    const tus = await app.inject({
      method: "HEAD",
      url: `/api/jobs/uploads/${job.id}`,
      headers: { ...auth, "tus-resumable": "1.0.0" },
    });
    expect(tus.statusCode).toBe(410);
  });

  it("a job that is queued or running is not deleted (409 job_running); one awaiting input is", async () => {
    for (const state of ["queued", "running", "uploading"] as const) {
      const { job, auth } = await freeJob(app, 10_000);
      await storage.put(jobKeys.input(job.id), Readable.from([randomBytes(100)]));
      await jobStore.jobTransition(db.kysely, job.id, ["awaiting_input"], { state });
      const r = await app.inject({ method: "DELETE", url: `/api/jobs/${job.id}`, headers: auth });
      expect(r.statusCode, state).toBe(409);
      expect(r.json()).toMatchObject({ code: "job_running", state });
      expect(await storage.size(jobKeys.input(job.id))).toBe(100);
      expect((await app.inject({ method: "GET", url: `/api/jobs/${job.id}`, headers: auth })).statusCode).toBe(200);
    }
    // a job waiting for its input, bought with an identity: listed, deleted, no longer listed
    const cy = await join("Cy");
    const waiting = await freeJob(app, 10_000);
    await db.kysely.updateTable("jobs").set({ identity_id: cy.identity_id }).where("id", "=", waiting.job.id).execute();
    const ids = async () =>
      (await list("", bearer(cy.token))).json().items.map((i: { job_id: string }) => i.job_id) as string[];
    expect(await ids()).toEqual([waiting.job.id]);
    const r = await app.inject({ method: "DELETE", url: `/api/jobs/${waiting.job.id}`, headers: waiting.auth });
    expect(r.statusCode).toBe(204);
    expect(await ids()).toEqual([]);
    // a deleted job can never take input again (an upload racing the delete cannot revive it)
    expect(await jobStore.jobTransition(db.kysely, waiting.job.id, ["awaiting_input"], { state: "uploading" })).toBe(
      false,
    );
    expect((await jobStore.job(db.kysely, waiting.job.id))?.state).toBe("awaiting_input");
    const put = await app.inject({
      method: "PUT",
      url: `/api/jobs/${waiting.job.id}/input`,
      headers: { ...waiting.auth, "content-type": "application/octet-stream" },
      payload: Buffer.from("late bytes"),
    });
    expect(put.statusCode).toBe(410);
    expect(await storage.size(jobKeys.input(waiting.job.id))).toBeUndefined();
  });

  it("a deletion the store fails (S3 unreachable) still answers 204 and 410; the retention sweep deletes the data", async () => {
    const { job, auth } = await doneJob();
    const failing = Object.create(storage) as ObjectStore;
    failing.deletePrefix = async () => {
      throw new Error("connect ECONNREFUSED");
    };
    const lines: string[] = [];
    const manager = new JobManager(db.kysely, app.services.jobs, { store: failing, log: (l) => lines.push(l) });
    const fresh = (await jobStore.job(db.kysely, job.id)) as JobRow;
    await manager.delete(fresh);
    expect(lines.join("\n")).toContain("retention sweep retries");
    expect(await sizes(job.id)).toEqual([3000, 700, 500]);
    const status = await app.inject({ method: "GET", url: `/api/jobs/${job.id}`, headers: auth });
    expect(status.statusCode).toBe(410);
    expect(status.json().code).toBe("job_deleted");
    expect((await jobStore.job(db.kysely, job.id))?.purged_at).toBeNull();

    const result = await new JobRetention({
      db: db.kysely,
      kind: db.kind,
      store: storage,
      retentionHours: 72,
      abandonedUploadHours: 24,
    }).sweep();
    expect(result.swept).toBe(true);
    expect(await sizes(job.id)).toEqual([undefined, undefined, undefined]);
    const row = (await jobStore.job(db.kysely, job.id)) as JobRow;
    expect(row.purged_at).not.toBeNull();
    // deleted, not expired: still 410 job_deleted
    expect(row.expired_at).toBeNull();
    const again = await app.inject({ method: "GET", url: `/api/jobs/${job.id}/output`, headers: auth });
    expect(again.json().code).toBe("job_deleted");
  });
});
