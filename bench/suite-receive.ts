/**
 * The service's receive path alone (issue #23 item 6, third pass): a bare HTTP server in this
 * process hands each PUT body, through a PassThrough as the input route does, to the local
 * store's `put` (growing, as a job's input coded while it arrives); the client is another process
 * writing 1 MiB at a time. Prints, per put, the CPU seconds of this whole process and of its main
 * thread (the thread one upload stream is bound by), and the store's SHA-256 (checked).
 *
 *   npx tsx bench/suite-receive.ts [--size 256MB] [--runs 4] [--no-growing]
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { LocalObjectStore } from "../src/jobs/storage/local.js";

const argv = process.argv.slice(2);
const opt = (name: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
const SIZE = Math.round(Number((opt("size") ?? "256MB").replace(/MB$/i, "")) * 1e6);
const RUNS = Number(opt("runs") ?? 4);
const GROWING = !argv.includes("--no-growing");

/** the client: 1 MiB pieces of a fixed pseudo-random MiB, `size` bytes in all */
const CLIENT = `
const http = require("node:http");
const [port, size] = process.argv.slice(1).map(Number);
const chunk = Buffer.alloc(1 << 20);
for (let i = 0; i < chunk.length; i++) chunk[i] = (i * 2654435761) >>> 24;
const req = http.request({ port, method: "PUT", path: "/", headers: { "content-length": size } }, (res) => {
  let s = ""; res.on("data", (d) => (s += d)); res.on("end", () => process.stdout.write(s));
});
let n = 0;
const pump = () => {
  while (n < size) {
    const c = chunk.subarray(0, Math.min(chunk.length, size - n));
    n += c.length;
    if (!req.write(c)) return void req.once("drain", pump);
  }
  req.end();
};
pump();
`;

function expectedSha(size: number): string {
  const chunk = Buffer.alloc(1 << 20);
  for (let i = 0; i < chunk.length; i++) chunk[i] = (i * 2654435761) >>> 24;
  const h = createHash("sha256");
  for (let n = 0; n < size; n += chunk.length) h.update(chunk.subarray(0, Math.min(chunk.length, size - n)));
  return h.digest("hex");
}

/** CPU seconds of this process's main thread (/proc/self/task/<pid>/stat, utime + stime) */
function mainThreadSeconds(): number {
  const s = fs.readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
  const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) / 100;
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-receive-"));
const store = new LocalObjectStore(dir);
const want = expectedSha(SIZE);
try {
  for (let i = 0; i < RUNS; i++) {
    const line = await new Promise<string>((resolve, reject) => {
      const server = http.createServer((req, res) => {
        const c0 = process.cpuUsage();
        const m0 = mainThreadSeconds();
        const proxy = new PassThrough();
        req.pipe(proxy);
        store
          .put(`jobs/job_recv${i}/input`, proxy, {
            maxBytes: SIZE,
            ...(GROWING ? { growing: { tag: `g${i}`, written: () => {} } } : {}),
          })
          .then((r) => {
            const c = process.cpuUsage(c0);
            const main = mainThreadSeconds() - m0;
            if (r.sha256 !== want || r.bytes !== SIZE) throw new Error(`stored ${r.bytes} B, sha ${r.sha256}`);
            res.end(
              `put ${i + 1}: ${(SIZE / 1e6).toFixed(0)} MB, process ${((c.user + c.system) / 1e6).toFixed(3)} CPU-s, main thread ${main.toFixed(2)} CPU-s (${(SIZE / 1e6 / Math.max(main, 0.01)).toFixed(0)} MB per main-thread CPU-s), SHA-256 ok`,
            );
          }, reject);
      });
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as { port: number }).port;
        const client = spawn(process.execPath, ["-e", CLIENT, String(port), String(SIZE)], {
          stdio: ["ignore", "pipe", "inherit"],
        });
        let out = "";
        client.stdout.on("data", (d) => {
          out += d;
        });
        client.on("exit", () => {
          server.close();
          resolve(out);
        });
      });
    });
    console.log(line);
    await store.deletePrefix(`jobs/job_recv${i}/`);
  }
} finally {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
