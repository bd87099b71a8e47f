import { type ChildProcess, spawn } from "node:child_process";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { toClientEvmSigner } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import pg from "pg";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decompressStream } from "../../src/codec/index.js";
import { migrations } from "../../src/db/migrations/index.js";
import { SANDBOX_SKU } from "../../src/sandbox/banner.js";
import { evmKey } from "../payments/x402/helpers.js";
import { type EvmChain, startAnvil } from "../support/chains/evm.js";
import { createPostgresDatabase } from "../support/databases.js";
import { waitForListening } from "../support/ports.js";
import { startS3rver, type TestS3 } from "../support/s3rver.js";

/**
 * Issue #25 item 3: the topology of deploy/compose.yaml without containers. Two service processes
 * (`node bin/labphi.mjs serve`, NODE_ENV=production, different PORTs) behind a round-robin reverse
 * proxy, two `labphi worker` processes, one PostgreSQL (an EMPTY database: both services migrate it
 * at the same moment), the in-process S3 server, anvil for x402 on Base. Through the proxy: a free
 * suite job, a paid one (the stock @x402/fetch client) and a product purchase, each request of a
 * flow landing on the next instance. The services trust forwarded addresses only from the proxy's
 * address (TRUST_PROXY), so a client's own X-Forwarded-For does not buy it a fresh free allowance.
 */

const ROOT = path.resolve(import.meta.dirname, "../..");
const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** The proxy reaches the services from this address; clients reach the proxy from others. */
const PROXY_SOURCE = "127.0.0.2";
const SEGMENT = 64 * 1024;
const FREE_PER_IP = 300_000;
const JOB_BYTES = 200_000;

function textBytes(n: number, seed: number): Buffer {
  const words = ["deploy", "compose", "proxy", "worker", "service", "postgres", "bucket", "lease", "42", "\n"];
  const parts: string[] = [];
  let x = seed;
  let len = 0;
  while (len < n) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    const w = `${words[(x >>> 16) % words.length]} `;
    parts.push(w);
    len += w.length;
  }
  return Buffer.from(parts.join("")).subarray(0, n);
}

interface Proc {
  name: string;
  child: ChildProcess;
  output: () => string;
}

