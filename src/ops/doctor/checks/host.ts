import fs from "node:fs";
import path from "node:path";
import { type Check, type DoctorContext, displayUrl, errorLine, fail, grouped, ok, skipped } from "../check.js";

/**
 * This machine: free disk above the job floor (JOB_MIN_FREE_DISK_BYTES, src/jobs/disk-floor.ts),
 * the clock against other servers, and BASE_URL answering /healthz from here.
 */

/** The folder itself, or its nearest existing parent (DATA_DIR may not exist before the first start). */
function existing(dir: string): string {
  let d = path.resolve(dir);
  while (!fs.existsSync(d) && path.dirname(d) !== d) d = path.dirname(d);
  return d;
}

const gib = (n: bigint) => `${(Number(n / 1_048_576n) / 1024).toFixed(1)} GiB`;

export const diskFloor: Check = {
  id: "disk.free",
  part: "disk",
  check: "free above job floor",
  applies: () => true,
  notConfigured: "",
  async run(ctx) {
    const floor = BigInt(ctx.config.jobData.minFreeDiskBytes);
    const dir = existing(ctx.config.dataDir);
    let free: bigint;
    try {
      free = await ctx.freeDiskBytes(dir);
    } catch (err) {
      return fail(`statfs ${dir}: ${errorLine(err)}`, "check that DATA_DIR is on a mounted, readable file system");
    }
    if (floor === 0n) return skipped(`no floor (JOB_MIN_FREE_DISK_BYTES=0); ${gib(free)} free under ${dir}`);
    const line = `${grouped(free)} bytes (${gib(free)}) free under ${dir}, floor ${grouped(floor)} (${gib(floor)})`;
    if (free < floor) {
      return fail(
        `${line}: new uploads are refused (507)`,
        `free at least ${grouped(floor - free)} bytes on that file system (older job data goes after JOB_RETENTION_HOURS), or lower JOB_MIN_FREE_DISK_BYTES`,
      );
    }
    return ok(line);
  },
};

interface Reading {
  source: string;
  /** local − remote, milliseconds (the remote's Date header has whole seconds: +500 ms centred) */
  skewMs: number;
  /** half the round trip plus the header's rounding */
  errorMs: number;
  /** an EVM block timestamp later than our clock by this much, ms (0: not ahead) */
  blockAheadMs?: number;
}

async function read(ctx: DoctorContext, source: string, url: string, init: RequestInit): Promise<Reading | undefined> {
  const t0 = ctx.now();
  let res: Response;
  try {
    res = await fetch(url, { ...init, signal: AbortSignal.timeout(ctx.timeoutMs) });
  } catch {
    return undefined;
  }
  const t1 = ctx.now();
  const date = Date.parse(res.headers.get("date") ?? "");
  let blockAheadMs: number | undefined;
  if (init.method === "POST") {
    const body = (await res.json().catch(() => ({}))) as { result?: { timestamp?: string } };
    const ts = body.result?.timestamp ? Number(BigInt(body.result.timestamp)) * 1000 : undefined;
    if (ts !== undefined) blockAheadMs = Math.max(0, ts - t1);
  } else {
    await res.body?.cancel().catch(() => {});
  }
  if (Number.isNaN(date)) return undefined;
  return { source, skewMs: (t0 + t1) / 2 - (date + 500), errorMs: (t1 - t0) / 2 + 500, blockAheadMs };
}

export const clockSkew: Check = {
  id: "clock.skew",
  part: "clock",
  check: "clock skew",
  applies: () => true,
  notConfigured: "",
  async run(ctx) {
    const c = ctx.config;
    const readings: Reading[] = [];
    if (c.x402.baseRpcUrl) {
      const r = await read(ctx, `${displayUrl(c.x402.baseRpcUrl)} (Base RPC)`, c.x402.baseRpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getBlockByNumber", params: ["latest", false] }),
      });
      if (r) readings.push(r);
    }
    if (c.x402.solanaRpcUrl) {
      const r = await read(ctx, `${displayUrl(c.x402.solanaRpcUrl)} (Solana RPC)`, c.x402.solanaRpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "getSlot", params: [] }),
      });
      if (r) readings.push(r);
    }
    const r = await read(ctx, `${displayUrl(c.baseUrl)} (BASE_URL)`, `${c.baseUrl}/healthz`, { method: "GET" });
    if (r) readings.push(r);
    if (readings.length === 0) return skipped("no server answered with a Date header to compare with");
    const max = ctx.maxSkewSeconds * 1000;
    const fix =
      "synchronise this machine's clock (systemd-timesyncd, chrony or ntpd: `timedatectl set-ntp true`); signed payments, webhooks and receipts carry times";
    for (const x of readings) {
      if ((x.blockAheadMs ?? 0) > max) {
        return fail(
          `the latest block of ${x.source} is ${((x.blockAheadMs ?? 0) / 1000).toFixed(0)} s ahead of this clock (limit ${ctx.maxSkewSeconds} s)`,
          fix,
        );
      }
    }
    const worst = readings.reduce((a, b) => (Math.abs(b.skewMs) > Math.abs(a.skewMs) ? b : a));
    const secs = (worst.skewMs / 1000).toFixed(1);
    const where = `this clock is ${worst.skewMs >= 0 ? "ahead of" : "behind"} ${worst.source} by ${secs.replace("-", "")} s (±${(worst.errorMs / 1000).toFixed(1)})`;
    if (Math.abs(worst.skewMs) - worst.errorMs > max) {
      return fail(`${where}, limit ${ctx.maxSkewSeconds} s`, fix);
    }
    return ok(
      `${where}; ${readings.length} server${readings.length === 1 ? "" : "s"} compared, limit ${ctx.maxSkewSeconds} s`,
    );
  },
};

export const serverHealth: Check = {
  id: "server.healthz",
  part: "server",
  check: "BASE_URL reachable",
  applies: () => true,
  notConfigured: "",
  async run(ctx) {
    const c = ctx.config;
    const url = `${c.baseUrl}/healthz`;
    const unset = (ctx.env.BASE_URL ?? "").trim() === "";
    if (unset && c.env === "production") {
      return fail(
        `BASE_URL is not set: pages, links and payment requirements name ${c.baseUrl}`,
        "set BASE_URL to the public https address of the service, e.g. https://lab.example.com",
      );
    }
    let res: Response;
    try {
      res = await fetch(url, { signal: AbortSignal.timeout(ctx.timeoutMs), redirect: "manual" });
    } catch (err) {
      return fail(
        `GET ${url}: ${errorLine(err)}`,
        "start the service (labphi serve), and check that BASE_URL resolves to it from this machine (DNS, proxy, TLS certificate, firewall)",
      );
    }
    const body = (await res.json().catch(() => undefined)) as { status?: string; uptime_seconds?: number } | undefined;
    if (res.status !== 200 || body?.status !== "ok") {
      return fail(
        `GET ${url} answered ${res.status}${body?.status ? ` (${body.status})` : ", not Lab Phi's health document"}`,
        'check that BASE_URL and the reverse proxy lead to this service (GET /healthz answers 200 {"status":"ok"})',
      );
    }
    return ok(`GET ${url}: 200, up ${body.uptime_seconds ?? "?"} s${unset ? " (BASE_URL unset: the default)" : ""}`);
  },
};

export const HOST_CHECKS: Check[] = [diskFloor, clockSkew, serverHealth];
