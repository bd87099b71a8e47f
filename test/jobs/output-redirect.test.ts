import { createHash, createHmac, randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Db, nowIso } from "../../src/db/database.js";
import type { App } from "../../src/http/types.js";
import { jobKeys, type ObjectStore } from "../../src/jobs/storage/types.js";
import { jobStore } from "../../src/jobs/store.js";
import type { JobRow } from "../../src/jobs/tables.js";
import { appOn } from "../support/app.js";
import { freshDatabase } from "../support/databases.js";
import { freeJob } from "../support/jobs.js";
import { startS3rver, type TestS3 } from "../support/s3rver.js";

/**
 * Issue #23 item 2: on the S3 store, `GET /api/jobs/:id/output?redirect=1` (job token) answers 303
 * to a presigned GET URL that expires after JOB_OUTPUT_URL_TTL_SECONDS. The Location is fetched
 * with plain `fetch` (no credentials) from s3rver: its bytes are the output (SHA-256 =
 * output_sha256); a job of several segments is joined once into `jobs/<id>/output`; a URL signed
 * longer ago than its lifetime is refused (s3rver checks X-Amz-Date + X-Amz-Expires). s3rver does
 * not check V4 signatures, so `signatureHolds` checks them as S3 does: a URL of one job edited to
 * name another's object, or to last longer, no longer holds. The local store ignores `redirect=1`.
 * Before the feature: `redirect=1` was ignored on S3 too (200 with the bytes).
 */

const TTL = 120; // not the default (300): the URL must carry the setting

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

/**
 * Whether a presigned GET URL's X-Amz-Signature is the AWS Signature V4 of that URL (method, path,
 * every query parameter but the signature, the signed headers), under the test credentials: what
 * S3 computes before it serves a presigned request. Written from the SigV4 specification with
 * node:crypto, independently of the SDK (s3rver itself does not check V4 signatures).
 */
