/**
 * Peak memory of one compress + decompress call per level, each level in a fresh process:
 *   npx tsx bench/codec-memory.ts FILE [FILE…]
 * Prints, per file and level, the input size, the container size and the process peak RSS
 * (resourceUsage().maxRSS) minus the RSS before the call.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { compress, decompress, LEVELS, type Level } from "../src/codec/index.js";

if (process.argv[2] === "--child") {
  const [, , , file, level] = process.argv;
  const data = readFileSync(file!);
  const before = process.memoryUsage().rss;
  const c = await compress(data, { level: level as Level });
  const back = await decompress(c);
  if (Buffer.compare(Buffer.from(back), data) !== 0) throw new Error("round trip failed");
  const peak = process.resourceUsage().maxRSS * 1024;
  console.log(JSON.stringify({ bytes: data.length, container: c.length, before, peak }));
} else {
  const self = fileURLToPath(import.meta.url);
  console.log("| file | bytes | level | container | peak RSS MiB | over baseline MiB |");
  console.log("|---|---:|---|---:|---:|---:|");
  for (const file of process.argv.slice(2)) {
    for (const level of LEVELS) {
      const r = spawnSync(process.execPath, ["--import", "tsx", self, "--child", file, level], { encoding: "utf8" });
      if (r.status !== 0) throw new Error(r.stderr);
      const m = JSON.parse(r.stdout.trim().split("\n").pop()!);
      const mib = (x: number): string => (x / 2 ** 20).toFixed(0);
      console.log(
        `| ${file.split("/").slice(-2).join("/")} | ${m.bytes} | ${level} | ${m.container} | ${mib(m.peak)} | ${mib(m.peak - m.before)} |`,
      );
    }
  }
}
