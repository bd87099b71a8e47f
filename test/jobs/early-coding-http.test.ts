import { createHash } from "node:crypto";
import http from "node:http";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decompressStream } from "../../src/codec/index.js";
import { type TestApp, testApp } from "../support/app.js";
import type { Engine } from "../support/databases.js";

/**
 * Coding while the input arrives, through the whole app (docs/suite.md "Queue and workers"): a raw
 * PUT whose body is still being sent already has segments done, on SQLite (in-process queue) and
 * on PostgreSQL (BullMQ), and the output restores the input.
 */

const SEGMENT = 64 * 1024;
const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function textBytes(n: number): Buffer {
  const lines: string[] = [];
  let len = 0;
  for (let i = 0; len < n; i++) {
    const line = `2026-11-24T08:${String(i % 60).padStart(2, "0")}:00Z worker=${i % 7} segment=${i % 13} bytes=${(i * 7919) % 100_003}\n`;
    lines.push(line);
    len += line.length;
  }
  return Buffer.from(lines.join("")).subarray(0, n);
}

describe.each<Engine>(["sqlite", "postgres"])("coding while a PUT is still arriving (%s)", (engine) => {
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    t = await testApp(engine, { JOB_SEGMENT_BYTES: String(SEGMENT), JOB_WORKER_IN_SERVICE: "true" });
    await t.app.listen({ host: "127.0.0.1", port: 0 });
    const addr = t.app.server.address();
    if (!addr || typeof addr === "string") throw new Error("no address");
    base = `http://127.0.0.1:${addr.port}`;
  });
  afterAll(async () => {
    await t?.close();
  });

  /**
   * GET on a connection of its own, closed after the answer: keep-alive connections that polled
   * a job were seen to hold the app's close for the server's keepAliveTimeout (closing note).
   */
  const get = (path: string, token: string) =>
    new Promise<{ status: number; body: Buffer }>((resolve, reject) => {
      const req = http.get(`${base}${path}`, { agent: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
        const parts: Buffer[] = [];
        res.on("data", (c: Buffer) => parts.push(c));
        res.on("end", () => {
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts) });
          req.destroy();
        });
        res.on("error", reject);
      });
      req.on("error", reject);
    });
  const getJson = async (path: string, token: string) =>
    JSON.parse((await get(path, token)).body.toString("utf8")) as Record<string, unknown>;

  it("segments are done before the upload ends; the job's output restores the input", async () => {
    const data = textBytes(10 * SEGMENT + 777);
    const bought = await fetch(`${base}/api/x402-suite`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ product: "auto", dataClass: "text", op: "compress", bytes: data.length }),
    });
    expect(bought.status).toBe(200);
    const { job_id: id, job_token: token } = (await bought.json()) as { job_id: string; job_token: string };

    // the first 4 segments, then the body waits
    const req = http.request(`${base}/api/jobs/${id}/input`, {
      method: "PUT",
      agent: false,
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/octet-stream",
        "content-length": String(data.length),
      },
    });
    const answered = new Promise<{ status: number; body: string }>((resolve, reject) => {
      req.on("response", (res) => {
        let body = "";
        res.on("data", (c) => {
          body += c;
        });
        res.on("end", () => {
          resolve({ status: res.statusCode ?? 0, body });
          req.destroy(); // no connection left for the app's close to wait on
        });
      });
      req.on("error", reject);
    });
    req.write(data.subarray(0, 4 * SEGMENT + 10));

    let during: Record<string, unknown> = {};
    for (const end = Date.now() + 30_000; Date.now() < end; await sleep(50)) {
      during = await getJson(`/api/jobs/${id}`, token);
      if (Number(during.segments_done) >= 2) break;
    }
    expect(during).toMatchObject({ state: "uploading", segments_total: 0 });
    expect(Number(during.segments_done)).toBeGreaterThanOrEqual(2);

    req.end(data.subarray(4 * SEGMENT + 10));
    const put = await answered;
    expect(put.status, put.body).toBe(200);

    let view: Record<string, unknown> = {};
    for (const end = Date.now() + 60_000; Date.now() < end; await sleep(100)) {
      view = await getJson(`/api/jobs/${id}`, token);
      if (view.state === "done" || view.state === "failed") break;
    }
    expect(view).toMatchObject({ state: "done", segments_total: 11, segments_done: 11, bytes_in: data.length });
    expect(view.input_sha256).toBe(sha256(data));

    const out = await get(`/api/jobs/${id}/output`, token);
    expect(out.status).toBe(200);
    const container = out.body;
    expect(sha256(container)).toBe(view.output_sha256);
    const parts: Buffer[] = [];
    for await (const c of Readable.from([container]).pipe(decompressStream())) parts.push(c as Buffer);
    expect(sha256(Buffer.concat(parts))).toBe(sha256(data));
  });

  const buy = async (bytes: number) => {
    const bought = await fetch(`${base}/api/x402-suite`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ product: "auto", dataClass: "text", op: "compress", bytes }),
    });
    const answer = (await bought.json()) as Record<string, unknown>;
    expect(bought.status, JSON.stringify(answer)).toBe(200);
    return answer as unknown as { job_id: string; job_token: string };
  };
  const putStart = (id: string, token: string, length: number) =>
    http.request(`${base}/api/jobs/${id}/input`, {
      method: "PUT",
      agent: false,
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/octet-stream",
        "content-length": String(length),
      },
    });
  /** GET …/output?follow=1: the bytes as they come, the trailers, and whether the answer was cut. */
  const follow = (id: string, token: string) => {
    const chunks: Buffer[] = [];
    let status = 0;
    const ended = new Promise<{ cut: boolean; trailers: NodeJS.Dict<string> }>((resolve) => {
      const req = http.get(
        `${base}/api/jobs/${id}/output?follow=1`,
        { agent: false, headers: { authorization: `Bearer ${token}` } },
        (res) => {
          status = res.statusCode ?? 0;
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => resolve({ cut: !res.complete, trailers: res.trailers }));
          res.on("aborted", () => resolve({ cut: true, trailers: {} }));
          res.on("error", () => resolve({ cut: true, trailers: {} }));
        },
      );
      req.on("error", () => resolve({ cut: true, trailers: {} }));
    });
    return { chunks, ended, status: () => status };
  };

  it("output?follow=1 sends coded segments while the input still arrives, then the whole output and its digest", async () => {
    const data = textBytes(10 * SEGMENT + 555);
    const { job_id: id, job_token: token } = await buy(data.length);
    // the download is asked for before the first byte of the input
    const f = follow(id, token);
    const req = putStart(id, token, data.length);
    const answered = new Promise<number>((resolve, reject) => {
      req.on("response", (res) => {
        res.resume();
        res.on("end", () => {
          resolve(res.statusCode ?? 0);
          req.destroy();
        });
      });
      req.on("error", reject);
    });
    req.write(data.subarray(0, 4 * SEGMENT + 10));
    for (const end = Date.now() + 30_000; Date.now() < end && f.chunks.length === 0; ) await sleep(50);
    // output bytes arrived while the job is still receiving its input
    expect(f.status()).toBe(200);
    expect(f.chunks.length).toBeGreaterThan(0);
    expect((await getJson(`/api/jobs/${id}`, token)).state).toBe("uploading");
    req.end(data.subarray(4 * SEGMENT + 10));
    expect(await answered).toBe(200);
    const { cut, trailers } = await f.ended;
    expect(cut).toBe(false);
    const view = await getJson(`/api/jobs/${id}`, token);
    expect(view.state).toBe("done");
    const body = Buffer.concat(f.chunks);
    expect(sha256(body)).toBe(view.output_sha256);
    expect(trailers["repr-digest"]).toBe(
      `sha-256=:${Buffer.from(String(view.output_sha256), "hex").toString("base64")}:`,
    );
    const parts: Buffer[] = [];
    for await (const c of Readable.from([body]).pipe(decompressStream())) parts.push(c as Buffer);
    expect(sha256(Buffer.concat(parts))).toBe(sha256(data));
  });

  it("output?follow=1 is cut when the job is cancelled", async () => {
    const data = textBytes(6 * SEGMENT);
    const { job_id: id, job_token: token } = await buy(data.length);
    const f = follow(id, token);
    const req = putStart(id, token, data.length);
    req.on("error", () => {});
    req.on("response", (res) => res.resume());
    req.write(data.subarray(0, 2 * SEGMENT + 10));
    for (const end = Date.now() + 30_000; Date.now() < end && f.chunks.length === 0; ) await sleep(50);
    expect(f.chunks.length).toBeGreaterThan(0);
    const cancelled = await fetch(`${base}/api/jobs/${id}/cancel`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
    });
    expect(cancelled.status).toBe(200);
    const { cut } = await f.ended;
    expect(cut).toBe(true);
    req.destroy();
  });
});
