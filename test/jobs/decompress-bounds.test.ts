import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { declaredOutputOfFile } from "../../src/agent/suite.js";
import { DEFAULT_CHUNK } from "../../src/cli/commands/compress.js";
import { compress, compressStream } from "../../src/codec/index.js";
import type { Db } from "../../src/db/database.js";
import type { App } from "../../src/http/types.js";
import { JOB_MAX_RECORD_OUTPUT_BYTES } from "../../src/jobs/planning.js";
import { TableTaskQueue } from "../../src/jobs/queue/sqlite.js";
import { JobRunner } from "../../src/jobs/runner.js";
import { LocalObjectStore } from "../../src/jobs/storage/local.js";
import { jobKeys, type ObjectStore } from "../../src/jobs/storage/types.js";
import { jobStore } from "../../src/jobs/store.js";
import type { JobRow } from "../../src/jobs/tables.js";
import { appOn } from "../support/app.js";
import { type Engine, freshDatabase } from "../support/databases.js";
import { jobRow } from "../support/jobs.js";

/**
 * Issue #21 item 1: a decompress job never produces more than was quoted, and never holds much
 * memory (docs/suite.md, "Decompress jobs: bounded output"). For `op: decompress` the quoted bytes
 * are the decompressed size; the planner reads every record's declared size before decoding and
 * refuses a job whose total exceeds the quote (409 `output_exceeds_quote` with a fresh quote); a
 * record that lies about its size fails the job with `codec_corrupt`; a record declaring more than
 * `labphi compress` writes is refused (`record_too_large`), so decoding one holds at most 4 MiB.
 */

const MiB = 1024 * 1024;
const GB = 1_000_000_000;
const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** uvarint(container.length) + container: one stream record, as compressStream writes it */
function record(container: Uint8Array): Buffer {
  const head: number[] = [];
  let v = container.length;
  while (v >= 0x80) {
    head.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  head.push(v);
  return Buffer.concat([Buffer.from(head), container]);
}

/**
 * What `labphi compress` writes for `total` zero bytes (4 MiB records): each 4 MiB record of zeros
 * codes to the same 18-byte container, so the stream is built from two containers, not 1 GB.
 */
async function zerosStream(total: number): Promise<Buffer> {
  const full = record(await compress(new Uint8Array(DEFAULT_CHUNK), { level: "fast" }));
  const parts: Buffer[] = [];
  for (let left = total; left > 0; left -= DEFAULT_CHUNK) {
    parts.push(left >= DEFAULT_CHUNK ? full : record(await compress(new Uint8Array(left), { level: "fast" })));
  }
  return Buffer.concat(parts);
}

/** text-like bytes (the general chamber: brotli) */
function textBytes(n: number, seed: number): Buffer {
  const words = ["lab", "phi", "segment", "worker", "queue", "codec", "stream", "record", "job", "\n"];
  const parts: string[] = [];
  let x = seed;
  for (let len = 0; len < n; ) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    const w = `${words[(x >>> 16) % words.length]} `;
    parts.push(w);
    len += w.length;
  }
  return Buffer.from(parts.join("")).subarray(0, n);
}

/** A framed container whose declared original length (uvarint at offset 5) is rewritten to `declared` (same width). */
function withDeclared(container: Uint8Array, declared: number): Buffer {
  const b = Buffer.from(container);
  let width = 0;
  while ((b[5 + width] as number) & 0x80) width++;
  width++;
  let v = declared;
  for (let i = 0; i < width; i++) {
    b[5 + i] = (v & 0x7f) | (i < width - 1 ? 0x80 : 0);
    v = Math.floor(v / 128);
  }
  if (v !== 0) throw new Error(`${declared} does not fit in ${width} uvarint bytes`);
  return b;
}

/** every file under `dir` (recursively), with its size */
function filesUnder(dir: string): { file: string; bytes: number }[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => {
      const file = path.join(e.parentPath, e.name);
      return { file, bytes: fs.statSync(file).size };
    });
}

