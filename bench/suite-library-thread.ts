/**
 * bench:suite helper: one thread of the parallel library pass (bench/suite.ts). Codes its share of
 * the shared input pool in 4 MiB chunks with `compress(chunk, { level: "fast" })`, brotli in this
 * thread, one chunk at a time, and reports its bytes and milliseconds (wall, and on a CPU).
 */
import { parentPort, workerData } from "node:worker_threads";
import { compress, compressInCallingThread } from "../src/codec/index.js";
import { threadCpuMs } from "../src/jobs/thread-cpu.js";

const { pool, bytes, unit } = workerData as { pool: SharedArrayBuffer; bytes: number; unit: number };
compressInCallingThread();
const data = new Uint8Array(pool, 0, bytes);
await compress(data.subarray(0, Math.min(bytes, 1 << 20)), { level: "fast" }); // warm-up
const t = performance.now();
const c = threadCpuMs();
for (let at = 0; at < bytes; at += unit)
  await compress(data.subarray(at, Math.min(bytes, at + unit)), { level: "fast" });
const cpu = c === undefined ? undefined : (threadCpuMs() ?? 0) - c;
parentPort?.postMessage({ bytes, ms: performance.now() - t, cpu });
