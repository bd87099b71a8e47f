/**
 * Child process of bench/codec.ts: compresses and decompresses every file of a list at one omni
 * level, in this process, and prints one JSON object on stdout:
 *
 *   npx tsx bench/codec-omni.ts LEVEL LISTFILE
 *
 * CPU seconds are process.cpuUsage() deltas around each call: user + system time of every thread
 * of this process (the caller's thread, the context-mixing and decode workers, the libuv pool), so
 * work handed to other threads is counted. Small files are repeated until at least 0.2 s of CPU
 * has been spent (at most 20 runs) and the mean is kept. Peak RSS is this process's maxRSS at the
 * end (one process per level, so each level's peak is its own).
 */
import { readFileSync } from "node:fs";
import { compressWithReport, decompress, type Level } from "../src/codec/index.js";

const [level, list] = process.argv.slice(2) as [Level, string];
const files = readFileSync(list, "utf8").split("\n").filter(Boolean);

const cpu = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
const wall = (): number => performance.now() / 1e3;

async function measure<T>(fn: () => Promise<T>, repeat: boolean): Promise<{ v: T; cpu: number; wall: number }> {
  const c0 = cpu();
  const w0 = wall();
  const v = await fn();
  let c = cpu() - c0;
  let w = wall() - w0;
  if (!repeat || c >= 0.2) return { v, cpu: c, wall: w };
  let runs = 1;
  while (c < 0.2 && runs < 20) {
    const c1 = cpu();
    const w1 = wall();
    await fn();
    c += cpu() - c1;
    w += wall() - w1;
    runs++;
  }
  return { v, cpu: c / runs, wall: w / runs };
}

// warm-up, not counted: JIT, WebAssembly compile and the worker threads a long-lived process
// (a server, a suite worker) starts once — two inputs at once above the zstd worker threshold
const warm = Buffer.from('warm-up text 12345 {"a":[1,2,3]} '.repeat(400));
await decompress((await compressWithReport(warm, { level })).container);
const warmBig = (seed: number): Uint8Array =>
  Uint8Array.from({ length: 300_000 }, (_, i) => (i * seed + (i >> 7)) & 0x7f);
await Promise.all([1, 3].map((s) => compressWithReport(warmBig(s), { level })));
// and at fast the typed chambers' coders, on synthetic arrays that take their branches (wide and
// small values, exceptions, each transform and residual kind): a 1 MiB file is timed once, and a
// server that has coded a few arrays does not pay V8's first optimisations and deoptimisations
// again (measured: 30-80 CPU-ms instead of 7 for the first float64 MiB). Only at fast: at balanced
// and max the backends dominate, and this warm-up would cost them minutes.
if (level === "fast") {
  let x = 24;
  const rnd = (): number => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
  const n = 1 << 17;
  const specials = [Math.PI, 0, -0, Number.NaN, 1e300];
  const amounts = Float64Array.from({ length: n }, (_, i) =>
    i % 200 === 7 ? specials[((i / 200) % 5) | 0]! : Math.round(10 ** (rnd() * 6) * 1e4) / 1e4,
  );
  let t = 20;
  const smooth = Float64Array.from({ length: n }, () => {
    t += rnd() - 0.5;
    return Math.round(t * 100) / 100;
  });
  let a = 0;
  const walk = Int32Array.from({ length: 2 * n }, () => (a += Math.floor(rnd() * 241) - 120));
  const wide = Int32Array.from({ length: 2 * n }, () => Math.floor((rnd() - 0.5) * 4e9));
  const clock = Int32Array.from({ length: 2 * n }, (_, i) => 1_600_000_000 + 30 * i + (i % 7));
  for (let rep = 0; rep < 3; rep++)
    for (const typed of [amounts, smooth, walk, wide, clock]) {
      const bytes = new Uint8Array(typed.buffer);
      await decompress((await compressWithReport(bytes, { level })).container);
    }
  // V8 optimises on background threads: on a loaded machine the last jobs may still be queued,
  // and their CPU (and the slow code meanwhile) would land in the first file's figures
  await new Promise((res) => setTimeout(res, 500));
}

const rows: unknown[] = [];
for (const f of files) {
  const data = new Uint8Array(readFileSync(f));
  const c = await measure(() => compressWithReport(data, { level }), data.length < 1 << 20);
  const d = await measure(() => decompress(c.v.container, { maxOutputBytes: 1 << 30 }), true);
  rows.push({
    file: f,
    bytes: data.length,
    out: c.v.container.length,
    chamber: c.v.chamber,
    data_class: c.v.data_class,
    c_cpu: c.cpu,
    d_cpu: d.cpu,
    c_wall: c.wall,
    d_wall: d.wall,
    ok: Buffer.compare(Buffer.from(d.v), Buffer.from(data)) === 0,
  });
}
process.stdout.write(`${JSON.stringify({ level, rows, max_rss: process.resourceUsage().maxRSS * 1024 })}\n`);
process.exit(0);
