import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { nowIso } from "../../src/db/database.js";
import { parseRange } from "../../src/jobs/output-headers.js";
import type { JobScheduler } from "../../src/jobs/service.js";
import { jobKeys } from "../../src/jobs/storage/types.js";
import { jobStore } from "../../src/jobs/store.js";
import type { JobRow } from "../../src/jobs/tables.js";
import { type TestApp, testApp } from "../support/app.js";
import type { Engine } from "../support/databases.js";
import { freeJob } from "../support/jobs.js";
import { startS3rver, type TestS3 } from "../support/s3rver.js";

const MiB = 1024 * 1024;
const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

/** `total` bytes in 64 KiB chunks, made as they are read (never whole in memory), from a 1 MiB random block. */
const BLOCK = randomBytes(MiB + 7);
function* generated(total: number, chunk = 64 * 1024): Generator<Buffer> {
  for (let sent = 0; sent < total; ) {
    const len = Math.min(chunk, total - sent);
    const at = sent % MiB;
    yield BLOCK.subarray(at, at + len);
    sent += len;
  }
}
function expectedSha(total: number): string {
  const h = createHash("sha256");
  for (const c of generated(total)) h.update(c);
  return h.digest("hex");
}

async function collect(r: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of r) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

interface Res {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  json: () => Record<string, unknown>;
}

/**
 * A real HTTP request (the app listens on a loopback port): bodies stream from an iterable with
 * backpressure; `holdBody` sends the headers only (to see an answer given before the body is read).
 * Writing stops once the answer has arrived.
 */
