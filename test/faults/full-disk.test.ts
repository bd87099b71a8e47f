import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { healthy, type Service, spawnService } from "./service.js";

/**
 * Issue #14 "Faults": a full disk under DATA_DIR. Without root, the service runs under a file-size
 * limit (RLIMIT_FSIZE through `prlimit --fsize`): a write past it fails with EFBIG, as a write on a
 * full disk fails with ENOSPC. An upload that does not fit answers 507 insufficient_storage (a
 * problem, not a 500 or a dead process), and what was stored before it is still there, byte for byte,
 * in this process and after a restart without the limit.
 */

const MiB = 1024 * 1024;
const LIMIT = 8 * MiB; // larger than the database and the built bundle, smaller than the big upload
const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
const hasPrlimit = (() => {
  try {
    execFileSync("prlimit", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

let dataDir: string;
const running: Service[] = [];
beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-faults-disk-"));
});
afterAll(async () => {
  for (const s of running) await s.kill();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function serve(prefix?: string[]): Promise<Service> {
  const s = spawnService({ DATA_DIR: dataDir }, prefix ? { prefix } : {});
  running.push(s);
  await healthy(s);
  return s;
}

const json = { "content-type": "application/json", accept: "application/json" };

/** A free suite job (within the free cap): its id, token and upload URL. */
async function freeJob(s: Service, bytes: number) {
  const r = await fetch(`${s.url}/api/x402-suite`, {
    method: "POST",
    headers: json,
    body: JSON.stringify({ product: "auto", dataClass: "text", op: "compress", bytes, level: "fast" }),
  });
  expect(r.status, await r.clone().text()).toBe(200);
  const b = (await r.json()) as { job_id: string; job_token: string };
  return { id: b.job_id, auth: { authorization: `Bearer ${b.job_token}` } };
}

const upload = (s: Service, job: { id: string; auth: Record<string, string> }, body: Buffer) =>
  fetch(`${s.url}/api/jobs/${job.id}/input`, {
    method: "PUT",
    headers: { ...job.auth, "content-type": "application/octet-stream" },
    body,
  });

async function waitDone(s: Service, job: { id: string; auth: Record<string, string> }, ms = 60_000) {
  const end = Date.now() + ms;
  for (;;) {
    const r = await fetch(`${s.url}/api/jobs/${job.id}`, { headers: { ...job.auth, accept: "application/json" } });
    const view = (await r.json()) as { state: string; error: unknown };
    if (view.state === "done" || view.state === "failed" || Date.now() > end) return view;
    await new Promise((done) => setTimeout(done, 250));
  }
}

const output = async (s: Service, job: { id: string; auth: Record<string, string> }) => {
  const r = await fetch(`${s.url}/api/jobs/${job.id}/output`, { headers: job.auth });
  expect(r.status).toBe(200);
  return Buffer.from(await r.arrayBuffer());
};

describe.skipIf(!hasPrlimit)("a full disk under DATA_DIR (RLIMIT_FSIZE)", () => {
  it("an upload that does not fit → 507 insufficient_storage; what was stored is kept", async () => {
    const s = await serve(["prlimit", `--fsize=${LIMIT}`, "--"]);
    // stored before the disk fills: a finished job (input and output)
    const small = await freeJob(s, MiB);
    const text = Buffer.from(
      Array.from({ length: 40_000 }, (_, i) => `line ${i} of the stored input\n`)
        .join("")
        .slice(0, MiB),
    );
    const put = await upload(s, small, text);
    expect(put.status, await put.clone().text()).toBe(200);
    expect(await waitDone(s, small)).toMatchObject({ state: "done" });
    const storedOut = await output(s, small);

    // the big upload does not fit
    const big = await freeJob(s, 12 * MiB);
    const res = await upload(s, big, randomBytes(12 * MiB));
    expect(res.status, await res.clone().text()).toBe(507);
    expect(res.headers.get("content-type")).toMatch(/application\/problem\+json/);
    expect(((await res.json()) as { code: string }).code).toBe("insufficient_storage");
    // the same through tus (create, then a PATCH that does not fit)
    const tusJob = await freeJob(s, 12 * MiB);
    const created = await fetch(`${s.url}/api/jobs/uploads`, {
      method: "POST",
      headers: {
        ...tusJob.auth,
        "Tus-Resumable": "1.0.0",
        "Upload-Length": String(12 * MiB),
        "Upload-Metadata": `job_id ${Buffer.from(tusJob.id).toString("base64")}`,
      },
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const patch = await fetch(`${s.url}/api/jobs/uploads/${tusJob.id}`, {
      method: "PATCH",
      headers: {
        ...tusJob.auth,
        "Tus-Resumable": "1.0.0",
        "Upload-Offset": "0",
        "Content-Type": "application/offset+octet-stream",
      },
      body: randomBytes(12 * MiB),
    });
    expect(patch.status, await patch.clone().text()).toBe(507);
    expect(((await patch.json()) as { code: string }).code).toBe("insufficient_storage");
    // the service is alive and consistent: the job is not queued on half an input
    expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
    const bigView = await fetch(`${s.url}/api/jobs/${big.id}`, {
      headers: { ...big.auth, accept: "application/json" },
    });
    expect(["awaiting_input", "uploading"]).toContain(((await bigView.json()) as { state: string }).state);
    expect(sha256(await output(s, small))).toBe(sha256(storedOut));
    await s.kill();

    // after a restart without the limit: nothing stored earlier is lost, and the upload can be retried
    const again = await serve();
    expect(sha256(await output(again, small))).toBe(sha256(storedOut));
    const retry = await upload(again, big, randomBytes(12 * MiB));
    expect(retry.status, await retry.clone().text()).toBe(200);
    await again.kill();
  }, 120_000);
});
