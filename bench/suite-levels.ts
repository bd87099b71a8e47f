/**
 * Throughput per codec level for suite-job time estimates (src/jobs/throughput.ts).
 *
 *   npx tsx bench/suite-levels.ts [--mb 1]
 *
 * Generates the same deterministic samples every run (--mb MB of each: int32 random walk, int32
 * sine, float64 random walk, English-like text, CSV rows, incompressible noise), compresses each at
 * every level with the codec library in this process, decompresses the result, checks the round
 * trip, and prints per level: input MB (10^6 B) per second of wall time for compress and for
 * decompress, over all samples together (total bytes / total seconds). The last lines are the
 * `LEVEL_THROUGHPUT` table to paste into src/jobs/throughput.ts. One process, one job at a time:
 * the figures describe one worker on this machine (shared with other work: indicative).
 */
import os from "node:os";
import { compress, decompress, LEVELS, type Level } from "../src/codec/index.js";
import { generate, prng } from "../src/engine/generators.js";

const mbArg = process.argv.indexOf("--mb");
const MB = mbArg > 0 ? Number(process.argv[mbArg + 1]) : 1;
const N = Math.round(MB * 1_000_000);

function float64Walk(bytes: number, seed: number): Uint8Array {
  const next = prng(seed);
  const out = new Uint8Array(Math.floor(bytes / 8) * 8);
  const dv = new DataView(out.buffer);
  let v = 20;
  for (let i = 0; i < out.length / 8; i++) {
    v += ((next() % 2001) - 1000) / 100_000;
    dv.setFloat64(i * 8, Math.round(v * 1e4) / 1e4, true);
  }
  return out;
}

function csvRows(bytes: number, seed: number): Uint8Array {
  const next = prng(seed);
  const lines: string[] = ["ts,sensor,value,status"];
  let size = lines[0]!.length + 1;
  let ts = 1_700_000_000;
  let v = 500;
  while (size < bytes) {
    ts += 1 + (next() % 3);
    v += (next() % 21) - 10;
    const line = `${ts},s${next() % 16},${(v / 10).toFixed(1)},${next() % 50 === 0 ? "warn" : "ok"}`;
    lines.push(line);
    size += line.length + 1;
  }
  return new TextEncoder().encode(lines.join("\n")).subarray(0, bytes);
}

const SAMPLES: Record<string, Uint8Array> = {
  int32_walk: generate("walk", N / 4, 7),
  int32_sine: generate("sine", N / 4, 7),
  float64_walk: float64Walk(N, 7),
  text: generate("text", N, 7),
  csv: csvRows(N, 7),
  noise: generate("noise", N / 4, 7),
};

const rows: { level: Level; compress: number; decompress: number; ratio: number }[] = [];
for (const level of LEVELS) {
  let inBytes = 0;
  let outBytes = 0;
  let cTime = 0;
  let dTime = 0;
  for (const [name, sample] of Object.entries(SAMPLES)) {
    const t0 = process.hrtime.bigint();
    const c = await compress(sample, { level });
    const t1 = process.hrtime.bigint();
    const d = await decompress(c);
    const t2 = process.hrtime.bigint();
    if (Buffer.compare(Buffer.from(d), Buffer.from(sample)) !== 0)
      throw new Error(`round trip failed: ${name} ${level}`);
    const cs = Number(t1 - t0) / 1e9;
    const ds = Number(t2 - t1) / 1e9;
    console.log(
      `${level.padEnd(8)} ${name.padEnd(13)} ${sample.length} B → ${c.length} B  compress ${(sample.length / 1e6 / cs).toFixed(2)} MB/s  decompress ${(sample.length / 1e6 / ds).toFixed(2)} MB/s`,
    );
    inBytes += sample.length;
    outBytes += c.length;
    cTime += cs;
    dTime += ds;
  }
  rows.push({
    level,
    compress: inBytes / 1e6 / cTime,
    decompress: inBytes / 1e6 / dTime,
    ratio: outBytes / inBytes,
  });
}

const cpu = os.cpus()[0]?.model ?? "unknown CPU";
console.log(
  `\n// measured ${new Date().toISOString().slice(0, 10)}: Node ${process.version}, ${cpu} (${os.cpus().length} cores), ${Object.keys(SAMPLES).length} samples × ${MB} MB`,
);
console.log("export const LEVEL_THROUGHPUT: Record<Level, LevelThroughput> = {");
for (const r of rows) {
  console.log(
    `  ${r.level}: { compress_mb_s: ${r.compress.toFixed(2)}, decompress_mb_s: ${r.decompress.toFixed(2)}, ratio: ${r.ratio.toFixed(3)} },`,
  );
}
console.log("};");
process.exit(0);