function launch(name: string, args: string[], env: Record<string, string>): Proc {
  const child = spawn(process.execPath, ["bin/labphi.mjs", ...args], {
    cwd: ROOT,
    // only what a host gives the process (the test runner's environment carries settings of its own)
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? os.tmpdir(), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let text = "";
  child.stdout?.on("data", (c) => {
    text += c;
  });
  child.stderr?.on("data", (c) => {
    text += c;
  });
  return { name, child, output: () => text };
}

async function until<T>(check: () => Promise<T | undefined> | T | undefined, ms: number, what: () => string) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what()}`);
    await sleep(100);
  }
}

/**
 * A round-robin reverse proxy as Caddy's or nginx's in deploy/: each request goes to the next
 * service, from PROXY_SOURCE, with the client's address appended to X-Forwarded-For. `backends`
 * holds the services' ports: filled in once they listen (their BASE_URL is the proxy's URL, so the
 * proxy starts first).
 */
async function startProxy(backends: number[]) {
  const served = backends.map(() => 0);
  let next = 0;
  const server = http.createServer((req, res) => {
    const i = next++ % backends.length;
    served[i] = (served[i] ?? 0) + 1;
    const prior = req.headers["x-forwarded-for"];
    const headers = {
      ...req.headers,
      "x-forwarded-for": [prior, req.socket.remoteAddress].filter(Boolean).join(", "),
      "x-forwarded-proto": "http",
    };
    const upstream = http.request(
      { host: "127.0.0.1", port: backends[i], localAddress: PROXY_SOURCE, method: req.method, path: req.url, headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on("error", () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    served,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A request to the proxy from a chosen loopback source address (another "client machine"). */
function requestFrom(
  source: string,
  url: string,
  init: { method: string; headers?: Record<string, string>; body?: Buffer | string },
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: init.method, headers: init.headers, localAddress: source }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(init.body);
  });
}

describe("deploy topology: 2 services behind a proxy, 2 workers, PostgreSQL, S3, x402 on anvil", () => {
  let databaseUrl: string;
  let s3: TestS3;
  let evm: EvmChain;
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  const procs: Proc[] = [];
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-deploy-"));
  let buyer: { key: `0x${string}`; address: `0x${string}` };
  let seller: `0x${string}`;

  beforeAll(async () => {
    [databaseUrl, s3, evm] = await Promise.all([createPostgresDatabase(), startS3rver(), startAnvil()]);
    const gas = await evm.newBuyer(0n);
    buyer = await evm.newBuyer(1_000_000_000n); // 1,000 USDC
    seller = evmKey().address;
    // one block of settings for every process, as deploy/compose.yaml's x-labphi block
    const common: Record<string, string> = {
      NODE_ENV: "production",
      LOG_LEVEL: "info",
      DATABASE_URL: databaseUrl,
      ...s3.env,
      ACCESS_TOKEN_SECRET: randomBytes(32).toString("base64url"),
      IDENTITY_TOKEN_SECRET: randomBytes(32).toString("base64url"),
      DATASET_PRINT_SECRET: randomBytes(32).toString("base64url"),
      RECEIPT_SIGNING_KEY: randomBytes(32).toString("base64url"),
      ADMIN_TOKEN: randomBytes(24).toString("base64url"),
      CONTACT_EMAIL: "ops@deploy.test",
      PAY_TO_BASE: seller,
      BASE_RPC_URL: evm.rpcUrl,
      X402_EVM_FACILITATOR_KEY: gas.key,
      JOB_SEGMENT_BYTES: String(SEGMENT),
      SUITE_ANON_FREE_BYTES_PER_DAY: String(FREE_PER_IP),
    };
    // The services listen on ports of their own (PORT=0) and log them; the proxy, whose URL is their
    // BASE_URL, starts first and learns their ports from their logs. Ports picked here and passed in
    // could be taken by another test file's process first, which would then answer for a service.
    const ports = [0, 0];
    proxy = await startProxy(ports);
    // the services share DATA_DIR (the tus spool; a volume shared by the instances in compose)
    const shared = fs.mkdtempSync(path.join(tmp, "service-data-"));
    for (const i of ports.keys()) {
      procs.push(
        launch(`service-${i + 1}`, ["serve"], {
          ...common,
          HOST: "127.0.0.1",
          PORT: "0",
          BASE_URL: proxy.url,
          DATA_DIR: shared,
          TRUST_PROXY: PROXY_SOURCE,
          JOB_WORKER_IN_SERVICE: "false",
        }),
      );
    }
    for (const i of ports.keys()) {
      const p = procs[i] as Proc;
      const port = await waitForListening(p.child, p.output, 120_000, p.name);
      ports[i] = port;
      await until(
        async () => {
          if (p.child.exitCode !== null) throw new Error(`${p.name} exited: ${p.output()}`);
          return fetch(`http://127.0.0.1:${port}/healthz`).then(
            (r) => r.ok,
            () => false,
          );
        },
        120_000,
        () => `${p.name} on ${port}\n${p.output()}`,
      );
    }
    for (const i of [1, 2]) {
      procs.push(
        launch(`worker-${i}`, ["worker", "--threads", "1", "--concurrency", "1"], {
          ...common,
          DATA_DIR: fs.mkdtempSync(path.join(tmp, `worker-${i}-`)),
        }),
      );
    }
    for (const w of procs.slice(2)) {
      await until(
        () => {
          if (w.child.exitCode !== null) throw new Error(`${w.name} exited: ${w.output()}`);
          return /ready: queue bullmq on postgres/.test(w.output()) || undefined;
        },
        120_000,
        () => `${w.name}\n${w.output()}`,
      );
    }
  }, 300_000);

  afterAll(async () => {
    for (const p of procs) if (p.child.exitCode === null) p.child.kill("SIGTERM");
    await Promise.all(
      procs.map((p) =>
        p.child.exitCode === null
          ? Promise.race([new Promise((r) => p.child.once("exit", r)), sleep(20_000)])
          : undefined,
      ),
    );
    for (const p of procs) if (p.child.exitCode === null) p.child.kill("SIGKILL");
    await proxy?.close();
    await s3?.close();
    await evm?.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }, 60_000);

  it("both services migrated one empty database at the same moment: every migration applied once", async () => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ name: string }>("select name from kysely_migration order by name");
      expect(rows.map((r) => r.name)).toEqual(Object.keys(migrations).sort());
    } finally {
      await client.end();
    }
    // one instance applied them (under the migration lock); the other found nothing left to do
    const applied = procs.slice(0, 2).filter((p) => /migrations applied/.test(p.output()));
    expect(applied.map((p) => p.name)).toHaveLength(1);
  });

  /** Uploads `input` to a job, waits for it to be done, downloads and decodes its output. */
  async function runJob(job: { job_id: string; job_token: string }, input: Buffer, from: string) {
    const auth = { authorization: `Bearer ${job.job_token}` };
    const put = await requestFrom(from, `${proxy.url}/api/jobs/${job.job_id}/input`, {
      method: "PUT",
      headers: { ...auth, "content-type": "application/octet-stream", "content-length": String(input.length) },
      body: input,
    });
    expect(put.status, put.body.toString()).toBe(200);
    const done = await until(
      async () => {
        const r = await requestFrom(from, `${proxy.url}/api/jobs/${job.job_id}`, { method: "GET", headers: auth });
        const view = JSON.parse(r.body.toString()) as { state: string; output_sha256?: string | null };
        if (view.state === "failed" || view.state === "cancelled") throw new Error(r.body.toString());
        return view.state === "done" ? view : undefined;
      },
      120_000,
      () => `job ${job.job_id} to be done\n${procs.map((p) => `--- ${p.name}\n${p.output()}`).join("\n")}`,
    );
    const out = await requestFrom(from, `${proxy.url}/api/jobs/${job.job_id}/output`, { method: "GET", headers: auth });
    expect(out.status).toBe(200);
    expect(sha256(out.body)).toBe(done.output_sha256);
    // the segments' containers in order: the stream decoder gives back the input
    const restored: Buffer[] = [];
    for await (const c of Readable.from([out.body]).pipe(decompressStream())) restored.push(c as Buffer);
    expect(sha256(Buffer.concat(restored))).toBe(sha256(input));
  }

  const suiteBody = (bytes: number) => JSON.stringify({ product: "auto", dataClass: "text", op: "compress", bytes });

  it("a free job, a paid job (x402, stock client) and a purchase go through both services and both workers", async () => {
    const before = [...proxy.served];
    // client A (127.0.0.1): a free job within its address's free bytes of the day
    const free = await requestFrom("127.0.0.1", `${proxy.url}/api/x402-suite`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: suiteBody(JOB_BYTES),
    });
    expect(free.status, free.body.toString()).toBe(200);
    const freeJob = JSON.parse(free.body.toString());
    expect(freeJob.amount_units).toBe("0");
    await runJob(freeJob, textBytes(JOB_BYTES, 1), "127.0.0.1");

    // client A again, claiming to be someone else: the services trust X-Forwarded-For only from the
    // proxy, so this is still A's address, whose free bytes are spent: 402, not a free job
    const spoofed = await requestFrom("127.0.0.1", `${proxy.url}/api/x402-suite`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": "203.0.113.77" },
      body: suiteBody(JOB_BYTES),
    });
    expect(spoofed.status, spoofed.body.toString()).toBe(402);

    // a second machine (another address behind the proxy) has its own free bytes
    const other = await requestFrom("127.0.0.3", `${proxy.url}/api/x402-suite`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: suiteBody(JOB_BYTES),
    });
    expect(other.status, other.body.toString()).toBe(200);

    // client A pays for its job with the stock x402 client: challenge on one instance, paid on the other
    const client = new x402Client().register(
      "eip155:*",
      new ExactEvmScheme(toClientEvmSigner(privateKeyToAccount(buyer.key), evm.publicClient as never)),
    );
    client.setSpendControls({ maxAmountPerPayment: "$300" });
    const pay = wrapFetchWithPayment(fetch, client);
    const balance0 = await evm.balanceOf(buyer.address);
    const paid = await pay(`${proxy.url}/api/x402-suite`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: suiteBody(JOB_BYTES),
    });
    const paidJob = (await paid.json()) as { job_id: string; job_token: string; rail: string; amount_units: string };
    expect(paid.status, JSON.stringify(paidJob)).toBe(200);
    expect(paidJob.rail).toBe("x402_base_usdc");
    expect(BigInt(paidJob.amount_units)).toBeGreaterThan(0n);
    expect(balance0 - (await evm.balanceOf(buyer.address))).toBe(BigInt(paidJob.amount_units));
    await runJob(paidJob, textBytes(JOB_BYTES, 2), "127.0.0.1");

    // a product purchase, its access URL opened through the proxy (the next instance)
    const bought = await pay(`${proxy.url}/api/x402-products`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": randomUUID() },
      body: JSON.stringify({ sku: SANDBOX_SKU }),
    });
    const order = (await bought.json()) as { sku: string; access_url: string };
    expect(bought.status, JSON.stringify(order)).toBe(200);
    expect(order.sku).toBe(SANDBOX_SKU);
    expect(await evm.balanceOf(seller)).toBe(1_000_000_000n - (await evm.balanceOf(buyer.address)));
    const access = await fetch(order.access_url);
    expect(access.status).toBe(200);

    // 2 services and 2 workers stay well under PostgreSQL's default max_connections (100)
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    const conns = await admin
      .query<{ n: string }>("select count(*) as n from pg_stat_activity where datname = current_database()")
      .finally(() => admin.end());
    const connections = Number(conns.rows[0]?.n);
    console.info(`PostgreSQL connections of 2 services + 2 workers (and this check): ${connections}`);
    expect(connections).toBeLessThan(100);

    // every flow crossed both instances, and both workers coded segments
    const during = proxy.served.map((n, i) => n - (before[i] ?? 0));
    expect(Math.min(...during)).toBeGreaterThanOrEqual(5);
    for (const w of procs.slice(2)) expect(w.output()).toMatch(/segment \d+\/\d+ done/);
    const segments = procs.slice(2).map((w) => w.output().match(/segment \d+\/\d+ done/g)?.length ?? 0);
    expect(segments.reduce((a, b) => a + b, 0)).toBe(2 * Math.ceil(JOB_BYTES / SEGMENT));
  }, 300_000);
});
