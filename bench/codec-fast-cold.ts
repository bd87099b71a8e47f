/**
 * The cold call: CPU of one compress per fresh process, as a CLI user (one process per file) pays
 * it — no warm-up, the codec bundled into one JavaScript file as `labphi` runs it.
 *
 *   npx tsx bench/codec-fast-cold.ts [--level fast] [--runs 5] [--root DIR] FILE…
 *
 * Per file, `--runs` fresh processes each time one compressWithReport call with
 * process.cpuUsage() (every thread of the process: V8's background compiles and collections
 * included); printed: bytes out, then min / median / max CPU-ms. `--root` measures another checkout
 * of the project (e.g. `git archive HEAD | tar -x -C /tmp/head` with a node_modules link) in the
 * same minutes, for a before/after on a loaded machine.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { bundleModule } from "../src/threads/bundle.mjs";

const args = process.argv.slice(2);
let level = "fast";
let runs = 5;
let root = path.resolve(fileURLToPath(new URL("..", import.meta.url)));
const files: string[] = [];
for (let i = 0; i < args.length; i++) {
  const a = args[i]!;
  if (a === "--level") level = args[++i]!;
  else if (a === "--runs") runs = Number(args[++i]);
  else if (a === "--root") root = path.resolve(args[++i]!);
  else files.push(a);
}
if (!files.length || !(runs >= 1)) {
  console.error("usage: npx tsx bench/codec-fast-cold.ts [--level fast] [--runs 5] [--root DIR] FILE…");
  process.exit(2);
}
const url = await bundleModule(pathToFileURL(path.join(root, "src/codec/index.ts")));
if (!url) throw new Error("could not bundle the codec");
const child = `
const { readFileSync } = await import("node:fs");
const codec = await import(${JSON.stringify(url)});
const data = new Uint8Array(readFileSync(process.argv[1]));
const u0 = process.cpuUsage();
const r = await codec.compressWithReport(data, { level: ${JSON.stringify(level)} });
const u = process.cpuUsage(u0);
process.stdout.write(JSON.stringify({ out: r.container.length, chamber: r.chamber, ms: (u.user + u.system) / 1000 }));
process.exit(0);`;
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
let total = 0;
for (const f of files) {
  const ms: number[] = [];
  let out = 0;
  let chamber = "";
  for (let i = 0; i < runs; i++) {
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", child, f], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`${f}: ${r.stderr}`);
    const row = JSON.parse(r.stdout) as { out: number; chamber: string; ms: number };
    ms.push(row.ms);
    out = row.out;
    chamber = row.chamber;
  }
  total += median(ms);
  console.log(
    `${f}\t${chamber}\t${out} B\tCPU-ms min ${Math.min(...ms).toFixed(1)} median ${median(ms).toFixed(1)} max ${Math.max(...ms).toFixed(1)}`,
  );
}
console.log(`sum of medians: ${total.toFixed(1)} CPU-ms (${root}, level ${level}, ${runs} runs per file)`);
