import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresDatabase } from "../support/databases.js";
import { healthy, type Service, spawnService } from "./service.js";

/**
 * Issue #21 item 8: the same limits on many instances. Two service processes (`labphi serve` on
 * two ports) on one PostgreSQL database and one DATA_DIR, as two instances behind a load balancer:
 * the per-IP rate limits hold across them (HTTP routes and MCP tool calls count in the same rows),
 * and a tus upload whose PATCH requests alternate between them completes with the right SHA-256.
 */

let dir: string;
let databaseUrl: string;
let a: Service;
let b: Service;

beforeAll(async () => {
  databaseUrl = await createPostgresDatabase();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-two-"));
  const env = {
    DATABASE_URL: databaseUrl,
    DATA_DIR: path.join(dir, "data"),
    BASE_URL: "http://127.0.0.1",
    RATE_LIMIT_ENABLED: "true",
    RATE_LIMIT_CODEC_PER_MINUTE: "5",
    RATE_LIMIT_PAID_PER_MINUTE: "100",
  };
  // One after the other: the first migrates the database and writes DATA_DIR's service keys.
  a = spawnService(env);
  await healthy(a);
  b = spawnService(env);
  await healthy(b);
}, 120_000);

afterAll(async () => {
  await a?.kill();
  await b?.kill();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A free job bought from `s`, its tus upload created there: the upload path and the headers. */
async function newUpload(s: Service, total: number) {
  const bought = await fetch(
    `${s.url}/api/x402-suite`,
    json({ product: "auto", dataClass: "binary", op: "compress", bytes: total }),
  );
  const job = (await bought.json()) as { job_id: string; job_token: string };
  expect(bought.status, JSON.stringify(job)).toBe(200);
  const auth = { authorization: `Bearer ${job.job_token}`, "tus-resumable": "1.0.0" };
  const created = await fetch(`${s.url}/api/jobs/uploads`, {
    method: "POST",
    headers: {
      ...auth,
      "upload-length": String(total),
      "upload-metadata": `job_id ${Buffer.from(job.job_id).toString("base64")}`,
    },
  });
  expect(created.status, await created.clone().text()).toBe(201);
  return { job, auth, upload: new URL(created.headers.get("location") as string).pathname };
}

const json = (body: unknown) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

describe("two service processes on one PostgreSQL", () => {
  it("share the per-IP limit: 3 codec requests to A, 3 to B, the 6th is 429; MCP tool calls count in it too", async () => {
    const omni = async (s: Service) =>
      (await fetch(`${s.url}/api/omni`, json({ op: "profile", data: "aGVsbG8=" }))).status;
    const codes: number[] = [];
    for (let i = 0; i < 3; i++) codes.push(await omni(a));
    for (let i = 0; i < 3; i++) codes.push(await omni(b));
    expect(codes).toEqual([200, 200, 200, 200, 200, 429]);
    const r = await fetch(`${a.url}/api/omni`, json({ op: "profile", data: "aGVsbG8=" }));
    expect(r.status).toBe(429);
    expect(await r.json()).toMatchObject({ code: "rate_limited", group: "codec", limit: 5 });
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);

    // The same budget over MCP on either instance: the compress tool answers the rate_limited problem.
    const call = await fetch(`${b.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "compress", arguments: { data: "hello hello hello" } },
      }),
    });
    expect(call.status).toBe(200);
    const text = await call.text();
    const data = text.includes("data:") ? (text.split("data:").at(-1) ?? "") : text;
    const answer = JSON.parse(data.trim()) as { result: { isError?: boolean; structuredContent: unknown } };
    expect(answer.result.isError).toBe(true);
    expect(answer.result.structuredContent).toMatchObject({ status: 429, code: "rate_limited", group: "codec" });
  });

  it("a tus upload whose PATCH requests alternate between A and B completes with the right SHA-256", async () => {
    const total = 3 * 1024 * 1024 + 123;
    const data = randomBytes(total);
    const { job, auth, upload } = await newUpload(a, total);

    const chunk = 512 * 1024;
    const served: string[] = [];
    let offset = 0;
    for (let i = 0; offset < total; i++) {
      const s = i % 2 === 0 ? b : a; // the first PATCH goes to the instance that did not create it
      // Resume as a client would: ask this instance for the offset first.
      const head = await fetch(`${s.url}${upload}`, { method: "HEAD", headers: auth });
      expect(head.status).toBe(200);
      expect(Number(head.headers.get("upload-offset"))).toBe(offset);
      const part = data.subarray(offset, Math.min(total, offset + chunk));
      const res = await fetch(`${s.url}${upload}`, {
        method: "PATCH",
        headers: { ...auth, "upload-offset": String(offset), "content-type": "application/offset+octet-stream" },
        body: part,
      });
      expect(res.status, await res.clone().text()).toBe(204);
      offset += part.length;
      expect(Number(res.headers.get("upload-offset"))).toBe(offset);
      served.push(s === a ? "A" : "B");
    }
    expect(new Set(served)).toEqual(new Set(["A", "B"]));

    const view = await fetch(`${a.url}/api/jobs/${job.job_id}`, { headers: { authorization: auth.authorization } });
    const body = (await view.json()) as { bytes_in: number; input_sha256: string | null; state: string };
    expect(body.bytes_in).toBe(total);
    expect(["queued", "running", "done"]).toContain(body.state);
    expect(body.input_sha256).toBe(createHash("sha256").update(data).digest("hex"));
  }, 60_000);

  it("two PATCH requests of one upload on A and B never write at once: the waiter stops the holder, one write wins", async () => {
    const total = 1024 * 1024;
    const half = 64 * 1024;
    const { job, auth, upload } = await newUpload(a, total);
    // A: a PATCH at offset 0 that sends 64 KiB of "a", then stalls (a client on a bad network).
    const target = new URL(`${a.url}${upload}`);
    const outcomeA = new Promise<{ status: string; offset: number }>((resolve) => {
      const req = http.request(
        target,
        {
          method: "PATCH",
          headers: {
            ...auth,
            "upload-offset": "0",
            "content-type": "application/offset+octet-stream",
            "content-length": String(2 * half),
          },
        },
        (res) => {
          res.resume();
          res.on("end", () =>
            resolve({ status: String(res.statusCode), offset: Number(res.headers["upload-offset"] ?? -1) }),
          );
          res.on("error", () => resolve({ status: "reset", offset: -1 }));
        },
      );
      req.on("error", () => resolve({ status: "reset", offset: -1 }));
      req.write(Buffer.alloc(half, "a"));
      // the rest comes late, if the request is still open
      setTimeout(() => {
        if (!req.destroyed) req.end(Buffer.alloc(half, "a"));
      }, 2500);
    });
    await sleep(500);
    // B: resume as a client would (HEAD, then PATCH from that offset) while A's request is stalled.
    const head = await fetch(`${b.url}${upload}`, { method: "HEAD", headers: auth });
    expect(head.status).toBe(200);
    const offset = Number(head.headers.get("upload-offset"));
    const patchB = await fetch(`${b.url}${upload}`, {
      method: "PATCH",
      headers: { ...auth, "upload-offset": String(offset), "content-type": "application/offset+octet-stream" },
      body: Buffer.alloc(half, "b"),
    });
    const answerA = await outcomeA;
    // A's request was told to stop when B asked for the upload: it answers what it really wrote
    // (tus ends the holder's PATCH early with its offset), and B continued from exactly there.
    if (answerA.status === "204") expect(answerA.offset).toBe(offset);
    expect(patchB.status).toBe(204);
    const end = Number(patchB.headers.get("upload-offset"));
    expect(end).toBe(offset + half);
    // The bytes on the shared spool: A's part, then B's, nothing overwritten.
    const file = fs.readFileSync(path.join(dir, "data", "spool", "tus", job.job_id));
    expect(file.length).toBe(end);
    expect(file.subarray(0, offset).every((c) => c === 0x61)).toBe(true);
    expect(file.subarray(offset).every((c) => c === 0x62)).toBe(true);
    const final = await fetch(`${a.url}${upload}`, { method: "HEAD", headers: auth });
    expect(Number(final.headers.get("upload-offset"))).toBe(end);
  }, 60_000);

  it("both instances lock through PostgreSQL (each LISTENs for release requests)", async () => {
    const c = new pg.Client({ connectionString: databaseUrl });
    await c.connect();
    try {
      const r = await c.query(
        "select count(*)::int as n from pg_stat_activity where datname = current_database() and query ilike 'listen labphi_tus_release%'",
      );
      expect(r.rows[0].n).toBe(2);
    } finally {
      await c.end();
    }
  });
});
