/**
 * bench:http — throughput of GET /api/x402-products on the real service against a bare
 * Fastify route serving the same bytes, measured in the same run with autocannon.
 * Usage: npm run bench:http [-- --duration 10 --connections 50]
 */
import { type ChildProcess, spawn } from "node:child_process";
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
const rounds = arg("rounds", 2);

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
const labPort = await freePort();
const barePort = await freePort();
// The service runs with its defaults (JSON request logs at info, to a pipe the bench drains).
const lab = await startServer(
  "src/server.ts",
  { DATA_DIR: dataDir, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "info", NODE_ENV: "production" },
  labPort,
);
const body = await (await fetch(`http://127.0.0.1:${labPort}/api/x402-products`)).text();
const bodyFile = path.join(dataDir, "body.json");
fs.writeFileSync(bodyFile, body);
const bare = await startServer("bench/bare-server.ts", { BODY_FILE: bodyFile }, barePort);

try {
  console.log(
    `bench:http — GET /api/x402-products, ${body.length} bytes, ${connections} connections, ${duration}s × ${rounds} rounds each`,
  );
  await measure(`http://127.0.0.1:${labPort}/api/x402-products`); // warm-up
  await measure(`http://127.0.0.1:${barePort}/api/x402-products`);
  const best = { lab: { rps: 0, p99: Infinity }, bare: { rps: 0, p99: Infinity } };
  for (let r = 0; r < rounds; r++) {
    for (const [name, port] of [
      ["lab", labPort],
      ["bare", barePort],
    ] as const) {
      const m = await measure(`http://127.0.0.1:${port}/api/x402-products`);
      console.log(`  round ${r + 1} ${name.padEnd(4)} ${m.rps.toFixed(0).padStart(7)} req/s  p99 ${m.p99} ms`);
      if (m.rps > best[name].rps) best[name] = { rps: m.rps, p99: m.p99 };
    }
  }
  const ratio = best.lab.rps / best.bare.rps;
  console.log("");
  console.log("| server | req/s (best round) | p99 latency |");
  console.log("|---|---:|---:|");
  console.log(`| Lab Phi GET /api/x402-products | ${best.lab.rps.toFixed(0)} | ${best.lab.p99} ms |`);
  console.log(`| bare Fastify, same bytes | ${best.bare.rps.toFixed(0)} | ${best.bare.p99} ms |`);
  console.log(`\nthroughput ratio lab/bare = ${ratio.toFixed(3)} (target ≥ 0.8: ${ratio >= 0.8 ? "met" : "NOT met"})`);
  fs.mkdirSync(path.join(root, "bench", "results"), { recursive: true });
  fs.writeFileSync(
    path.join(root, "bench", "results", "http.json"),
    `${JSON.stringify({ at: new Date().toISOString(), node: process.version, connections, duration, rounds, bytes: body.length, lab: best.lab, bare: best.bare, ratio }, null, 2)}\n`,
  );
} finally {
  lab.kill("SIGTERM");
  bare.kill("SIGTERM");
}
