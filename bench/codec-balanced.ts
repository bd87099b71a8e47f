/**
 * Balanced level against its per-file bound on a whole corpus (issue #24 item 2: no file larger than
 * min(brotli -q 11, xz -9e) + 16 B), and the trial figures behind general/index.ts's TRIAL_BIAS.
 * Per file: balanced's container (one compressWithReport + one decompress, process.cpuUsage() around
 * each), brotli-11 through node:zlib (the bench's brotli -q 11 peer gives the same bytes) and xz with
 * xz -9e's settings (`xzTuned`; `xz -9e` writes 4 B more for its CRC-64), and r = brotli-11 / xz on
 * the whole file and on the trial's 96 KiB sample (three 32 KiB slices at 1/8, 1/2, 7/8).
 *
 *   npx tsx bench/codec-balanced.ts [DIR] [--only SUBSTRING] [--json OUT.json]
 *
 * DIR defaults to ../shared/corpus (its files and those of its sub-folders, sorted). Exits 1 when a
 * file is over the bound. The full corpus takes about 4 CPU minutes (brotli-11 twice per file).
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { brotliWindow, xzTuned } from "../src/codec/backends.js";
import { threeSlices } from "../src/codec/chambers/util.js";
import { compressWithReport, decompress } from "../src/codec/index.js";

const args = process.argv.slice(2);
const opt = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const root = args.find((a, i) => !a.startsWith("--") && !args[i - 1]?.startsWith("--")) ?? "../shared/corpus";
const only = opt("--only");
const out = opt("--json");

function listFiles(dir: string): string[] {
  const all: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) for (const f of readdirSync(p).sort()) all.push(path.join(p, f));
    else all.push(p);
  }
  return all.filter((p) => statSync(p).isFile() && (!only || p.includes(only)));
}

const cpu = (a: NodeJS.CpuUsage): number => {
  const d = process.cpuUsage(a);
  return (d.user + d.system) / 1e6;
};
/** brotli-11 with the `brotli` tool's window for the input's size (lgwin 22, up to 24 above 4 MiB) */
const brotli11 = (b: Uint8Array): number =>
  zlib.brotliCompressSync(b, {
    params: {
      [zlib.constants.BROTLI_PARAM_QUALITY]: 11,
      [zlib.constants.BROTLI_PARAM_SIZE_HINT]: b.length,
      [zlib.constants.BROTLI_PARAM_LGWIN]: brotliWindow(b.length, 11) ?? 22,
    },
  }).length;
/** the general chamber's trial sample (three 32 KiB slices) */
const sample = (b: Uint8Array): Uint8Array => threeSlices(b, 32 * 1024);

const rows: Record<string, unknown>[] = [];
let totalIn = 0;
let totalOut = 0;
let cSum = 0;
let dSum = 0;
let over = 0;
for (const file of listFiles(root)) {
  const data = new Uint8Array(readFileSync(file));
  let t = process.cpuUsage();
  const rep = await compressWithReport(data, { level: "balanced" });
  const c = cpu(t);
  t = process.cpuUsage();
  const back = await decompress(rep.container);
  const d = cpu(t);
  if (Buffer.compare(Buffer.from(back), Buffer.from(data)) !== 0) throw new Error(`round trip failed: ${file}`);
  // the references run after the measured calls (their CPU is not balanced's)
  const b = brotli11(data);
  const x = (await xzTuned(data))?.length ?? Number.POSITIVE_INFINITY;
  const s = sample(data);
  const r = b / x;
  const rs = brotli11(s) / ((await xzTuned(s))?.length ?? Number.POSITIVE_INFINITY);
  const bound = Math.min(b, x + 4) + 16;
  const size = rep.container.length;
  if (size > bound) over++;
  totalIn += data.length;
  totalOut += size;
  cSum += c;
  dSum += d;
  const rel = path.relative(root, file);
  rows.push({
    file: rel,
    bytes: data.length,
    balanced: size,
    bound,
    c_cpu: c,
    d_cpu: d,
    r,
    r_sample: rs,
    label: rep.label,
  });
  console.log(
    `${rel.padEnd(46)} ${String(data.length).padStart(9)} ${String(size).padStart(9)} bound ${String(bound).padStart(9)} ${size > bound ? `OVER +${size - bound}` : "ok"}  c ${c.toFixed(2)} d ${(d * 1000).toFixed(1)} ms  r ${r.toFixed(3)} sample ${rs.toFixed(3)}  ${rep.label}`,
  );
}
console.log(
  `${rows.length} files, ${totalIn} B -> ${totalOut} B at balanced; compress ${cSum.toFixed(2)} CPU-s, decompress ${dSum.toFixed(2)} CPU-s (${(totalIn / 1e6 / dSum).toFixed(1)} MB/s per core); over min(brotli-11, xz -9e) + 16 B: ${over}`,
);
if (out) writeFileSync(out, JSON.stringify(rows, null, 1));
process.exitCode = over ? 1 : 0;