describe.each<Engine>(["sqlite", "postgres"])(
  "decompress jobs through the app: output above the quote is refused before any output (%s)",
  (engine) => {
    let db: Db;
    let dataDir: string;
    let app: App;
    let base: string;
    let bomb: Buffer;

    beforeAll(async () => {
      ({ db, dataDir } = await freshDatabase(engine));
      app = await appOn(db, { JOB_WORKER_IN_SERVICE: "true" });
      // tus over a real socket (its handler takes the raw request and response)
      await app.listen({ host: "127.0.0.1", port: 0 });
      const addr = app.server.address();
      if (!addr || typeof addr === "string") throw new Error("no address");
      base = `http://127.0.0.1:${addr.port}`;
      bomb = await zerosStream(GB);
    });
    afterAll(async () => {
      await app?.close();
      await db?.close();
    });

    async function buy(bytes: number, identity?: string): Promise<{ id: string; token: string }> {
      const res = await app.inject({
        method: "POST",
        url: "/api/x402-suite",
        headers: identity ? { "x-identity-token": identity } : {},
        payload: { product: "auto", dataClass: "zeros", op: "decompress", bytes },
      });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json() as { job_id: string; job_token: string };
      return { id: body.job_id, token: body.job_token };
    }

    async function joinWork(seed: string): Promise<string> {
      const join = await app.inject({
        method: "POST",
        url: "/api/join-work",
        payload: { name: "bounds tester", intent: "decompress within the quote.", seed: seed.repeat(33) },
      });
      expect(join.statusCode, join.body).toBeLessThan(300);
      return join.json().token as string;
    }

    async function settled(id: string, token: string): Promise<Record<string, unknown>> {
      let view: Record<string, unknown> = {};
      for (const end = Date.now() + 20_000; Date.now() < end; await sleep(50)) {
        const res = await app.inject({
          method: "GET",
          url: `/api/jobs/${id}`,
          headers: { authorization: `Bearer ${token}` },
        });
        view = res.json();
        if (view.state === "done" || view.state === "failed") break;
      }
      return view;
    }

    async function expectRefused(res: { statusCode: number; body: string }, id: string, token: string, quoted: number) {
      expect(res.statusCode, res.body).toBe(409);
      const problem = JSON.parse(res.body) as Record<string, unknown>;
      expect(problem).toMatchObject({ code: "output_exceeds_quote", declared_bytes: GB, bytes_quoted: quoted });
      // a fresh quote for the declared size, same request, persisted (it can buy a job)
      const fresh = problem.quote as Record<string, unknown>;
      expect(fresh).toMatchObject({ op: "decompress", bytes: GB, product: "auto", dataClass: "zeros", state: "open" });
      expect(String(fresh.quote_id)).toMatch(/^qt_/);
      const stored = await jobStore.quote(db.kysely, String(fresh.quote_id));
      expect(stored?.op).toBe("decompress");
      expect(Number(stored?.bytes)).toBe(GB); // a bigint column: a string on PostgreSQL
      // the job ends failed, with the reason; nothing was planned, decoded or written
      const view = await settled(id, token);
      expect(view).toMatchObject({
        state: "failed",
        bytes_out: 0,
        segments_total: 0,
        segments_done: 0,
        error: { code: "output_exceeds_quote" },
      });
      expect(String((view.error as { detail: string }).detail)).toContain(String(fresh.quote_id));
      expect(await jobStore.segments(db.kysely, id)).toEqual([]);
      // no output object, and the refused input is gone too
      expect(filesUnder(path.join(dataDir, "jobs", id))).toEqual([]);
      const out = await app.inject({
        method: "GET",
        url: `/api/jobs/${id}/output`,
        headers: { authorization: `Bearer ${token}` },
      });
      expect(out.statusCode).toBe(409);
    }

    it(`a ${"~5"} KB stream declaring 1 GB, quoted at its own size: PUT answers 409 output_exceeds_quote, no output`, async () => {
      expect(bomb.length).toBeLessThan(15_000);
      const { id, token } = await buy(bomb.length);
      const put = await app.inject({
        method: "PUT",
        url: `/api/jobs/${id}/input`,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/octet-stream" },
        payload: bomb,
      });
      await expectRefused(put, id, token, bomb.length);
    });

    it("with a join-work identity, the fresh quote is the identity's (its monthly free cap counts)", async () => {
      const identity = await joinWork("c");
      const { id, token } = await buy(bomb.length, identity);
      const job = await jobStore.job(db.kysely, id);
      expect(job?.identity_id).toBeTruthy();
      const put = await app.inject({
        method: "PUT",
        url: `/api/jobs/${id}/input`,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/octet-stream" },
        payload: bomb,
      });
      await expectRefused(put, id, token, bomb.length);
      const fresh = JSON.parse(put.body).quote as { quote_id: string; free_cap_period: string | null };
      expect(fresh.free_cap_period).toMatch(/^\d{4}-\d{2}$/);
      expect((await jobStore.quote(db.kysely, fresh.quote_id))?.identity_id).toBe(job?.identity_id);
    });

    it("the same through tus: the PATCH that completes the upload answers 409 output_exceeds_quote", async () => {
      const quoted = 10 * MiB;
      const { id, token } = await buy(quoted);
      const tus = { authorization: `Bearer ${token}`, "tus-resumable": "1.0.0" };
      const created = await fetch(`${base}/api/jobs/uploads`, {
        method: "POST",
        headers: {
          ...tus,
          "upload-length": String(bomb.length),
          "upload-metadata": `job_id ${Buffer.from(id).toString("base64")}`,
        },
      });
      expect(created.status, await created.text()).toBe(201);
      const location = created.headers.get("location") ?? "";
      expect(location).toContain(id);
      const res = await fetch(`${base}/api/jobs/uploads/${id}`, {
        method: "PATCH",
        headers: { ...tus, "upload-offset": "0", "content-type": "application/offset+octet-stream" },
        body: bomb,
      });
      const patch = { statusCode: res.status, body: await res.text() };
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      await expectRefused(patch, id, token, quoted);
      // the completed upload's spool copy is removed with the refusal
      const spool = path.join(dataDir, "spool", "tus");
      expect(fs.readdirSync(spool).filter((f) => f.startsWith(id))).toEqual([]);
    });

    it("a stream whose declared total is within the quote is decoded (quote = decompressed size)", async () => {
      const original = textBytes(300_000, 9);
      const chunks: Buffer[] = [];
      for await (const c of Readable.from([original]).pipe(compressStream({ level: "fast", chunkSize: 64 * 1024 })))
        chunks.push(c as Buffer);
      const stream = Buffer.concat(chunks);
      const { id, token } = await buy(original.length, await joinWork("d"));
      const put = await app.inject({
        method: "PUT",
        url: `/api/jobs/${id}/input`,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/octet-stream" },
        payload: stream,
      });
      expect(put.statusCode, put.body).toBe(200);
      const view = await settled(id, token);
      expect(view).toMatchObject({ state: "done", bytes_out: original.length, output_sha256: sha256(original) });
      // the free cap is charged the output (the quote), not the stream's size
      expect(stream.length).toBeLessThan(original.length / 2);
      const usage = await db.kysely.selectFrom("usage_events").selectAll().where("job_id", "=", id).execute();
      expect(usage.map((u) => Number(u.value_bytes))).toEqual([original.length]);
    });
  },
);

