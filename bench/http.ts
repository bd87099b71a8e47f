/**
 * bench:http — throughput of GET /api/x402-products on the real service against a bare
 * Fastify route serving the same bytes, measured in the same run with autocannon.
 * Usage: npm run bench:http [-- --duration 10 --connections 50]
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import autocannon from "autocannon";

const root = path.resolve(import.meta.dirname, "..");
const tsx = path.join(root, "node_modules", "tsx", "dist", "cli.mjs");
const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const duration = arg("duration", 10);
const connections = arg("connections", 50);
const rounds = arg("rounds", 3);

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const a = s.address() as net.AddressInfo;
      s.close(() => resolve(a.port));
    });
  });
}

async function startServer(script: string, env: Record<string, string>, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [tsx, script], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", ...env, PORT: String(port) },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const until = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${script} exited with ${child.exitCode}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/x402-products`);
      if (res.ok) return child;
    } catch {
      // not listening yet
    }
    if (Date.now() > until) throw new Error(`${script} did not start`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function measure(url: string) {
  const result = await autocannon({ url, connections, duration, pipelining: 1 });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { rps: result.requests.average, p99: result.latency.p99, bytes: result.throughput.average };
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-bench-"));
// Production takes its service keys from the environment only (docs/operations.md).
const keys = Object.fromEntries(
  // 32 random bytes in base64url: also an Ed25519 seed, the form RECEIPT_SIGNING_KEY takes
  ["ACCESS_TOKEN_SECRET", "IDENTITY_TOKEN_SECRET", "DATASET_PRINT_SECRET", "RECEIPT_SIGNING_KEY"].map((k) => [
    k,
    randomBytes(32).toString("base64url"),
  ]),
);
const labPort = await freePort();
const quietPort = await freePort();
const barePort = await freePort();
const bareLogPort = await freePort();
// Lab Phi as deployed by default (one JSON log line per request at info, written to /dev/null),
// and the same service with request logging off (LOG_LEVEL=warn), against a bare Fastify route.
const lab = await startServer(
  "src/server.ts",
  { DATA_DIR: dataDir, LOG_LEVEL: "info", NODE_ENV: "production", ...keys },
  labPort,
);
const quiet = await startServer(
  "src/server.ts",
  { DATA_DIR: path.join(dataDir, "quiet"), LOG_LEVEL: "warn", NODE_ENV: "production", ...keys },
  quietPort,
);
const body = await (await fetch(`http://127.0.0.1:${labPort}/api/x402-products`)).text();
const bodyFile = path.join(dataDir, "body.json");
fs.writeFileSync(bodyFile, body);
const bare = await startServer("bench/bare-server.ts", { BODY_FILE: bodyFile }, barePort);
const bareLog = await startServer("bench/bare-server.ts", { BODY_FILE: bodyFile, LOG_REQUESTS: "1" }, bareLogPort);

const servers = [
  ["lab (defaults, request log on)", labPort],
  ["lab (LOG_LEVEL=warn)", quietPort],
  ["bare Fastify, same bytes", barePort],
  ["bare Fastify + same request log", bareLogPort],
] as const;

try {
  console.log(
    `bench:http — GET /api/x402-products, ${body.length} bytes, ${connections} connections, ${duration}s × ${rounds} rounds each, servers interleaved`,
  );
  for (const [, port] of servers) await measure(`http://127.0.0.1:${port}/api/x402-products`); // warm-up
  const best = new Map<string, { rps: number; p99: number }>();
  for (let r = 0; r < rounds; r++) {
    for (const [name, port] of servers) {
      const m = await measure(`http://127.0.0.1:${port}/api/x402-products`);
      console.log(`  round ${r + 1} ${name.padEnd(32)} ${m.rps.toFixed(0).padStart(7)} req/s  p99 ${m.p99} ms`);
      const prev = best.get(name);
      if (!prev || m.rps > prev.rps) best.set(name, { rps: m.rps, p99: m.p99 });
    }
  }
  const bareBest = best.get(servers[2][0]) ?? { rps: 1, p99: 0 };
  console.log("");
  console.log("| server | req/s (best round) | p99 latency | ratio to bare |");
  console.log("|---|---:|---:|---:|");
  const results: Record<string, { rps: number; p99: number; ratio: number }> = {};
  for (const [name] of servers) {
    const b = best.get(name) ?? { rps: 0, p99: 0 };
    const ratio = b.rps / bareBest.rps;
    results[name] = { ...b, ratio };
    console.log(`| ${name} | ${b.rps.toFixed(0)} | ${b.p99} ms | ${ratio.toFixed(3)} |`);
  }
  const verdict = (r: number) => `${r.toFixed(3)} (target ≥ 0.8: ${r >= 0.8 ? "met" : "NOT met"})`;
  const rps = (i: number) => results[servers[i]?.[0] ?? ""]?.rps ?? 0;
  console.log(`\nlab with request logs off vs bare Fastify:            ${verdict(rps(1) / rps(2))}`);
  console.log(`lab defaults vs bare Fastify with the same request log: ${verdict(rps(0) / rps(3))}`);
  console.log(`lab defaults vs bare Fastify without any log:           ${verdict(rps(0) / rps(2))}`);
  fs.mkdirSync(path.join(root, "bench", "results"), { recursive: true });
  fs.writeFileSync(
    path.join(root, "bench", "results", "http.json"),
    `${JSON.stringify({ at: new Date().toISOString(), node: process.version, connections, duration, rounds, bytes: body.length, results }, null, 2)}\n`,
  );
} finally {
  lab.kill("SIGTERM");
  quiet.kill("SIGTERM");
  bare.kill("SIGTERM");
  bareLog.kill("SIGTERM");
}
