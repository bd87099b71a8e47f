/**
 * bench:engine — per-request time of the codec endpoints' service at the configured limits
 * (CODEC_SLOW_LIMIT_BYTES, CODEC_BODY_LIMIT_BYTES): what one request can cost the event loop.
 * For each file: compress at level max (with the round-trip verification the API does),
 * decompress of that container, process (compress + decompress + gzip-9 + brotli-11), all on the
 * first slow-limit bytes; and compress at level fast on the first body-limit bytes. "Loop stall" is
 * the longest time the event loop could not turn during that request (perf_hooks
 * monitorEventLoopDelay): how long other requests would wait behind it.
 * Usage: npm run bench:engine [-- FILE…]   (default: a mix from ../shared/corpus)
 * Writes bench/results/engine.json and prints a Markdown table.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { loadConfig } from "../src/config.js";
import { openDatabase } from "../src/db/database.js";
import { migrateToLatest } from "../src/db/migrate.js";
import { EngineService } from "../src/engine/service.js";

const root = path.resolve(import.meta.dirname, "..");
const corpus = path.resolve(root, "..", "shared", "corpus");
const DEFAULT_FILES = [
  "large/bible.txt",
  "canterbury/kennedy.xls",
  "csv/nab_nyc_taxi.csv",
  "code/brotli_c_src.tar",
  "float64/elf_City-temp.f64",
  "int32/synth_random_walk.i32",
  "json",
].map((f) => path.join(corpus, f));

function expand(p: string): string[] {
  if (!fs.existsSync(p)) return [];
  if (fs.statSync(p).isDirectory()) {
    const first = fs
      .readdirSync(p)
      .map((f) => path.join(p, f))
      .filter((f) => fs.statSync(f).isFile())
      .sort((a, b) => fs.statSync(b).size - fs.statSync(a).size)[0];
    return first ? [first] : [];
  }
  return [p];
}

const args = process.argv.slice(2);
const files = (args.length ? args : DEFAULT_FILES).flatMap(expand);
const config = loadConfig({ ...process.env, LOG_LEVEL: "silent" });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-engine-"));
const db = openDatabase({ dataDir: dir });
await migrateToLatest(db);
const engine = new EngineService(db.kysely, config.codec, "bench", { error: (o, m) => console.error(m, o) });
await engine.init();

/** result, wall ms, and the longest event-loop stall (ms) while it ran */
const time = async <T>(fn: () => Promise<T>): Promise<[T, number, number]> => {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  // the monitor records delays between its own timer ticks: let it tick before the request
  await new Promise((res) => setTimeout(res, 5));
  const t = performance.now();
  const r = await fn();
  const ms = Math.round(performance.now() - t);
  await new Promise((res) => setTimeout(res, 3)); // the monitor's timer records a stall when it next fires
  h.disable();
  return [r, ms, Math.round(h.max / 1e6)];
};

// warm-up (JIT, backends)
await engine.compress(new TextEncoder().encode("warm up ".repeat(2000)), { level: "max" }, null);

const rows = [];
for (const file of files) {
  const all = new Uint8Array(fs.readFileSync(file));
  const slow = all.subarray(0, config.codec.slowLimitBytes);
  const fast = all.subarray(0, config.codec.bodyLimitBytes);
  const [c, compressMs, compressStall] = await time(() => engine.compress(slow, { level: "max" }, null));
  const [, decompressMs, decompressStall] = await time(() => engine.decompress(c.container));
  const [p, processMs, processStall] = await time(() => engine.process(slow, "max", null));
  const [, fastMs, fastStall] = await time(() => engine.compress(fast, { level: "fast" }, null));
  rows.push({
    file: path.relative(corpus, file),
    slow_bytes: slow.length,
    chamber: c.chamber,
    compress_verify_ms: compressMs,
    compress_stall_ms: compressStall,
    decompress_ms: decompressMs,
    decompress_stall_ms: decompressStall,
    process_ms: processMs,
    process_stall_ms: processStall,
    process_ok: p.ok,
    fast_bytes: fast.length,
    fast_compress_verify_ms: fastMs,
    fast_stall_ms: fastStall,
  });
  process.stderr.write(`bench:engine ${path.relative(corpus, file)} done\n`);
}
await db.close();
fs.rmSync(dir, { recursive: true, force: true });

const result = {
  at: new Date().toISOString(),
  cpus: os.cpus().length,
  loadavg_1m: Math.round((os.loadavg()[0] ?? 0) * 100) / 100,
  limits: config.codec,
  rows,
};
fs.mkdirSync(path.join(root, "bench", "results"), { recursive: true });
fs.writeFileSync(path.join(root, "bench", "results", "engine.json"), `${JSON.stringify(result, null, 2)}\n`);
console.log(
  `Per-request time at the limits (slow ${config.codec.slowLimitBytes} B, fast ${config.codec.bodyLimitBytes} B); ${result.cpus} CPUs, load ${result.loadavg_1m}\n`,
);
console.log(
  "| file | slow bytes | chamber | max compress+verify ms (loop stall) | decompress ms (stall) | process ms (stall) | fast bytes | fast compress+verify ms (stall) |",
);
console.log("|---|---:|---|---:|---:|---:|---:|---:|");
for (const r of rows) {
  console.log(
    `| ${r.file} | ${r.slow_bytes} | ${r.chamber} | ${r.compress_verify_ms} (${r.compress_stall_ms}) | ${r.decompress_ms} (${r.decompress_stall_ms}) | ${r.process_ms} (${r.process_stall_ms})${r.process_ok ? "" : " (FAILED)"} | ${r.fast_bytes} | ${r.fast_compress_verify_ms} (${r.fast_stall_ms}) |`,
  );
}