function signatureHolds(url: URL, secret: string): boolean {
  const enc = (v: string) =>
    encodeURIComponent(v).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  const params = [...url.searchParams.entries()].filter(([k]) => k !== "X-Amz-Signature");
  const query = params
    .map(([k, v]) => [enc(k), enc(v)] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join("&");
  const signed = (url.searchParams.get("X-Amz-SignedHeaders") ?? "").split(";");
  const headers = signed.map((h) => `${h}:${h === "host" ? url.host : ""}\n`).join("");
  const canonical = ["GET", url.pathname, query, headers, signed.join(";"), "UNSIGNED-PAYLOAD"].join("\n");
  const stamp = url.searchParams.get("X-Amz-Date") ?? "";
  const [, day, region, service] = (url.searchParams.get("X-Amz-Credential") ?? "").split("/");
  const scope = `${day}/${region}/${service}/aws4_request`;
  const toSign = ["AWS4-HMAC-SHA256", stamp, scope, createHash("sha256").update(canonical).digest("hex")].join("\n");
  const hmac = (key: Buffer | string, data: string) => createHmac("sha256", key).update(data).digest();
  let key = hmac(`AWS4${secret}`, day ?? "");
  for (const part of [region ?? "", service ?? "", "aws4_request"]) key = hmac(key, part);
  return createHmac("sha256", key).update(toSign).digest("hex") === url.searchParams.get("X-Amz-Signature");
}

/** A done job whose segment outputs (random bytes, `sizes`) are in the store; output_sha256 is the real one. */
async function doneJob(
  app: App,
  db: Db,
  sizes: number[],
): Promise<{ job: JobRow; auth: Record<string, string>; output: Buffer }> {
  const storage = app.services.storage;
  const { job, auth } = await freeJob(app, 10_000_000);
  const gen = randomBytes(6).toString("hex");
  const outs = sizes.map((n) => randomBytes(n));
  for (const [idx, out] of outs.entries()) {
    await storage.put(jobKeys.segmentOut(job.id, idx, gen), Readable.from([out]));
    await db.kysely
      .insertInto("job_segments")
      .values({
        job_id: job.id,
        idx,
        state: "done",
        in_offset: idx * 1000,
        in_length: 1000,
        out_bytes: out.length,
        out_sha256: sha(out),
        attempts: 1,
        worker: null,
        error: null,
        updated_at: nowIso(),
        gen,
      })
      .execute();
  }
  const output = Buffer.concat(outs);
  const at = nowIso();
  const moved = await jobStore.jobTransition(db.kysely, job.id, ["awaiting_input"], {
    state: "done",
    upload_gen: gen,
    bytes_in: sizes.length * 1000,
    bytes_out: output.length,
    output_sha256: sha(output),
    segments_total: sizes.length,
    segments_done: sizes.length,
    started_at: at,
    finished_at: at,
  });
  expect(moved).toBe(true);
  return { job, auth, output };
}

describe("GET /api/jobs/:id/output?redirect=1 on the S3 store", () => {
  let s3: TestS3;
  let app: App;
  let db: Db;
  let storage: ObjectStore;

  beforeAll(async () => {
    s3 = await startS3rver();
    db = (await freshDatabase("sqlite")).db;
    app = await appOn(db, { ...s3.env, JOB_OUTPUT_URL_TTL_SECONDS: String(TTL) });
    storage = app.services.storage;
    expect(storage.kind).toBe("s3");
    app.services.jobs.scheduler = { schedule: async () => {} };
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
    await s3?.close();
  });

  const redirect = (id: string, headers: Record<string, string>, method: "GET" | "HEAD" = "GET") =>
    app.inject({ method, url: `/api/jobs/${id}/output?redirect=1`, headers });

  it("answers 303 to a presigned URL: plain fetch gets the output, joined once from its segments", async () => {
    const { job, auth, output } = await doneJob(app, db, [300_000, 1, 70_000, 0, 5_000]);
    const r = await redirect(job.id, auth);
    expect(r.statusCode, r.body).toBe(303);
    const digest = createHash("sha256").update(output).digest("base64");
    expect(r.headers["repr-digest"]).toBe(`sha-256=:${digest}:`);
    expect(r.headers.etag).toBe(`"${sha(output)}"`);
    expect(r.headers["cache-control"]).toBe("private, no-store");
    const location = new URL(String(r.headers.location));
    expect(location.origin).toBe(s3.endpoint);
    expect(location.pathname).toBe(`/${s3.bucket}/${jobKeys.output(job.id)}`);
    expect(location.searchParams.get("X-Amz-Expires")).toBe(String(TTL));
    expect(location.searchParams.get("X-Amz-Signature")).toMatch(/^[0-9a-f]{64}$/);

    const got = await fetch(location);
    expect(got.status).toBe(200);
    const bytes = Buffer.from(await got.arrayBuffer());
    expect(bytes.length).toBe(output.length);
    expect(sha(bytes)).toBe(sha(output));
    expect(sha(bytes)).toBe((await jobStore.job(db.kysely, job.id))?.output_sha256);

    // without redirect=1 the route streams the bytes, as before
    const plain = await app.inject({ method: "GET", url: `/api/jobs/${job.id}/output?redirect=0`, headers: auth });
    expect(plain.statusCode).toBe(200);
    expect(plain.rawPayload.equals(output)).toBe(true);

    // a Range goes to the URL
    const part = await fetch(location, { headers: { range: "bytes=299999-300001" } });
    expect(part.status).toBe(206);
    expect(Buffer.from(await part.arrayBuffer()).equals(output.subarray(299_999, 300_002))).toBe(true);

    // the joined object is reused: with the segments gone, a new redirect still works (only signs)
    await storage.deletePrefix(`jobs/${job.id}/out/`);
    const again = await redirect(job.id, auth);
    expect(again.statusCode).toBe(303);
    const second = await fetch(String(again.headers.location));
    expect(sha(Buffer.from(await second.arrayBuffer()))).toBe(sha(output));
    // HEAD answers the same redirect
    expect((await redirect(job.id, auth, "HEAD")).statusCode).toBe(303);
  });

  it("a job of one segment: the URL names that segment's object", async () => {
    const { job, auth, output } = await doneJob(app, db, [12_345]);
    const r = await redirect(job.id, auth);
    expect(r.statusCode).toBe(303);
    const location = new URL(String(r.headers.location));
    const row = (await jobStore.job(db.kysely, job.id)) as JobRow;
    expect(location.pathname).toBe(`/${s3.bucket}/${jobKeys.segmentOut(job.id, 0, row.upload_gen)}`);
    const bytes = Buffer.from(await (await fetch(location)).arrayBuffer());
    expect(sha(bytes)).toBe(sha(output));
    expect(await storage.size(jobKeys.output(job.id))).toBeUndefined();
  });

  it("a URL for job A cannot be turned into job B's: the signature covers the key", async () => {
    const a = await doneJob(app, db, [2_000, 3_000]);
    const b = await doneJob(app, db, [4_000, 1_000]);
    const urlA = new URL(String((await redirect(a.job.id, a.auth)).headers.location));
    const urlB = new URL(String((await redirect(b.job.id, b.auth)).headers.location));
    const secret = s3.env.S3_SECRET_ACCESS_KEY as string;
    // the URLs as issued carry their SigV4 signature (and B's object exists: B's URL serves it)
    expect(signatureHolds(urlA, secret)).toBe(true);
    expect(signatureHolds(urlB, secret)).toBe(true);
    expect(signatureHolds(urlA, "not-the-secret")).toBe(false);
    expect((await fetch(urlB)).status).toBe(200);
    // A's URL edited to name B's object: its signature no longer holds (S3 answers 403 SignatureDoesNotMatch)
    const forged = new URL(urlA);
    forged.pathname = urlA.pathname.replace(a.job.id, b.job.id);
    expect(forged.pathname).toBe(urlB.pathname);
    expect(signatureHolds(forged, secret)).toBe(false);
    // nor can it be made to last longer, or be used for another method's parameters
    const longer = new URL(urlA);
    longer.searchParams.set("X-Amz-Expires", "3600");
    expect(signatureHolds(longer, secret)).toBe(false);
    const otherPart = new URL(urlA);
    otherPart.searchParams.set("partNumber", "1");
    expect(signatureHolds(otherPart, secret)).toBe(false);
    // job B's token does not give job A's link
    expect((await redirect(a.job.id, b.auth)).statusCode).toBe(401);
  });

  it("the URL expires: one signed longer ago than its lifetime is refused", async () => {
    const { job, output } = await doneJob(app, db, [1_000, 2_000]);
    const row = (await jobStore.job(db.kysely, job.id)) as JobRow;
    const { parts } = await app.services.transfers.output(row);
    const link = storage.linkTo?.bind(storage);
    if (!link) throw new Error("the S3 store has linkTo");
    const opts = { combined: jobKeys.output(job.id), expiresInSeconds: TTL, sha256: row.output_sha256 };
    const fresh = await link(parts, { ...opts, now: new Date(Date.now() - (TTL - 30) * 1000) });
    expect(sha(Buffer.from(await (await fetch(fresh)).arrayBuffer()))).toBe(sha(output));
    const stale = await link(parts, { ...opts, now: new Date(Date.now() - (TTL + 30) * 1000) });
    const refused = await fetch(stale);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain("Request has expired");
  });

  it("joined bytes that do not match output_sha256 are not linked (the joined object is removed)", async () => {
    const { job } = await doneJob(app, db, [1_000, 2_000]);
    const row = (await jobStore.job(db.kysely, job.id)) as JobRow;
    const { parts } = await app.services.transfers.output(row);
    await expect(
      storage.linkTo?.(parts, { combined: jobKeys.output(job.id), expiresInSeconds: TTL, sha256: "0".repeat(64) }),
    ).rejects.toThrow(/expected 3000/);
    expect(await storage.size(jobKeys.output(job.id))).toBeUndefined();
  });

  it("not done: 409 job_not_done; deleted: 410 job_deleted (no URL either way)", async () => {
    const waiting = await freeJob(app, 1_000);
    const r = await redirect(waiting.job.id, waiting.auth);
    expect(r.statusCode).toBe(409);
    expect(r.json().code).toBe("job_not_done");
    expect(r.headers.location).toBeUndefined();

    const { job, auth } = await doneJob(app, db, [1_000, 2_000]);
    expect((await redirect(job.id, auth)).statusCode).toBe(303);
    const del = await app.inject({ method: "DELETE", url: `/api/jobs/${job.id}`, headers: auth });
    expect(del.statusCode).toBe(204);
    // the joined object went with the job's data
    expect(await storage.size(jobKeys.output(job.id))).toBeUndefined();
    const gone = await redirect(job.id, auth);
    expect(gone.statusCode).toBe(410);
    expect(gone.json().code).toBe("job_deleted");
    expect(gone.headers.location).toBeUndefined();

    // a DELETE that runs while the output is being joined (after the segments were read, before
    // the joined object is complete): 410, and the joined copy does not outlive the job
    const racing = await doneJob(app, db, [4_000, 4_000]);
    const put = storage.put;
    storage.put = async function (this: ObjectStore, key, body, opts) {
      if (key !== jobKeys.output(racing.job.id)) return put.call(this, key, body, opts);
      const chunks: Buffer[] = [];
      for await (const c of body) chunks.push(c as Buffer);
      const deleted = await app.inject({ method: "DELETE", url: `/api/jobs/${racing.job.id}`, headers: racing.auth });
      expect(deleted.statusCode).toBe(204);
      return put.call(this, key, Readable.from([Buffer.concat(chunks)]), opts);
    };
    try {
      const raced = await redirect(racing.job.id, racing.auth);
      expect(raced.statusCode).toBe(410);
      expect(raced.json().code).toBe("job_deleted");
    } finally {
      storage.put = put;
    }
    expect(await storage.size(jobKeys.output(racing.job.id))).toBeUndefined();
    expect(await storage.size(jobKeys.input(racing.job.id))).toBeUndefined();

    // no token: 401; a bad redirect value: 400
    expect((await redirect(job.id, {})).statusCode).toBe(401);
    const bad = await app.inject({ method: "GET", url: `/api/jobs/${job.id}/output?redirect=yes`, headers: auth });
    expect(bad.statusCode).toBe(400);
  });
});

describe("GET /api/jobs/:id/output?redirect=1 on the local store", () => {
  let app: App;
  let db: Db;

  beforeAll(async () => {
    db = (await freshDatabase("sqlite")).db;
    app = await appOn(db);
    expect(app.services.storage.kind).toBe("local");
    app.services.jobs.scheduler = { schedule: async () => {} };
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it("is ignored: 200 with the bytes and the same digests", async () => {
    const { job, auth, output } = await doneJob(app, db, [700, 500]);
    const r = await app.inject({ method: "GET", url: `/api/jobs/${job.id}/output?redirect=1`, headers: auth });
    expect(r.statusCode).toBe(200);
    expect(r.headers.location).toBeUndefined();
    expect(r.rawPayload.equals(output)).toBe(true);
    expect(r.headers.etag).toBe(`"${sha(output)}"`);
  });
});
