/**
 * What one `labphi` process costs, start to exit, in CPU seconds (user + system, every thread):
 * `labphi compress` of a 1 KB file at each level beside the command-line compressors a user would
 * run instead (gzip, zstd, xz, brotli), measured in the same run, round-robin so that a busy
 * machine weighs on all of them alike (issue #24 item 3: at most 0.1 CPU-s per start).
 *
 *   npm run bench:cli                      10 rounds
 *   npm run bench:cli -- --rounds 20 --check   exit 1 when labphi compress (level max) is over budget
 *   npm run bench:cli -- --bin ../old/bin/labphi.mjs   the same rows for another launcher (default: the
 *                                                       package's bin, bin/labphi.cjs)
 *   npm run bench:cli -- --compare ../old/bin/labphi.mjs   both launchers' rows in the same rounds
 *     (a before/after on a shared machine: each round runs every row once, so load weighs on both)
 *
 * CPU time comes from the shell's `times` builtin (children's rusage, millisecond resolution).
 * `node -e 0` is printed too: what Node itself costs to start and stop on this machine, which no
 * launcher can go under. When NODE_EXTRA_CA_CERTS is set (it makes Node parse a certificate bundle
 * at every start: 0.04 CPU-s on the machine of the issue), the Node rows are measured without it as well.
 */
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { generate } from "../src/engine/generators.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

const BUDGET = 0.1;

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
};
const rounds = Number(arg("--rounds") ?? 10);
const check = process.argv.includes("--check");
/** the package's `bin` (what `labphi` runs), or another launcher (e.g. an older checkout's) */
const PACKAGE_BIN = (
  JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as { bin: { labphi: string } }
).bin.labphi;
const BIN = path.resolve(arg("--bin") ?? path.join(ROOT, PACKAGE_BIN));
/** a second launcher measured in the same rounds (its rows are marked "[compare]") */
const COMPARE = arg("--compare") ? path.resolve(arg("--compare") as string) : undefined;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-cli-start-"));
const input = path.join(dir, "in-1k.txt");
fs.writeFileSync(input, generate("text", 1024, 7).subarray(0, 1024));
const out = path.join(dir, "out");

const has = (cmd: string): boolean => spawnSync("sh", ["-c", `command -v ${cmd}`]).status === 0;
const q = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;
const node = q(process.execPath);
const labphi = (level: string, bin = BIN) => `${node} ${q(bin)} compress ${q(input)} -o ${q(out)} -q --level ${level}`;

interface Row {
  name: string;
  cmd: string;
  env?: "no-extra-ca";
  cpu: number[];
}
const rows: Row[] = [
  { name: "node -e 0 (Node's own start)", cmd: `${node} -e 0`, cpu: [] },
  { name: "labphi compress 1 KB, level fast", cmd: labphi("fast"), cpu: [] },
  { name: "labphi compress 1 KB, level balanced", cmd: labphi("balanced"), cpu: [] },
  { name: "labphi compress 1 KB, level max (default)", cmd: labphi("max"), cpu: [] },
  { name: "labphi decompress 1 KB (max container)", cmd: "", cpu: [] },
];
const extraCa = Boolean(process.env.NODE_EXTRA_CA_CERTS);
if (extraCa) {
  for (const r of rows.slice(0, 5))
    rows.push({ ...r, name: `${r.name}, no NODE_EXTRA_CA_CERTS`, env: "no-extra-ca", cpu: [] });
}
if (COMPARE) {
  for (const level of ["fast", "balanced", "max"])
    rows.push({
      name: `[compare] labphi compress 1 KB, level ${level}${level === "max" ? " (default)" : ""}`,
      cmd: labphi(level, COMPARE),
      cpu: [],
    });
  // its first start may build its bundle
  execFileSync(process.execPath, [COMPARE, "compress", input, "-o", `${out}.cmp`, "-q", "--level", "fast"]);
}
const peers: [string, string, string][] = [
  ["gzip -9", "gzip", `gzip -9 -c ${q(input)}`],
  ["zstd -19", "zstd", `zstd -19 -q -c ${q(input)}`],
  ["xz -9e", "xz", `xz -9e -c ${q(input)}`],
  ["brotli -q 11", "brotli", `brotli -q 11 -c ${q(input)}`],
];
const missing: string[] = [];
for (const [name, bin, cmd] of peers) {
  if (has(bin)) rows.push({ name, cmd, cpu: [] });
  else missing.push(bin);
}

// the container the decompress rows read, and a first start that builds the bundle if it must
execFileSync(process.execPath, [BIN, "compress", input, "-o", `${out}.max`, "-q", "--level", "max"]);
for (const r of rows)
  if (r.name.startsWith("labphi decompress"))
    r.cmd = `${node} ${q(BIN)} decompress ${q(`${out}.max`)} -o ${q(`${out}.back`)} -q`;

/** CPU seconds of one run of `cmd` (its children's user + system time, from the shell's `times`) */
function cpuOf(cmd: string, env?: Row["env"]): number {
  const e = { ...process.env };
  if (env === "no-extra-ca") delete e.NODE_EXTRA_CA_CERTS;
  const r = spawnSync("bash", ["-c", `${cmd} >/dev/null 2>&1 || echo "failed: $?" >&2; times`], {
    env: e,
    encoding: "utf8",
  });
  if (r.stderr.includes("failed")) throw new Error(`${cmd}: ${r.stderr.trim()}`);
  const lines = r.stdout.trim().split("\n");
  const m = /(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s/.exec(lines[lines.length - 1] ?? "");
  if (!m) throw new Error(`cannot read times: ${r.stdout}`);
  return Number(m[1]) * 60 + Number(m[2]) + Number(m[3]) * 60 + Number(m[4]);
}

for (let i = 0; i < rounds; i++) for (const r of rows) r.cpu.push(cpuOf(r.cmd, r.env));
if (!fs.readFileSync(`${out}.back`).equals(fs.readFileSync(input)))
  throw new Error("decompress did not restore the input");

const median = (v: number[]): number => {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2
    ? (s[(s.length - 1) / 2] as number)
    : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
};
const f3 = (n: number) => n.toFixed(3);
console.log(
  `${path.relative(process.cwd(), BIN) || BIN}: CPU seconds per process start, 1 KB input (${input.replace(dir, "$TMP")}), ${rounds} rounds, Node ${process.version}, ${os.cpus().length} cores, load ${os.loadavg()[0]?.toFixed(1)}`,
);
if (missing.length) console.log(`not installed (rows left out): ${missing.join(", ")}`);
if (COMPARE) console.log(`[compare] rows: ${path.relative(process.cwd(), COMPARE) || COMPARE}, in the same rounds`);
const width = Math.max(...rows.map((r) => r.name.length));
console.log(`${"".padEnd(width)}  median    min    max`);
for (const r of rows)
  console.log(`${r.name.padEnd(width)}  ${f3(median(r.cpu))}  ${f3(Math.min(...r.cpu))}  ${f3(Math.max(...r.cpu))}`);
const max = rows.find((r) => r.name === "labphi compress 1 KB, level max (default)");
const verdict = max && median(max.cpu) <= BUDGET;
console.log(
  `check: labphi compress 1 KB (level max) ${f3(median(max?.cpu ?? [Number.NaN]))} CPU-s per start, budget ${BUDGET}: ${verdict ? "within" : "OVER"}`,
);
fs.rmSync(dir, { recursive: true, force: true });
if (check && !verdict) process.exitCode = 1;
