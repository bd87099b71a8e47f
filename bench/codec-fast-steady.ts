/**
 * Steady-state CPU of one omni level per file, as a long-lived process (server, suite worker)
 * sees it: every file is compressed and decompressed `reps` times per round, and the lowest
 * per-call mean over `rounds` rounds is kept (the least disturbed by other work on a shared
 * machine). The files are those of a frontier run's JSON (bench/codec.ts), heads cut as there.
 *
 *   npx tsx bench/codec-fast-steady.ts [RESULTS_JSON] [--level fast] [--reps 5] [--rounds 3]
 *
 * CPU seconds are process.cpuUsage() deltas (every thread of this process), as in codec-omni.ts.
 * Not a replacement for bench/codec.ts: it runs no peer and times files of 1 MiB more than once.
 */
import { readFileSync } from "node:fs";
import { compressWithReport, decompress, type Level } from "../src/codec/index.js";

const args = process.argv.slice(2);
const opt = (name: string, dflt: string): string => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] ? args[i + 1]! : dflt;
};
const json = args.find((a) => a.endsWith(".json")) ?? "bench/results/codec-frontier-quick.json";
const level = opt("--level", "fast") as Level;
const reps = Number(opt("--reps", "5"));
const rounds = Number(opt("--rounds", "3"));

interface FileRow {
  path: string;
  source: string;
  bytes: number;
}
const rows = (JSON.parse(readFileSync(json, "utf8")) as { files: FileRow[] }).files;
const cpu = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

let inBytes = 0;
let outBytes = 0;
let cTotal = 0;
let dTotal = 0;
for (const f of rows) {
  const data = new Uint8Array(readFileSync(f.source).subarray(0, f.bytes));
  let rep = await compressWithReport(data, { level });
  let c = Number.POSITIVE_INFINITY;
  let d = Number.POSITIVE_INFINITY;
  let back: Uint8Array = new Uint8Array(0);
  for (let r = 0; r < rounds; r++) {
    let t0 = cpu();
    for (let i = 0; i < reps; i++) rep = await compressWithReport(data, { level });
    c = Math.min(c, (cpu() - t0) / reps);
    t0 = cpu();
    for (let i = 0; i < reps; i++) back = await decompress(rep.container, { maxOutputBytes: 1 << 30 });
    d = Math.min(d, (cpu() - t0) / reps);
  }
  if (Buffer.compare(Buffer.from(back), Buffer.from(data)) !== 0) throw new Error(`round trip failed: ${f.path}`);
  inBytes += data.length;
  outBytes += rep.container.length;
  cTotal += c;
  dTotal += d;
  console.log(
    `${f.path.padEnd(58)} ${String(data.length).padStart(9)} → ${String(rep.container.length).padStart(9)}  ${rep.chamber.padEnd(12)} c ${(c * 1e3).toFixed(2)} ms  d ${(d * 1e3).toFixed(2)} ms`,
  );
}
const mb = inBytes / 1e6;
console.log(
  `total ${inBytes} → ${outBytes} B at ${level}: compress ${cTotal.toFixed(4)} CPU-s (${(mb / cTotal).toFixed(1)} MB/s per core), decompress ${dTotal.toFixed(4)} CPU-s (${(mb / dTotal).toFixed(1)} MB/s per core)`,
);
process.exit(0);
