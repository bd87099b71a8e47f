import { createHash } from "node:crypto";
import { PassThrough, Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { decompressStream } from "../../src/codec/index.js";
import type { Db } from "../../src/db/database.js";
import type { App } from "../../src/http/types.js";
import { appOn } from "../support/app.js";
import { ENGINES, type Engine, freshDatabase } from "../support/databases.js";
import { startS3rver, type TestS3 } from "../support/s3rver.js";

/**
 * Issue #23 item 6, several upload streams (docs/suite.md "Several upload streams"): `PUT
 * /api/jobs/:id/input` with `Content-Range: bytes a-b/total` parts, in any order and at once,
 * written at their offsets into the input; landed parts persisted (job_input_parts, migration
 * 0021) so a restart keeps them; segments queued as their ranges land; the input's SHA-256 and the
 * output the same as a single PUT's. On today's code (before the feature) a Content-Range PUT was
 * taken as a whole input: the first part completed the job with the wrong bytes.
 */

const SEGMENT = 64 * 1024;
const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

function textBytes(n: number): Buffer {
  const lines: string[] = [];
  let len = 0;
  for (let i = 0; len < n; i++) {
    const line = `2026-11-28T00:${String(i % 60).padStart(2, "0")}:00Z part=${i % 11} value=${(i * 7919) % 100_003}\n`;
    lines.push(line);
    len += line.length;
  }
  return Buffer.from(lines.join("")).subarray(0, n);
}

const ENV = {
  JOB_SEGMENT_BYTES: String(SEGMENT),
  JOB_WORKER_IN_SERVICE: "true",
  JOB_UPLOAD_MIN_PART_BYTES: String(SEGMENT),
};

/** Buys a free job for `bytes` (a fresh IP each time: the free-job limits are per caller). */
let ipSeq = 0;
async function buy(app: App, bytes: number) {
  const res = await app.inject({
    method: "POST",
    url: "/api/x402-suite",
    remoteAddress: `198.51.100.${++ipSeq}`,
    payload: { product: "auto", dataClass: "text", op: "compress", level: "fast", bytes },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { job_id: string; job_token: string };
}

const putPart = (app: App, job: { job_id: string; job_token: string }, data: Buffer, start: number, end: number) =>
  app.inject({
    method: "PUT",
    url: `/api/jobs/${job.job_id}/input`,
    headers: {
      authorization: `Bearer ${job.job_token}`,
      "content-type": "application/octet-stream",
      "content-range": `bytes ${start}-${end}/${data.length}`,
    },
    payload: data.subarray(start, end + 1),
  });

const putWhole = (app: App, job: { job_id: string; job_token: string }, data: Buffer) =>
  app.inject({
    method: "PUT",
    url: `/api/jobs/${job.job_id}/input`,
    headers: { authorization: `Bearer ${job.job_token}`, "content-type": "application/octet-stream" },
    payload: data,
  });

async function finished(app: App, job: { job_id: string; job_token: string }) {
  let view: Record<string, unknown> = {};
  await vi.waitFor(
    async () => {
      const res = await app.inject({
        method: "GET",
        url: `/api/jobs/${job.job_id}`,
        headers: { authorization: `Bearer ${job.job_token}` },
      });
      view = res.json();
      expect(["done", "failed"]).toContain(view.state);
    },
    { timeout: 60_000, interval: 50 },
  );
  expect(view.state, JSON.stringify(view.error)).toBe("done");
  const out = await app.inject({
    method: "GET",
    url: `/api/jobs/${job.job_id}/output`,
    headers: { authorization: `Bearer ${job.job_token}` },
  });
  expect(out.statusCode).toBe(200);
  return { view, output: out.rawPayload };
}

async function restore(container: Buffer): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of Readable.from([container]).pipe(decompressStream())) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

describe.each<Engine>(ENGINES)("an input in parts with Content-Range (%s)", (engine) => {
  let db: Db;
  let app: App;
  let env: Record<string, string>;

  beforeAll(async () => {
    const fresh = await freshDatabase(engine);
    db = fresh.db;
    env = { ...ENV };
    app = await appOn(db, env);
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it("parts out of order complete the job; segments are queued as their ranges land; the output is a single PUT's", async () => {
    const data = textBytes(6 * SEGMENT + 777);
    const job = await buy(app, data.length);
    // [2, 4) segments first: two whole segments land with nothing before them
    const p1 = await putPart(app, job, data, 2 * SEGMENT, 4 * SEGMENT - 1);
    expect(p1.statusCode, p1.body).toBe(202);
    expect(p1.json()).toMatchObject({
      job_id: job.job_id,
      state: "uploading",
      bytes_total: data.length,
      bytes_landed: 2 * SEGMENT,
      landed: [{ start: 2 * SEGMENT, end: 4 * SEGMENT - 1 }],
    });
    // segments 2 and 3 are planned (and coded) while the input is still incomplete
    await vi.waitFor(
      async () => {
        const segs = await db.kysely
          .selectFrom("job_segments")
          .select(["idx"])
          .where("job_id", "=", job.job_id)
          .orderBy("idx")
          .execute();
        expect(segs.map((s) => s.idx)).toEqual([2, 3]);
      },
      { timeout: 10_000, interval: 20 },
    );
    const p2 = await putPart(app, job, data, 4 * SEGMENT, data.length - 1); // the last part (smaller ends allowed)
    expect(p2.statusCode, p2.body).toBe(202);
    expect(p2.json().landed).toEqual([{ start: 2 * SEGMENT, end: data.length - 1 }]);
    const p3 = await putPart(app, job, data, 0, 2 * SEGMENT - 1);
    expect(p3.statusCode, p3.body).toBe(200);
    expect(p3.json()).toMatchObject({ state: "queued", bytes_in: data.length, input_sha256: sha(data) });
    const parted = await finished(app, job);
    expect(await restore(parted.output)).toEqual(data);

    // the same input in one PUT: the same output, byte for byte
    const whole = await buy(app, data.length);
    const put = await putWhole(app, whole, data);
    expect(put.statusCode, put.body).toBe(200);
    const single = await finished(app, whole);
    expect(sha(parted.output)).toBe(sha(single.output));
    expect(parted.view.output_sha256).toBe(single.view.output_sha256);
    expect(parted.view.segments_total).toBe(single.view.segments_total);
    // the parts' rows go once the input is complete
    const rows = await db.kysely.selectFrom("job_input_parts").selectAll().where("job_id", "=", job.job_id).execute();
    expect(rows).toEqual([]);
  });

  it("parts sent all at once (the first ones racing to start the upload): one 200, the others 202, the right input", async () => {
    const data = textBytes(7 * SEGMENT + 5);
    const job = await buy(app, data.length);
    const bounds = [0, 1, 2, 3, 4, 5, 6].map((i) => [i * SEGMENT, i === 6 ? data.length - 1 : (i + 1) * SEGMENT - 1]);
    const answers = await Promise.all(
      [5, 0, 3, 6, 1, 4, 2].map((i) => putPart(app, job, data, bounds[i]?.[0] as number, bounds[i]?.[1] as number)),
    );
    const statuses = answers.map((a) => a.statusCode).sort();
    expect(statuses, answers.map((a) => a.body).join("\n")).toEqual([200, 202, 202, 202, 202, 202, 202]);
    const done = answers.find((a) => a.statusCode === 200);
    expect(done?.json()).toMatchObject({ state: "queued", bytes_in: data.length, input_sha256: sha(data) });
    expect(await restore((await finished(app, job)).output)).toEqual(data);
  });

  it("the completing part's answer is the job as that upload queued it, even when a worker claims it before the answer is built", async () => {
    const data = textBytes(2 * SEGMENT + 9);
    const job = await buy(app, data.length);
    // a worker that takes the job the moment it is queued: any read of the job after the commit
    // sees it running (the Node 24 pass of a clean-clone run answered "running" this way)
    const get = app.services.jobs.get.bind(app.services.jobs);
    const spy = vi.spyOn(app.services.jobs, "get").mockImplementation(async (id: string) => {
      const row = await get(id);
      if (id !== job.job_id || row.state !== "queued") return row;
      await db.kysely.updateTable("jobs").set({ state: "running" }).where("id", "=", id).execute();
      return get(id);
    });
    try {
      const p1 = await putPart(app, job, data, SEGMENT, data.length - 1);
      expect(p1.statusCode, p1.body).toBe(202);
      const p2 = await putPart(app, job, data, 0, SEGMENT - 1);
      expect(p2.statusCode, p2.body).toBe(200);
      expect(p2.json()).toMatchObject({ state: "queued", bytes_in: data.length, input_sha256: sha(data) });
    } finally {
      spy.mockRestore();
    }
    await db.kysely
      .updateTable("jobs")
      .set({ state: "queued" })
      .where("id", "=", job.job_id)
      .where("state", "=", "running")
      .execute();
    expect(await restore((await finished(app, job)).output)).toEqual(data);
  });

  it("refuses overlapping ranges (409 with the landed ranges), another total (409) and a total past the quote (413)", async () => {
    const data = textBytes(4 * SEGMENT);
    const job = await buy(app, data.length);
    expect((await putPart(app, job, data, SEGMENT, 2 * SEGMENT - 1)).statusCode).toBe(202);
    for (const [a, b] of [
      [SEGMENT, 2 * SEGMENT - 1], // the same part again
      [0, SEGMENT + 9], // ends inside it
      [2 * SEGMENT - 1, 3 * SEGMENT - 1], // starts on its last byte
    ] as const) {
      const dup = await putPart(app, job, data, a, b);
      expect(dup.statusCode, `${a}-${b}`).toBe(409);
      expect(dup.json()).toMatchObject({
        code: "input_range_overlaps",
        landed: [{ start: SEGMENT, end: 2 * SEGMENT - 1 }],
        bytes_total: data.length,
      });
    }
    const other = await app.inject({
      method: "PUT",
      url: `/api/jobs/${job.job_id}/input`,
      headers: {
        authorization: `Bearer ${job.job_token}`,
        "content-type": "application/octet-stream",
        "content-range": `bytes 0-${SEGMENT - 1}/${data.length - 1}`,
      },
      payload: data.subarray(0, SEGMENT),
    });
    expect(other.statusCode).toBe(409);
    expect(other.json()).toMatchObject({ code: "input_total_changed", bytes_total: data.length });
    const past = await app.inject({
      method: "PUT",
      url: `/api/jobs/${job.job_id}/input`,
      headers: {
        authorization: `Bearer ${job.job_token}`,
        "content-type": "application/octet-stream",
        "content-range": `bytes 0-${SEGMENT - 1}/${data.length + 1}`,
      },
      payload: data.subarray(0, SEGMENT),
    });
    expect(past.statusCode).toBe(413);
    expect(past.json()).toMatchObject({ code: "input_too_large", bytes_quoted: data.length });
    // malformed ranges, a body that is not the range, a small part that is not the last
    const bad = await app.inject({
      method: "PUT",
      url: `/api/jobs/${job.job_id}/input`,
      headers: {
        authorization: `Bearer ${job.job_token}`,
        "content-type": "application/octet-stream",
        "content-range": `bytes 10-5/${data.length}`,
      },
      payload: data.subarray(0, 6),
    });
    expect(bad.json()).toMatchObject({ code: "input_range_invalid" });
    const short = await app.inject({
      method: "PUT",
      url: `/api/jobs/${job.job_id}/input`,
      headers: {
        authorization: `Bearer ${job.job_token}`,
        "content-type": "application/octet-stream",
        "content-range": `bytes 0-${SEGMENT - 1}/${data.length}`,
      },
      payload: data.subarray(0, SEGMENT - 1),
    });
    expect(short.statusCode).toBe(400);
    expect(short.json()).toMatchObject({ code: "input_range_mismatch" });
    const small = await putPart(app, job, data, 3 * SEGMENT, 3 * SEGMENT + 99);
    expect(small.statusCode).toBe(400);
    expect(small.json()).toMatchObject({ code: "input_part_too_small" });
    // none of the refused parts counts: the input completes with the right bytes
    expect((await putPart(app, job, data, 2 * SEGMENT, data.length - 1)).statusCode).toBe(202);
    const last = await putPart(app, job, data, 0, SEGMENT - 1);
    expect(last.statusCode, last.body).toBe(200);
    expect(last.json()).toMatchObject({ input_sha256: sha(data) });
    expect(await restore((await finished(app, job)).output)).toEqual(data);
  });

  it("a restart between parts keeps the landed parts and drops a dead writer's part", async () => {
    const data = textBytes(5 * SEGMENT + 1234);
    const job = await buy(app, data.length);
    expect((await putPart(app, job, data, 0, 2 * SEGMENT - 1)).statusCode).toBe(202);
    const gen = (
      await db.kysely.selectFrom("jobs").select("upload_gen").where("id", "=", job.job_id).executeTakeFirst()
    )?.upload_gen as string;
    const row = (offset: number, lease: string) => ({
      job_id: job.job_id,
      gen,
      part_offset: offset,
      part_length: SEGMENT,
      total: data.length,
      state: "writing" as const,
      writer: offset === 2 * SEGMENT ? "w_gone" : "w_elsewhere",
      lease_until: lease,
      created_at: new Date().toISOString(),
      updated_at: new Date().toISOString(),
    });
    // a process that died while it received [2, 3) segments: its row stays, its lease runs out
    await db.kysely
      .insertInto("job_input_parts")
      .values(row(2 * SEGMENT, new Date(Date.now() - 1000).toISOString()))
      .execute();
    // a live writer elsewhere holds [4, 5) segments
    await db.kysely
      .insertInto("job_input_parts")
      .values(row(4 * SEGMENT, new Date(Date.now() + 3_600_000).toISOString()))
      .execute();
    await app.close();
    app = await appOn(db, env);

    const held = await putPart(app, job, data, 4 * SEGMENT, 5 * SEGMENT - 1);
    expect(held.statusCode).toBe(409);
    expect(held.json()).toMatchObject({
      code: "input_range_overlaps",
      landed: [{ start: 0, end: 2 * SEGMENT - 1 }],
      writing: [{ start: 4 * SEGMENT, end: 5 * SEGMENT - 1 }],
    });
    // the live writer gives up (its request failed): its row goes, the range is free
    await db.kysely
      .deleteFrom("job_input_parts")
      .where("job_id", "=", job.job_id)
      .where("writer", "=", "w_elsewhere")
      .execute();
    const again = await putPart(app, job, data, 2 * SEGMENT, 4 * SEGMENT - 1);
    expect(again.statusCode, again.body).toBe(202);
    expect(again.json().landed).toEqual([{ start: 0, end: 4 * SEGMENT - 1 }]);
    const last = await putPart(app, job, data, 4 * SEGMENT, data.length - 1);
    expect(last.statusCode, last.body).toBe(200);
    // the hash covers the bytes landed before the restart, read back from the file
    expect(last.json()).toMatchObject({ state: "queued", bytes_in: data.length, input_sha256: sha(data) });
    expect(await restore((await finished(app, job)).output)).toEqual(data);
  });

  it("a job cancelled while a part arrives: the part answers 409 job_cancelled and nothing completes", async () => {
    const data = textBytes(2 * SEGMENT);
    const job = await buy(app, data.length);
    const body = new PassThrough();
    const answer = app.inject({
      method: "PUT",
      url: `/api/jobs/${job.job_id}/input`,
      headers: {
        authorization: `Bearer ${job.job_token}`,
        "content-type": "application/octet-stream",
        "content-range": `bytes 0-${data.length - 1}/${data.length}`,
        "content-length": String(data.length),
      },
      payload: body,
    });
    body.write(data.subarray(0, SEGMENT));
    // the part is recorded as being written before the job is cancelled
    await vi.waitFor(
      async () => {
        const rows = await db.kysely
          .selectFrom("job_input_parts")
          .selectAll()
          .where("job_id", "=", job.job_id)
          .execute();
        expect(rows.map((r) => r.state)).toEqual(["writing"]);
      },
      { timeout: 10_000, interval: 20 },
    );
    const cancel = await app.inject({
      method: "POST",
      url: `/api/jobs/${job.job_id}/cancel`,
      headers: { authorization: `Bearer ${job.job_token}` },
    });
    expect(cancel.statusCode, cancel.body).toBe(200);
    body.end(data.subarray(SEGMENT));
    const res = await answer;
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json()).toMatchObject({ code: "job_cancelled" });
    const view = await app.inject({
      method: "GET",
      url: `/api/jobs/${job.job_id}`,
      headers: { authorization: `Bearer ${job.job_token}` },
    });
    expect(view.json()).toMatchObject({ state: "cancelled", input_sha256: null });
  });

  it("a stale writing row (its writer died) does not block its range", async () => {
    const data = textBytes(3 * SEGMENT);
    const job = await buy(app, data.length);
    expect((await putPart(app, job, data, 0, SEGMENT - 1)).statusCode).toBe(202);
    const gen = (
      await db.kysely.selectFrom("jobs").select("upload_gen").where("id", "=", job.job_id).executeTakeFirst()
    )?.upload_gen as string;
    const at = new Date().toISOString();
    await db.kysely
      .insertInto("job_input_parts")
      .values({
        job_id: job.job_id,
        gen,
        part_offset: SEGMENT,
        part_length: SEGMENT,
        total: data.length,
        state: "writing",
        writer: "w_dead",
        lease_until: new Date(Date.now() - 1).toISOString(),
        created_at: at,
        updated_at: at,
      })
      .execute();
    expect((await putPart(app, job, data, SEGMENT, data.length - 1)).statusCode).toBe(200);
    expect(await restore((await finished(app, job)).output)).toEqual(data);
  });
});

describe("an input in parts on the S3 store", () => {
  let s3: TestS3;
  let db: Db;
  let app: App;
  beforeAll(async () => {
    s3 = await startS3rver();
    db = (await freshDatabase("sqlite")).db;
    app = await appOn(db, { ...ENV, ...s3.env });
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
    await s3?.close();
  });

  it("is refused with 400 input_parts_unsupported; a whole PUT still works", async () => {
    const data = textBytes(2 * SEGMENT);
    const job = await buy(app, data.length);
    const part = await putPart(app, job, data, 0, SEGMENT - 1);
    expect(part.statusCode).toBe(400);
    expect(part.json()).toMatchObject({ code: "input_parts_unsupported" });
    const whole = await putWhole(app, job, data);
    expect(whole.statusCode, whole.body).toBe(200);
    expect(whole.json()).toMatchObject({ input_sha256: sha(data) });
  });
});