function request(
  base: string,
  method: string,
  url: string,
  opts: { headers?: Record<string, string>; body?: Buffer | Iterable<Buffer>; holdBody?: boolean } = {},
): Promise<Res> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${url}`, { method, headers: opts.headers, agent: false });
    let answered = false;
    req.on("response", (res) => {
      answered = true;
      const parts: Buffer[] = [];
      res.on("data", (c: Buffer) => parts.push(c));
      res.on("end", () => {
        const body = Buffer.concat(parts);
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body,
          json: () => JSON.parse(body.toString("utf8")) as Record<string, unknown>,
        });
        req.destroy();
      });
      res.on("error", reject);
    });
    req.on("error", (e) => {
      if (!answered) reject(e);
    });
    void (async () => {
      const { body } = opts;
      if (opts.holdBody) return req.flushHeaders();
      if (body === undefined) return req.end();
      if (Buffer.isBuffer(body)) return req.end(body);
      for (const chunk of body) {
        if (answered || req.destroyed) return;
        if (!req.write(chunk)) {
          await new Promise<void>((r) => {
            req.once("drain", r);
            req.once("close", r);
          });
        }
      }
      if (!answered && !req.destroyed) req.end();
    })().catch(reject);
  });
}

const CASES: { store: "local" | "s3"; engine: Engine }[] = [
  { store: "local", engine: "sqlite" },
  { store: "s3", engine: "sqlite" },
  { store: "local", engine: "postgres" },
];

describe.each(CASES)("suite job uploads and downloads: $store store, $engine", ({ store, engine }) => {
  let s3: TestS3 | undefined;
  let t: TestApp;
  let base: string;
  let scheduled: JobRow[];
  const _quoteSeq = 0;

  beforeAll(async () => {
    s3 = store === "s3" ? await startS3rver() : undefined;
    t = await testApp(engine, s3?.env ?? {});
    await t.app.listen({ host: "127.0.0.1", port: 0 });
    const addr = t.app.server.address();
    if (!addr || typeof addr === "string") throw new Error("no address");
    base = `http://127.0.0.1:${addr.port}`;
    // The hook the runner implements: a recording double.
    const scheduler: JobScheduler = {
      schedule: async (job) => {
        scheduled.push(job);
      },
    };
    t.app.services.jobs.scheduler = scheduler;
  });
  afterAll(async () => {
    await t?.close();
    await s3?.close();
  });
  beforeEach(() => {
    scheduled = [];
  });

  it("uses the configured store", () => {
    expect(t.app.services.storage.kind).toBe(store);
  });

  const newJob = (bytes: number) => freeJob(t.app, bytes, "balanced");

  const jobRow = async (id: string) => {
    const row = await jobStore.job(t.app.services.db.kysely, id);
    if (!row) throw new Error(`no job ${id}`);
    return row;
  };

  describe("PUT /api/jobs/:id/input", () => {
    it("streams a multi-MiB body into the store: bytes and SHA-256 recorded, queued, scheduler called", async () => {
      const total = 6 * MiB + 321;
      const { job, auth } = await newJob(8 * MiB);
      const res = await request(base, "PUT", `/api/jobs/${job.id}/input`, {
        headers: { ...auth, "Content-Type": "application/octet-stream" },
        body: generated(total),
      });
      expect(res.status, res.body.toString()).toBe(200);
      const view = res.json();
      expect(view).toMatchObject({
        job_id: job.id,
        state: "queued",
        bytes_quoted: 8 * MiB,
        bytes_in: total,
        input_sha256: expectedSha(total),
        level: "balanced",
        attempts: 0,
        error: null,
      });
      const row = await jobRow(job.id);
      expect(row.state).toBe("queued");
      expect(Number(row.bytes_in)).toBe(total);
      expect(row.input_sha256).toBe(expectedSha(total));
      expect(scheduled.map((j) => [j.id, j.state, Number(j.bytes_in)])).toEqual([[job.id, "queued", total]]);
      const storage = t.app.services.storage;
      expect(await storage.size(jobKeys.input(job.id))).toBe(total);
      expect(sha(await collect(await storage.get(jobKeys.input(job.id))))).toBe(expectedSha(total));

      // GET /api/jobs/:id reports it
      const got = await request(base, "GET", `/api/jobs/${job.id}`, { headers: auth });
      expect(got.status).toBe(200);
      expect(got.json()).toMatchObject({ state: "queued", bytes_in: total, bytes_out: 0, ratio: null });

      // a repeated PUT after completion: 409, nothing changes, not scheduled again
      const again = await request(base, "PUT", `/api/jobs/${job.id}/input`, {
        headers: { ...auth, "Content-Type": "application/octet-stream" },
        body: Buffer.from("other bytes"),
      });
      expect(again.status).toBe(409);
      expect(again.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(again.json()).toMatchObject({ code: "job_input_closed", state: "queued" });
      expect(await storage.size(jobKeys.input(job.id))).toBe(total);
      expect(scheduled).toHaveLength(1);
    });

    it("a Content-Length above the quote: 413 at once, nothing read or stored", async () => {
      const { job, auth } = await newJob(MiB);
      const res = await request(base, "PUT", `/api/jobs/${job.id}/input`, {
        headers: { ...auth, "Content-Type": "application/octet-stream", "Content-Length": String(5 * 1024 * MiB) },
        holdBody: true,
      });
      expect(res.status).toBe(413);
      expect(res.headers.connection).toBe("close");
      expect(res.json()).toMatchObject({ code: "input_too_large", bytes_quoted: MiB, bytes_sent: 5 * 1024 * MiB });
      const row = await jobRow(job.id);
      expect(row.state).toBe("awaiting_input");
      expect(Number(row.bytes_in)).toBe(0);
      expect(await t.app.services.storage.size(jobKeys.input(job.id))).toBeUndefined();
      expect(scheduled).toHaveLength(0);
    });

    it("more bytes than quoted (chunked): 413, the part that fit kept and recorded; a retry within the quote completes", async () => {
      const quoted = MiB + 100;
      const { job, auth } = await newJob(quoted);
      const res = await request(base, "PUT", `/api/jobs/${job.id}/input`, {
        headers: { ...auth, "Content-Type": "application/octet-stream" },
        body: generated(4 * MiB),
      });
      expect(res.status).toBe(413);
      expect(res.json()).toMatchObject({ code: "input_too_large", bytes_quoted: quoted, bytes_kept: quoted });
      let row = await jobRow(job.id);
      expect(row.state).toBe("uploading");
      expect(Number(row.bytes_in)).toBe(quoted);
      expect(row.input_sha256).toBeNull();
      const storage = t.app.services.storage;
      expect(await storage.size(jobKeys.input(job.id))).toBe(quoted);
      expect(sha(await collect(await storage.get(jobKeys.input(job.id))))).toBe(expectedSha(quoted));
      expect(scheduled).toHaveLength(0);

      // the same job (paid once) takes a correct input
      const ok = await request(base, "PUT", `/api/jobs/${job.id}/input`, {
        headers: { ...auth, "Content-Type": "application/octet-stream" },
        body: generated(MiB),
      });
      expect(ok.status, ok.body.toString()).toBe(200);
      row = await jobRow(job.id);
      expect(row.state).toBe("queued");
      expect(Number(row.bytes_in)).toBe(MiB);
      expect(scheduled).toHaveLength(1);
    });

    it("an empty input is refused", async () => {
      const { job, auth } = await newJob(1000);
      const res = await request(base, "PUT", `/api/jobs/${job.id}/input`, {
        headers: { ...auth, "Content-Type": "application/octet-stream" },
        body: Buffer.alloc(0),
      });
      expect(res.status).toBe(400);
      expect(res.json()).toMatchObject({ code: "input_empty" });
      expect((await jobRow(job.id)).state).toBe("uploading");
    });

    it("other content types: 415", async () => {
      const { job, auth } = await newJob(1000);
      const res = await request(base, "PUT", `/api/jobs/${job.id}/input`, {
        headers: { ...auth, "Content-Type": "text/plain" },
        body: Buffer.from("hello"),
      });
      expect(res.status).toBe(415);
      expect(res.json()).toMatchObject({ code: "unsupported_media_type" });
    });
  });

  describe("job token", () => {
    it("401 without a token, with a wrong one, and with another job's token, on every route", async () => {
      const a = await newJob(1000);
      const b = await newJob(1000);
      const cases: [string, string, Record<string, string>][] = [
        ["GET", `/api/jobs/${a.job.id}`, {}],
        ["GET", `/api/jobs/${a.job.id}/output`, {}],
        ["PUT", `/api/jobs/${a.job.id}/input`, { "Content-Type": "application/octet-stream" }],
        ["PATCH", `/api/jobs/uploads/${a.job.id}`, tusPatchHeaders(0)],
        ["HEAD", `/api/jobs/uploads/${a.job.id}`, { "Tus-Resumable": "1.0.0" }],
        ["POST", "/api/jobs/uploads", tusCreateHeaders(a.job.id, 10)],
      ];
      for (const [method, url, headers] of cases) {
        const none = await request(base, method, url, {
          headers,
          body: method === "PUT" || method === "PATCH" ? Buffer.from("abc") : undefined,
        });
        expect(none.status, `${method} ${url} without a token`).toBe(401);
        expect(none.headers["www-authenticate"]).toMatch(/^Bearer/);
        if (method !== "HEAD") expect(none.json().code).toBe("job_token_required");
        for (const token of ["jt_wrong", b.token]) {
          const bad = await request(base, method, url, {
            headers: { ...headers, Authorization: `Bearer ${token}` },
            body: method === "PUT" || method === "PATCH" ? Buffer.from("abc") : undefined,
          });
          expect(bad.status, `${method} ${url} with ${token === b.token ? "another job's" : "a wrong"} token`).toBe(
            401,
          );
          if (method !== "HEAD") expect(bad.json().code).toBe("job_token_invalid");
        }
      }
      expect((await jobRow(a.job.id)).state).toBe("awaiting_input");
    });
  });

  function tusCreateHeaders(jobId: string, length: number): Record<string, string> {
    return {
      "Tus-Resumable": "1.0.0",
      "Upload-Length": String(length),
      "Upload-Metadata": `job_id ${Buffer.from(jobId).toString("base64")},filename ${Buffer.from("data.bin").toString("base64")}`,
    };
  }
  function tusPatchHeaders(offset: number): Record<string, string> {
    return {
      "Tus-Resumable": "1.0.0",
      "Upload-Offset": String(offset),
      "Content-Type": "application/offset+octet-stream",
    };
  }

  describe("tus /api/jobs/uploads", () => {
    it("create, PATCH half, HEAD offset, PATCH the rest: the job ends like a PUT", async () => {
      const total = 3 * MiB + 17;
      const half = Math.floor(total / 2);
      const data = Buffer.concat([...generated(total)]);
      const { job, auth } = await newJob(4 * MiB);

      const created = await request(base, "POST", "/api/jobs/uploads", {
        headers: { ...auth, ...tusCreateHeaders(job.id, total) },
      });
      expect(created.status, created.body.toString()).toBe(201);
      expect(created.headers.location).toBe(`http://lab.test/api/jobs/uploads/${job.id}`);
      expect(created.headers["tus-resumable"]).toBe("1.0.0");
      expect(created.headers["x-request-id"]).toBeTruthy();
      expect((await jobRow(job.id)).state).toBe("uploading");
      const url = new URL(created.headers.location as string).pathname;

      const first = await request(base, "PATCH", url, {
        headers: { ...auth, ...tusPatchHeaders(0) },
        body: generated(half),
      });
      expect(first.status, first.body.toString()).toBe(204);
      expect(first.headers["upload-offset"]).toBe(String(half));

      const head = await request(base, "HEAD", url, { headers: { ...auth, "Tus-Resumable": "1.0.0" } });
      expect(head.status).toBe(200);
      expect(head.headers["upload-offset"]).toBe(String(half));
      expect(head.headers["upload-length"]).toBe(String(total));

      // a wrong offset is a conflict (problem+json)
      const wrong = await request(base, "PATCH", url, {
        headers: { ...auth, ...tusPatchHeaders(5) },
        body: Buffer.from("xx"),
      });
      expect(wrong.status).toBe(409);
      expect(wrong.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(wrong.json()).toMatchObject({ code: "upload_offset_conflict" });

      expect(scheduled).toHaveLength(0);
      const rest = await request(base, "PATCH", url, {
        headers: { ...auth, ...tusPatchHeaders(half) },
        body: data.subarray(half),
      });
      expect(rest.status, rest.body.toString()).toBe(204);
      expect(rest.headers["upload-offset"]).toBe(String(total));
      expect(rest.headers["job-state"]).toBe("queued");

      const row = await jobRow(job.id);
      expect(row.state).toBe("queued");
      expect(Number(row.bytes_in)).toBe(total);
      expect(row.input_sha256).toBe(sha(data));
      expect(scheduled.map((j) => j.id)).toEqual([job.id]);
      const storage = t.app.services.storage;
      expect(sha(await collect(await storage.get(jobKeys.input(job.id))))).toBe(sha(data));
      // the spool copy is gone
      const spool = path.join(t.app.services.config.dataDir, "spool", "tus");
      expect(fs.readdirSync(spool).filter((n) => n.startsWith(job.id))).toEqual([]);

      // the input is complete: no new upload, no more PATCH
      const late = await request(base, "POST", "/api/jobs/uploads", {
        headers: { ...auth, ...tusCreateHeaders(job.id, 10) },
      });
      expect(late.status).toBe(409);
      expect(late.json()).toMatchObject({ code: "job_input_closed" });
      const lateByPut = await request(base, "PUT", `/api/jobs/${job.id}/input`, {
        headers: { ...auth, "Content-Type": "application/octet-stream" },
        body: Buffer.from("x"),
      });
      expect(lateByPut.status).toBe(409);
    });

    it("a failed move into the store leaves the finished upload in the spool; an empty PATCH retries it", async () => {
      const data = randomBytes(5000);
      const { job, auth } = await newJob(5000);
      const created = await request(base, "POST", "/api/jobs/uploads", {
        headers: { ...auth, ...tusCreateHeaders(job.id, data.length) },
      });
      expect(created.status).toBe(201);
      // Fault injection on the app's own store: the next put fails (an S3 outage, a full disk).
      const storage = t.app.services.storage;
      const put = storage.put;
      storage.put = async (_key, body) => {
        body.destroy();
        throw new Error("store unavailable");
      };
      let res: Res;
      try {
        res = await request(base, "PATCH", `/api/jobs/uploads/${job.id}`, {
          headers: { ...auth, ...tusPatchHeaders(0) },
          body: data,
        });
      } finally {
        storage.put = put;
      }
      expect(res.status).toBe(500);
      expect(res.json()).toMatchObject({ code: "internal_error" });
      expect((await jobRow(job.id)).state).toBe("uploading");
      const head = await request(base, "HEAD", `/api/jobs/uploads/${job.id}`, {
        headers: { ...auth, "Tus-Resumable": "1.0.0" },
      });
      expect(head.headers["upload-offset"]).toBe(String(data.length));
      const retry = await request(base, "PATCH", `/api/jobs/uploads/${job.id}`, {
        headers: { ...auth, ...tusPatchHeaders(data.length) },
        body: Buffer.alloc(0),
      });
      expect(retry.status, retry.body.toString()).toBe(204);
      const row = await jobRow(job.id);
      expect(row.state).toBe("queued");
      expect(row.input_sha256).toBe(sha(data));
      expect(scheduled).toHaveLength(1);
    });

    it("refuses an upload longer than the quote, a missing job id and a missing Tus-Resumable", async () => {
      const { job, auth } = await newJob(1000);
      const tooLong = await request(base, "POST", "/api/jobs/uploads", {
        headers: { ...auth, ...tusCreateHeaders(job.id, 1001) },
      });
      expect(tooLong.status).toBe(413);
      expect(tooLong.json()).toMatchObject({ code: "input_too_large", bytes_quoted: 1000 });
      const noJob = await request(base, "POST", "/api/jobs/uploads", {
        headers: { ...auth, "Tus-Resumable": "1.0.0", "Upload-Length": "10" },
      });
      expect(noJob.status).toBe(400);
      expect(noJob.json()).toMatchObject({ code: "upload_job_id_required" });
      const noVersion = await request(base, "POST", "/api/jobs/uploads", {
        headers: {
          ...auth,
          "Upload-Length": "10",
          "Upload-Metadata": tusCreateHeaders(job.id, 10)["Upload-Metadata"] as string,
        },
      });
      expect(noVersion.status).toBe(412);
      expect(noVersion.json()).toMatchObject({ code: "tus_version_required" });
      // PATCH past the declared length is cut by tus
      const created = await request(base, "POST", "/api/jobs/uploads", {
        headers: { ...auth, ...tusCreateHeaders(job.id, 100) },
      });
      expect(created.status).toBe(201);
      const over = await request(base, "PATCH", `/api/jobs/uploads/${job.id}`, {
        headers: { ...auth, ...tusPatchHeaders(0), "Content-Length": "200" },
        body: Buffer.alloc(200, 1),
      });
      expect(over.status).toBe(413);
      expect(over.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect((await jobRow(job.id)).state).toBe("uploading");
      expect(scheduled).toHaveLength(0);
    });
  });

  describe("GET /api/jobs/:id/output", () => {
    const SIZES = [1000, 0, 2500, 777];
    const TOTAL = SIZES.reduce((a, b) => a + b, 0);

    async function doneJob(): Promise<{ job: JobRow; auth: Record<string, string>; output: Buffer }> {
      const { job, auth } = await newJob(10_000);
      const db = t.app.services.db.kysely;
      const storage = t.app.services.storage;
      const parts = SIZES.map((n) => randomBytes(n));
      for (const [idx, part] of parts.entries()) {
        await storage.put(jobKeys.segmentOut(job.id, idx), Readable.from([part]));
        await db
          .insertInto("job_segments")
          .values({
            job_id: job.id,
            idx,
            state: "done",
            in_offset: idx * 2500,
            in_length: 2500,
            out_bytes: part.length,
            out_sha256: sha(part),
            attempts: 1,
            worker: null,
            error: null,
            updated_at: nowIso(),
          })
          .execute();
      }
      const output = Buffer.concat(parts);
      const moved = await jobStore.jobTransition(db, job.id, ["awaiting_input"], {
        state: "done",
        bytes_in: 10_000,
        bytes_out: output.length,
        output_sha256: sha(output),
        segments_total: SIZES.length,
        segments_done: SIZES.length,
        finished_at: nowIso(),
      });
      expect(moved).toBe(true);
      return { job, auth, output };
    }

    it("409 with the state until the job is done", async () => {
      const { job, auth } = await newJob(1000);
      const res = await request(base, "GET", `/api/jobs/${job.id}/output`, { headers: auth });
      expect(res.status).toBe(409);
      expect(res.json()).toMatchObject({ code: "job_not_done", state: "awaiting_input" });
    });

    it("streams the whole output, then ranges across segment boundaries, suffixes and 416", async () => {
      const { job, auth, output } = await doneJob();
      const url = `/api/jobs/${job.id}/output`;
      const full = await request(base, "GET", url, { headers: auth });
      expect(full.status).toBe(200);
      expect(full.body.equals(output)).toBe(true);
      expect(full.headers["content-length"]).toBe(String(TOTAL));
      expect(full.headers["accept-ranges"]).toBe("bytes");
      expect(full.headers.etag).toBe(`"${sha(output)}"`);
      expect(full.headers["cache-control"]).toBe("private, no-store");
      expect(full.headers["content-type"]).toBe("application/octet-stream");

      const view = await request(base, "GET", `/api/jobs/${job.id}`, { headers: auth });
      expect(view.json()).toMatchObject({ state: "done", progress: 1, bytes_out: TOTAL, ratio: TOTAL / 10_000 });

      const ranges: [string, number, number][] = [
        ["bytes=0-0", 0, 0],
        ["bytes=990-3510", 990, 3510], // segment 0 → (empty 1) → 2 → 3
        ["bytes=1000-3499", 1000, 3499], // exactly segment 2
        ["bytes=3499-3500", 3499, 3500], // last byte of 2, first of 3
        ["bytes=3000-", 3000, TOTAL - 1],
        ["bytes=-100", TOTAL - 100, TOTAL - 1],
        ["bytes=-100000", 0, TOTAL - 1],
        ["bytes=4000-999999", 4000, TOTAL - 1],
      ];
      for (const [range, start, end] of ranges) {
        const res = await request(base, "GET", url, { headers: { ...auth, Range: range } });
        expect(res.status, range).toBe(206);
        expect(res.headers["content-range"], range).toBe(`bytes ${start}-${end}/${TOTAL}`);
        expect(res.headers["content-length"], range).toBe(String(end - start + 1));
        expect(res.body.equals(output.subarray(start, end + 1)), range).toBe(true);
      }

      for (const range of [`bytes=${TOTAL}-`, `bytes=${TOTAL + 10}-${TOTAL + 20}`, "bytes=-0"]) {
        const res = await request(base, "GET", url, { headers: { ...auth, Range: range } });
        expect(res.status, range).toBe(416);
        expect(res.headers["content-range"]).toBe(`bytes */${TOTAL}`);
        expect(res.json()).toMatchObject({ code: "range_not_satisfiable", bytes_total: TOTAL });
      }

      // several ranges, or an If-Range that does not match: the whole output
      const multi = await request(base, "GET", url, { headers: { ...auth, Range: "bytes=0-1,5-6" } });
      expect(multi.status).toBe(200);
      expect(multi.body.length).toBe(TOTAL);
      const stale = await request(base, "GET", url, { headers: { ...auth, Range: "bytes=0-9", "If-Range": '"old"' } });
      expect(stale.status).toBe(200);
      const fresh = await request(base, "GET", url, {
        headers: { ...auth, Range: "bytes=0-9", "If-Range": `"${sha(output)}"` },
      });
      expect(fresh.status).toBe(206);

      const head = await request(base, "HEAD", url, { headers: { ...auth, Range: "bytes=10-19" } });
      expect(head.status).toBe(206);
      expect(head.headers["content-length"]).toBe("10");
      expect(head.body.length).toBe(0);
    });
  });
});

describe("parseRange", () => {
  it("reads one bytes range", () => {
    expect(parseRange(undefined, 10)).toBeUndefined();
    expect(parseRange("bytes=2-4", 10)).toEqual([2, 4]);
    expect(parseRange("bytes=2-", 10)).toEqual([2, 9]);
    expect(parseRange("bytes=-3", 10)).toEqual([7, 9]);
    expect(parseRange("bytes=5-100", 10)).toEqual([5, 9]);
    expect(parseRange("bytes=10-", 10)).toBe("unsatisfiable");
    expect(parseRange("bytes=-0", 10)).toBe("unsatisfiable");
    expect(parseRange("bytes=0-0", 0)).toBe("unsatisfiable");
    expect(parseRange("bytes=4-2", 10)).toBeUndefined();
    expect(parseRange("bytes=1-2,4-5", 10)).toBeUndefined();
    expect(parseRange("items=1-2", 10)).toBeUndefined();
    expect(parseRange("bytes=-", 10)).toBeUndefined();
  });
});
