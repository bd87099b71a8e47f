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