describe("decompress jobs in the runner: lying records fail with codec_corrupt, output bounded", () => {
  let db: Db;
  let dir: string;
  let store: ObjectStore;
  let runner: JobRunner;

  beforeAll(async () => {
    ({ db } = await freshDatabase("sqlite"));
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-bounds-"));
    store = new LocalObjectStore(dir);
    runner = new JobRunner({
      db: db.kysely,
      store,
      queue: new TableTaskQueue(db.kysely, { pollMs: 50, leaseMs: 10_000 }),
      segmentBytes: 64 * 1024,
      attempts: 2,
      backoffMs: 50,
      threads: 2,
      concurrency: 2,
    });
    await runner.start();
  });
  afterAll(async () => {
    await runner?.stop({ graceMs: 0 });
    await db?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function submit(input: Uint8Array, quoted: number): Promise<JobRow> {
    const job = jobRow({ op: "decompress", bytes_quoted: quoted, bytes_in: input.length, input_sha256: sha256(input) });
    await jobStore.insertJob(db.kysely, job);
    await store.put(jobKeys.input(job.id), Readable.from([Buffer.from(input)]));
    await runner.schedule(job).catch(() => {});
    return job;
  }

  async function finished(id: string): Promise<JobRow> {
    for (const end = Date.now() + 30_000; ; await sleep(50)) {
      const j = await jobStore.job(db.kysely, id);
      if (j && (j.state === "done" || j.state === "failed")) return j;
      if (Date.now() > end) throw new Error(`job ${id} still ${j?.state}`);
    }
  }

  /** bytes of every output object the job left */
  const outputBytes = (id: string) => filesUnder(path.join(dir, "jobs", id, "out")).reduce((n, f) => n + f.bytes, 0);

  const honest = textBytes(64 * 1024, 3);

  for (const [what, declared] of [
    ["less than it decodes", 64 * 1024 - 1],
    ["more than it decodes", 64 * 1024 + 1],
  ] as const) {
    it(`a record that declares ${what} fails the job with codec_corrupt; output stays within the quote`, async () => {
      // three honest records, the liar, two more honest ones; quoted exactly the declared total
      const container = await compress(honest, { level: "fast" });
      const liar = record(withDeclared(container, declared));
      const good = record(container);
      const input = Buffer.concat([good, good, good, liar, good, good]);
      const quoted = 5 * honest.length + declared;
      const job = await finished((await submit(input, quoted)).id);
      expect(job.state).toBe("failed");
      expect(job.error_code).toBe("codec_corrupt");
      expect(job.error_detail).toMatch(/segment \d+ failed after 1 attempt\(s\)/);
      expect(Number(job.bytes_out)).toBe(0);
      expect(outputBytes(job.id)).toBeLessThanOrEqual(quoted);
      // the liar's segment wrote nothing
      const segs = await jobStore.segments(db.kysely, job.id);
      const failed = segs.filter((s) => s.state === "failed");
      expect(failed).toHaveLength(1);
      const out = failed.map((s) => path.join(dir, jobKeys.segmentOut(job.id, s.idx, s.gen)));
      expect(out.filter((f) => fs.existsSync(f))).toEqual([]);
    });
  }

  it(`a record declaring more than ${JOB_MAX_RECORD_OUTPUT_BYTES} bytes (what labphi compress writes) is refused at planning: record_too_large`, async () => {
    expect(JOB_MAX_RECORD_OUTPUT_BYTES).toBe(DEFAULT_CHUNK);
    // a 4 MiB zeros container that claims 200 MiB (same uvarint width), quoted generously
    const big = record(withDeclared(await compress(new Uint8Array(4 * MiB), { level: "fast" }), 200 * MiB));
    const job = await finished((await submit(big, GB)).id);
    expect(job.state).toBe("failed");
    expect(job.error_code).toBe("record_too_large");
    expect(job.segments_total).toBe(0);
    expect(outputBytes(job.id)).toBe(0);
  });

  it("a declared total above the quote fails the job at planning with output_exceeds_quote (no fresh quote without a quote service)", async () => {
    const input = await zerosStream(64 * MiB);
    const job = await finished((await submit(input, 64 * MiB - 1)).id);
    expect(job.state).toBe("failed");
    expect(job.error_code).toBe("output_exceeds_quote");
    expect(job.error_detail).toContain(String(64 * MiB));
    expect(job.segments_total).toBe(0);
    expect(outputBytes(job.id)).toBe(0);
  });

  it("the same stream quoted at its decompressed size is done, output = quote", async () => {
    const input = await zerosStream(8 * MiB + 5);
    const job = await finished((await submit(input, 8 * MiB + 5)).id);
    expect(job.state).toBe("done");
    // segments end at 64 KiB of declared output too: a stream that expands a lot is still spread out
    expect(job.segments_total).toBe(3);
    expect(Number(job.bytes_out)).toBe(8 * MiB + 5);
    expect(job.output_sha256).toBe(sha256(new Uint8Array(8 * MiB + 5)));
  });

  it("a record that is not a framed container is refused at planning (input_corrupt), nothing decoded", async () => {
    const junk = record(Buffer.from(randomBytes(64)));
    const job = await finished((await submit(junk, GB)).id);
    expect(job.state).toBe("failed");
    expect(job.error_code).toBe("input_corrupt");
    expect(outputBytes(job.id)).toBe(0);
  });
});

describe("clients quote a decompress job on the size its stream declares", () => {
  it("the agent client (labphi agent suite --op decompress) reads it from the record headers", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-declared-"));
    try {
      const stream = path.join(dir, "zeros.lpz");
      fs.writeFileSync(stream, await zerosStream(10 * MiB + 3));
      expect(await declaredOutputOfFile(stream)).toBe(10 * MiB + 3);
      const other = path.join(dir, "plain.txt");
      fs.writeFileSync(other, "not a compressed stream at all, just text\n");
      expect(await declaredOutputOfFile(other)).toBeNull();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
