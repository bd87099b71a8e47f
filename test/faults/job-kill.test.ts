import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decompressStream } from "../../src/codec/index.js";
import { healthy, readDb, type Service, spawnService } from "./service.js";

/**
 * Issue #14 "Faults": the service (`node bin/labphi.mjs serve`, SQLite, its in-service worker on
 * the table queue) is killed with SIGKILL while a segment of a suite job runs, then restarted on
 * the same DATA_DIR. The job finishes with the right bytes; it is never stuck: the dead process's
 * segment is taken again once its lease runs out (JOB_LEASE_SECONDS + the queue's poll).
 */

const LEASE_S = 3;
const SEGMENT = 256 * 1024;
const SEGMENTS = 8;
const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

function textBytes(n: number, seed: number): Buffer {
  const words = ["lab", "phi", "segment", "lease", "kill", "restart", "codec", "stream", "job", "7", "\n"];
  const parts: string[] = [];
  let x = seed;
  let len = 0;
  while (len < n) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    const w = `${words[(x >>> 16) % words.length]}${x % 5 === 0 ? "," : ""} `;
    parts.push(w);
    len += w.length;
  }
  return Buffer.from(parts.join("")).subarray(0, n);
}

let dataDir: string;
const running: Service[] = [];
beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-faults-job-"));
});
afterAll(async () => {
  for (const s of running) await s.kill();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function serve(): Promise<Service> {
  const s = spawnService({
    DATA_DIR: dataDir,
    JOB_LEASE_SECONDS: String(LEASE_S),
    JOB_SEGMENT_BYTES: String(SEGMENT),
    JOB_WORKER_THREADS: "1",
  });
  running.push(s);
  await healthy(s);
  return s;
}

const segmentStates = (jobId: string) =>
  readDb(dataDir, (db) =>
    (db.prepare("select state from job_segments where job_id = ? order by idx").all(jobId) as { state: string }[]).map(
      (r) => r.state,
    ),
  );

describe("SIGKILL during a suite job (service with its in-service worker)", () => {
  it("after a restart the job finishes with the right bytes, within the lease bound", async () => {
    const original = textBytes(SEGMENTS * SEGMENT, 7);
    const s = await serve();
    const quote = await fetch(`${s.url}/api/x402-suite`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({
        product: "auto",
        dataClass: "text",
        op: "compress",
        bytes: original.length,
        level: "max",
      }),
    });
    expect(quote.status, await quote.clone().text()).toBe(200);
    const { job_id: id, job_token: token } = (await quote.json()) as { job_id: string; job_token: string };
    const auth = { authorization: `Bearer ${token}` };
    const put = await fetch(`${s.url}/api/jobs/${id}/input`, {
      method: "PUT",
      headers: { ...auth, "content-type": "application/octet-stream" },
      body: original,
    });
    expect(put.status, await put.clone().text()).toBe(200);

    // kill -9 the whole service while a segment runs (and before the job is done)
    const end = Date.now() + 60_000;
    while (!segmentStates(id).includes("running")) {
      expect(Date.now()).toBeLessThan(end);
      await new Promise((r) => setTimeout(r, 20));
    }
    await s.kill();
    expect((await s.exited).signal).toBe("SIGKILL");
    const atKill = segmentStates(id);
    expect(atKill).toContain("running");
    expect(atKill.filter((x) => x === "done").length).toBeLessThan(SEGMENTS);

    const restarted = performance.now();
    const again = await serve();
    let view: { state: string; output_sha256?: string | null; error?: unknown } = { state: "" };
    while (view.state !== "done" && view.state !== "failed") {
      expect(performance.now() - restarted, JSON.stringify(view)).toBeLessThan(90_000);
      await new Promise((r) => setTimeout(r, 200));
      const r = await fetch(`${again.url}/api/jobs/${id}`, { headers: { ...auth, accept: "application/json" } });
      view = (await r.json()) as typeof view;
    }
    const recoveredS = (performance.now() - restarted) / 1000;
    expect(view.state, JSON.stringify(view)).toBe("done");
    const out = Buffer.from(await (await fetch(`${again.url}/api/jobs/${id}/output`, { headers: auth })).arrayBuffer());
    expect(sha256(out)).toBe(view.output_sha256);
    const restored: Buffer[] = [];
    for await (const c of Readable.from([out]).pipe(decompressStream())) restored.push(c as Buffer);
    expect(sha256(Buffer.concat(restored))).toBe(sha256(original));
    // the interrupted segment ran again (a second attempt), nothing ran twice to completion
    const attempts = readDb(dataDir, (db) =>
      db.prepare("select attempts, state from job_segments where job_id = ?").all(id),
    ) as { attempts: number; state: string }[];
    expect(attempts.every((a) => a.state === "done")).toBe(true);
    expect(attempts.some((a) => a.attempts >= 2)).toBe(true);
    console.log(`job finished ${recoveredS.toFixed(1)} s after the restart (lease ${LEASE_S} s)`);
    await again.kill();
  }, 150_000);
});
