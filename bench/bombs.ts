/**
 * bench:bombs — decompression bombs against a served instance (issue #9, item 8): N concurrent
 * tiny containers (default 30) that each expand to 20+ MiB, posted at once to the decompress
 * routes of `src/server.ts` running in its own process, while GET /healthz is polled every 50 ms.
 * Reports the service's peak RSS (VmHWM of its process, and the largest VmRSS sample), the longest
 * /healthz answer and the answers' status codes, for three configurations:
 *   defaults        — the settings as shipped (CODEC_MAX_RATIO 4096: these bombs are refused from
 *                     their header, 413 codec_ratio_exceeded)
 *   ratio cap off   — CODEC_MAX_RATIO=1e9, so every bomb reaches the decoders: admission control
 *                     (CODEC_DECODE_CONCURRENCY=2) and the decode pool are what bound memory and
 *                     keep the loop free
 *   wide open       — ratio cap off and CODEC_DECODE_CONCURRENCY=64: what admission control saves
 * Usage: npm run bench:bombs [-- --n 30 --mib 20 --root DIR]   (--root: another checkout to measure)
 * Writes bench/results/bombs.json and prints a Markdown table.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { type ChamberName, compress } from "../src/codec/index.js";

const here = path.resolve(import.meta.dirname, "..");
const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? (process.argv[i + 1] ?? dflt) : dflt;
};
const N = Number(arg("n", "30"));
const MIB = Number(arg("mib", "20"));
const root = path.resolve(arg("root", here));
const OUT = MIB * 1024 * 1024;

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const a = s.address() as net.AddressInfo;
      s.close(() => resolve(a.port));
    });
  });
}

/** the service in its own process (node --import tsx: one process, so its RSS is the service's) */
async function serve(env: Record<string, string>): Promise<{ child: ChildProcess; base: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, ["--import", "tsx", "src/server.ts"], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? "",
      DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), "labphi-bombs-")),
      LOG_LEVEL: "warn",
      ...env,
      PORT: String(port),
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const base = `http://127.0.0.1:${port}`;
  const until = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${base}/healthz`)).ok) return { child, base };
    } catch {
      // not listening yet
    }
    if (Date.now() > until) throw new Error("server did not start");
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** VmRSS and VmHWM (peak) of a process, MiB */
function memOf(pid: number): { rss: number; hwm: number } {
  const s = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, "m").exec(s)?.[1] ?? 0) / 1024;
  return { rss: kb("VmRSS"), hwm: kb("VmHWM") };
}

/** a framed zrw container by hand whose header claims `declared` bytes over a 2-byte payload */
function liar(declared: number): Uint8Array {
  const len: number[] = [];
  let v = declared;
  while (v >= 0x80) {
    len.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  len.push(v);
  return Uint8Array.from([0xcf, 0x86, 1, 0, 5, ...len, 0, 7, 7, 0, 0, 0, 0]);
}

interface Shot {
  name: string;
  url: string;
  init: RequestInit;
}

async function shots(): Promise<Shot[]> {
  const zeros = new Uint8Array(OUT);
  const ramp = new Int32Array(OUT / 4).map((_, i) => i);
  const ones = new Float64Array(OUT / 8).fill(1.5);
  const chambers: [string, Uint8Array, ChamberName][] = [
    ["zrw zeros", zeros, "zrw"],
    ["zrw ramp", new Uint8Array(ramp.buffer), "zrw"],
    ["delta ramp", new Uint8Array(ramp.buffer), "delta"],
    ["float", new Uint8Array(ones.buffer), "float"],
    ["general zeros", zeros, "general"],
    ["chunked zeros", zeros, "zrw-v5-chunked"],
    ["stride8 zeros", zeros, "zrw-v5-stride8"],
    ["attractor zeros", zeros, "zrw-v5-dark-attractor"],
    ["detractor zeros", zeros, "zrw-v5-dark-detractor"],
  ];
  const containers: [string, Uint8Array][] = [];
  for (const [name, raw, chamber] of chambers) containers.push([name, await compress(raw, { level: "fast", chamber })]);
  containers.push([`liar (claims ${MIB} MiB)`, liar(OUT)]);
  const gzip = zlib.gzipSync(zeros, { level: 9 });
  const brotli = zlib.brotliCompressSync(zeros);
  const json = (url: string, body: object) => ({
    url,
    init: { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) },
  });
  const out: Shot[] = [];
  for (let i = 0; i < N; i++) {
    const [name, c] = containers[i % containers.length]!;
    const data = Buffer.from(c).toString("base64");
    const route = Math.floor(i / containers.length) % 3;
    if (i % 10 === 9) {
      // every tenth: a classic stream (gzip or brotli of the zeros) through the web codec
      const s = i % 20 === 9 ? gzip : brotli;
      out.push({
        name: s === gzip ? "classic gzip" : "classic brotli",
        ...json("/api/web-codec", { op: "decompress", engine: "classic", data: s.toString("base64") }),
      });
    } else if (route === 0) {
      out.push({
        name,
        url: "/api/decompress",
        init: { method: "POST", headers: { "content-type": "application/octet-stream" }, body: c },
      });
    } else if (route === 1) out.push({ name, ...json("/api/omni", { op: "decompress", data, encoding: "base64" }) });
    else out.push({ name, ...json("/api/web-codec", { op: "decompress", data, encoding: "base64" }) });
  }
  return out;
}

async function run(label: string, env: Record<string, string>, list: Shot[]) {
  const { child, base } = await serve(env);
  const pid = child.pid!;
  const before = memOf(pid);
  let peakRss = before.rss;
  const sampler = setInterval(() => {
    try {
      peakRss = Math.max(peakRss, memOf(pid).rss);
    } catch {
      // exited
    }
  }, 20);
  let polling = true;
  let longest = 0;
  let polls = 0;
  const poller = (async () => {
    while (polling) {
      const t0 = performance.now();
      const r = await fetch(`${base}/healthz`);
      await r.arrayBuffer();
      if (!r.ok) throw new Error(`/healthz answered ${r.status}`);
      longest = Math.max(longest, performance.now() - t0);
      polls++;
      await new Promise((res) => setTimeout(res, 50));
    }
  })();
  const t0 = performance.now();
  const answers = await Promise.all(
    list.map(async (s) => {
      const r = await fetch(`${base}${s.url}`, s.init);
      const body = Buffer.from(await r.arrayBuffer());
      const code = r.headers.get("content-type")?.includes("problem") ? JSON.parse(body.toString()).code : null;
      return { name: s.name, status: r.status, code, bytes: body.length };
    }),
  );
  const wall = performance.now() - t0;
  // keep polling a little: the loop must also be free right after the burst
  await new Promise((res) => setTimeout(res, 300));
  polling = false;
  await poller;
  clearInterval(sampler);
  const after = memOf(pid);
  child.kill("SIGTERM");
  await new Promise((res) => child.once("exit", res));
  const statuses: Record<string, number> = {};
  for (const a of answers) {
    const k = a.code ? `${a.status} ${a.code}` : String(a.status);
    statuses[k] = (statuses[k] ?? 0) + 1;
  }
  return {
    label,
    env,
    requests: list.length,
    statuses,
    wall_ms: Math.round(wall),
    rss_before_mib: Math.round(before.rss),
    peak_rss_mib: Math.round(Math.max(peakRss, after.hwm)),
    longest_healthz_ms: Math.round(longest),
    healthz_polls: polls,
  };
}

const list = await shots();
console.error(`${list.length} requests, each container restoring ${MIB} MiB; service in ${root}`);
const results = [];
for (const [label, env] of [
  ["defaults", {}],
  ["ratio cap off", { CODEC_MAX_RATIO: "1000000000" }],
  ["wide open", { CODEC_MAX_RATIO: "1000000000", CODEC_DECODE_CONCURRENCY: "64" }],
] as const) {
  const r = await run(label, env, list);
  console.error(JSON.stringify(r));
  results.push(r);
}
const out = path.join(here, "bench", "results", "bombs.json");
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(
  out,
  `${JSON.stringify({ at: new Date().toISOString(), n: N, mib: MIB, cpus: os.availableParallelism(), root, results }, null, 2)}\n`,
);
console.log("| configuration | answers | peak RSS | longest /healthz | wall |");
console.log("|---|---|---|---|---|");
for (const r of results)
  console.log(
    `| ${r.label} | ${Object.entries(r.statuses)
      .map(([k, v]) => `${v}× ${k}`)
      .join(", ")} | ${r.peak_rss_mib} MiB | ${r.longest_healthz_ms} ms | ${r.wall_ms} ms |`,
  );
