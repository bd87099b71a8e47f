/**
 * Codec benchmark (issue #24): every omni level against every setting of the peers a user can
 * install (gzip -1…-9, zstd -1…-19 with and without --long, brotli -q 0…11, xz -0…-9 and -9e,
 * bzip3, zpaq -m1…-m5), on ../shared/corpus plus real files of this machine (binaries under
 * /usr/bin and /usr/lib, texts under /usr/share, picked from sorted listings by a fixed seed).
 *
 *   npm run bench:codec [-- --quick] [--check] [--levels fast,balanced,max] [--peers gzip,zstd,…]
 *                       [--no-system] [--no-speedup] [--seed N] [--out bench/results] [DIR…]
 *
 * Measured per omni level and per peer setting: total bytes, compress and decompress CPU seconds
 * (peers: the child's rusage through /usr/bin/time, the command-line tool as a user runs it, one
 * process per file; omni: process.cpuUsage() of a child process per level, which counts its
 * worker threads), MB/s per core (input MB per CPU second), wall seconds and peak RSS. Printed:
 * the frontier (total bytes against compress CPU), each level's dominating peers, the targets of
 * issue #24 item 2 as pass/fail lines, and the speed-up of fast and balanced on an input ≥ 8 MB
 * with 1, 2 and all cores (taskset). Writes codec-frontier(.quick).{json,md} to --out.
 *
 * Exit code: 1 when a round trip fails; with --check also when an omni level is dominated (a peer
 * setting both smaller and cheaper to compress) or an item-2 target line fails.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { CODEC_VERSION, LEVELS, type Level } from "../src/codec/index.js";
import { bundleModule } from "../src/threads/bundle.mjs";
import { versionText } from "../src/versions.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

interface Args {
  quick: boolean;
  check: boolean;
  levels: Level[];
  peers: string[] | null;
  system: boolean;
  speedup: boolean;
  seed: number;
  out: string;
  dirs: string[];
}
function parseArgs(argv: string[]): Args {
  const a: Args = {
    quick: false,
    check: false,
    levels: [...LEVELS],
    peers: null,
    system: true,
    speedup: true,
    seed: 24,
    out: path.join(REPO, "bench/results"),
    dirs: [],
  };
  for (let i = 0; i < argv.length; i++) {
    const x = argv[i]!;
    if (x === "--quick") a.quick = true;
    else if (x === "--check") a.check = true;
    else if (x === "--levels") a.levels = argv[++i]!.split(",") as Level[];
    else if (x === "--peers") a.peers = argv[++i]!.split(",");
    else if (x === "--no-system") a.system = false;
    else if (x === "--no-speedup") a.speedup = false;
    else if (x === "--seed") a.seed = Number(argv[++i]);
    else if (x === "--out") a.out = path.resolve(argv[++i]!);
    else if (x === "--help") {
      console.log(
        "usage: npm run bench:codec -- [--quick] [--check] [--levels fast,balanced,max] [--peers gzip,zstd,brotli,xz,bzip3,zpaq] [--no-system] [--no-speedup] [--seed N] [--out DIR] [DIR…]",
      );
      process.exit(0);
    } else a.dirs.push(path.resolve(x));
  }
  for (const l of a.levels) if (!LEVELS.includes(l)) throw new Error(`unknown level ${l}`);
  if (a.dirs.length === 0) a.dirs.push(path.resolve(REPO, "../shared/corpus"));
  return a;
}

/**
 * How the omni child runs: from the bundle of bench/codec-omni.ts (one JavaScript file, as the CLI
 * and the suite worker run the codec: src/threads/bundle.mjs), so that its peak RSS and CPU are the
 * codec's and not tsx's (the TypeScript loader adds 80-110 MB to a process here); through tsx when
 * bundling is not possible.
 */
let omniArgs: string[] | undefined;
async function omniCommand(): Promise<string[]> {
  if (!omniArgs) {
    const entry = path.join(REPO, "bench/codec-omni.ts");
    const url = await bundleModule(pathToFileURL(entry));
    omniArgs = url ? [fileURLToPath(url)] : ["--import", "tsx", entry];
  }
  return omniArgs;
}

// ------------------------------------------------------------------ corpus

/** --quick: whole files up to this size; the head of larger ones */
const QUICK_WHOLE = 1024 * 1024;
const QUICK_BYTES = 512 * 1024;

interface Input {
  key: string;
  folder: string;
  /** where the bytes come from */
  source: string;
  bytes: number;
  sha256: string;
  data: Buffer;
}

function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && !(d === dir && /\.(md|py)$/.test(e.name))) out.push(p);
    }
  };
  walk(dir);
  return out.sort();
}

/**
 * --quick: per folder, its largest file of at most 1 MB (whole, so JSON and CSV stay valid); a
 * folder without one gives the first 512 KB of its smallest file
 */
function quickPick(files: string[], root: string): { file: string; head: boolean }[] {
  const best = new Map<string, { file: string; size: number; head: boolean }>();
  for (const f of files) {
    const folder = path.relative(root, f).split(path.sep)[0]!;
    const size = statSync(f).size;
    const b = best.get(folder);
    const fits = size <= QUICK_WHOLE;
    if (!b) best.set(folder, { file: f, size, head: !fits });
    else if (fits && (b.head || size > b.size)) best.set(folder, { file: f, size, head: false });
    else if (!fits && b.head && size < b.size) best.set(folder, { file: f, size, head: true });
  }
  return [...best.values()].map((b) => ({ file: b.file, head: b.head })).sort((a, b) => (a.file < b.file ? -1 : 1));
}

/** mulberry32: the fixed seed makes the choice of machine files repeatable */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

const COMPRESSED_EXT = /\.(gz|xz|bz2|zst|lz4|lzma|br|zip|jar|png|jpe?g|gif|webp|woff2?|ttf|otf|mo|pyc|deb|7z)$/i;

function walkLimited(root: string, depth: number, keep: (p: string, size: number) => boolean, acc: string[]): void {
  let entries: import("node:fs").Dirent[];
  try {
    entries = readdirSync(root, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    const p = path.join(root, e.name);
    if (e.isDirectory() && depth > 0 && !e.isSymbolicLink()) walkLimited(p, depth - 1, keep, acc);
    else if (e.isFile()) {
      try {
        const st = lstatSync(p);
        if (st.isFile() && keep(p, st.size)) acc.push(p);
      } catch {}
    }
  }
}

/** paths with an x.y.z in them (perl/5.36.0/…) read as version strings in docs: not picked */
const VERSIONED = /\d+\.\d+\.\d+/;

const isElf = (p: string): boolean => {
  try {
    const b = readFileSync(p).subarray(0, 4);
    return b[0] === 0x7f && b[1] === 0x45 && b[2] === 0x4c && b[3] === 0x46;
  } catch {
    return false;
  }
};
const isText = (p: string): boolean => {
  try {
    const b = readFileSync(p).subarray(0, 4096);
    let ok = 0;
    for (const c of b) if (c === 9 || c === 10 || c === 13 || (c >= 32 && c !== 127)) ok++;
    return b.length > 0 && ok / b.length > 0.97;
  } catch {
    return false;
  }
};

/** machine files: `per` binaries from /usr/bin and /usr/lib each, `per` texts from /usr/share */
function systemFiles(seed: number, per: number, maxBytes: number): { folder: string; file: string }[] {
  const lo = 16 * 1024;
  const pick = (folder: string, cands: string[], ok: (p: string) => boolean): { folder: string; file: string }[] => {
    const sorted = [...new Set(cands)].filter((p) => !VERSIONED.test(p)).sort();
    const r = rng(seed + folder.length);
    const out: { folder: string; file: string }[] = [];
    const seen = new Set<number>();
    for (let tries = 0; out.length < per && tries < sorted.length * 2 && seen.size < sorted.length; tries++) {
      const i = Math.floor(r() * sorted.length);
      if (seen.has(i)) continue;
      seen.add(i);
      if (ok(sorted[i]!)) out.push({ folder, file: sorted[i]! });
    }
    return out;
  };
  const bin: string[] = [];
  walkLimited("/usr/bin", 0, (_p, s) => s >= lo && s <= maxBytes, bin);
  const lib: string[] = [];
  walkLimited("/usr/lib", 3, (p, s) => s >= lo && s <= maxBytes && /\.so(\.\d+)*$/.test(p), lib);
  const share: string[] = [];
  walkLimited("/usr/share", 4, (p, s) => s >= lo && s <= maxBytes && !COMPRESSED_EXT.test(p), share);
  return [...pick("usr-bin", bin, isElf), ...pick("usr-lib", lib, isElf), ...pick("usr-share", share, isText)];
}

function loadInputs(args: Args): Input[] {
  const inputs: Input[] = [];
  const add = (key: string, folder: string, source: string, data: Buffer): void => {
    inputs.push({
      key,
      folder,
      source,
      bytes: data.length,
      sha256: createHash("sha256").update(data).digest("hex").slice(0, 16),
      data,
    });
  };
  for (const dir of args.dirs) {
    const all = listFiles(dir);
    const files = args.quick ? quickPick(all, dir) : all.map((file) => ({ file, head: false }));
    for (const { file: f, head } of files) {
      const rel = path.relative(dir, f);
      const folder = rel.includes(path.sep) ? rel.split(path.sep)[0]! : path.basename(dir);
      let data = readFileSync(f);
      if (head) data = data.subarray(0, QUICK_BYTES);
      add(`${path.basename(dir)}/${rel}`, folder, f, data);
    }
  }
  if (args.system) {
    const per = args.quick ? 2 : 6;
    for (const { folder, file } of systemFiles(args.seed, per, args.quick ? QUICK_WHOLE : 4 * 1024 * 1024)) {
      add(`machine${file}`, folder, file, readFileSync(file));
    }
  }
  return inputs;
}

// ------------------------------------------------------------------ peers (command-line tools)

interface PeerSetting {
  name: string;
  family: string;
  tool: string;
  /** shell command: compress $IN into $OUT */
  c: string;
  /** shell command: decompress $OUT into $BACK */
  d: string;
}

function peerSettings(): PeerSetting[] {
  const s: PeerSetting[] = [];
  for (let l = 1; l <= 9; l++)
    s.push({
      name: `gzip -${l}`,
      family: "gzip",
      tool: "gzip",
      c: `gzip -n -${l} -c "$IN" > "$OUT"`,
      d: `gzip -d -c "$OUT" > "$BACK"`,
    });
  for (const long of [false, true])
    for (let l = 1; l <= 19; l++)
      s.push({
        name: `zstd -${l}${long ? " --long" : ""}`,
        family: "zstd",
        tool: "zstd",
        c: `zstd -q -T1 -${l}${long ? " --long=27" : ""} -c "$IN" > "$OUT"`,
        d: `zstd -q -d${long ? " --long=27" : ""} -c "$OUT" > "$BACK"`,
      });
  for (let q = 0; q <= 11; q++)
    s.push({
      name: `brotli -q ${q}`,
      family: "brotli",
      tool: "brotli",
      c: `brotli -q ${q} -c "$IN" > "$OUT"`,
      d: `brotli -d -c "$OUT" > "$BACK"`,
    });
  for (const p of ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "9e"])
    s.push({
      name: `xz -${p}`,
      family: "xz",
      tool: "xz",
      c: `xz -T1 -${p} -c "$IN" > "$OUT"`,
      d: `xz -d -c "$OUT" > "$BACK"`,
    });
  s.push({
    name: "bzip3",
    family: "bzip3",
    tool: "bzip3",
    c: `bzip3 -e -c < "$IN" > "$OUT"`,
    d: `bzip3 -d -c < "$OUT" > "$BACK"`,
  });
  for (let m = 1; m <= 5; m++)
    s.push({
      name: `zpaq -m${m}`,
      family: "zpaq",
      tool: "zpaq",
      // the archive names the member after the input's base name (a short number)
      c: `rm -f "$OUT" && cd "$INDIR" && zpaq a "$OUT" "$NAME" -m${m} > /dev/null 2>&1`,
      d: `rm -rf "$BACK.d" && mkdir -p "$BACK.d" && cd "$BACK.d" && zpaq x "$OUT" -force > /dev/null 2>&1 && mv "$BACK.d/$NAME" "$BACK"`,
    });
  return s;
}

const haveTool = (tool: string): boolean => spawnSync("sh", ["-c", `command -v ${tool}`]).status === 0;

interface Usage {
  wall: number;
  cpu: number;
  rss: number;
}
/** run a shell script under /usr/bin/time: the children's CPU seconds and the largest child's peak RSS */
function timed(script: string, scratch: string): Usage {
  const tf = path.join(scratch, "time.txt");
  const sf = path.join(scratch, "run.sh");
  writeFileSync(sf, `set -e\n${script}\n`);
  const r = spawnSync("/usr/bin/time", ["-f", "%e %U %S %M", "-o", tf, "sh", sf], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`peer script failed: ${r.stderr}`);
  const [e, u, s, m] = readFileSync(tf, "utf8").trim().split(/\s+/).slice(-4).map(Number) as [
    number,
    number,
    number,
    number,
  ];
  return { wall: e, cpu: u + s, rss: m * 1024 };
}

// ------------------------------------------------------------------ results

interface Cell {
  bytes: number;
  ok: boolean;
  chamber?: string;
  c_cpu?: number;
  d_cpu?: number;
}
interface Method {
  name: string;
  kind: "omni" | "peer";
  family: string;
  bytes: number;
  c_cpu: number;
  d_cpu: number;
  c_wall: number;
  d_wall: number;
  peak_rss: number;
  ok: boolean;
}
interface FileRow {
  path: string;
  folder: string;
  source: string;
  detected: string;
  bytes: number;
  sha256: string;
  cells: Record<string, Cell>;
}

const round = (x: number, d: number): number => Math.round(x * 10 ** d) / 10 ** d;
const mbpc = (bytes: number, cpu: number): number => (cpu > 0 ? bytes / 1e6 / cpu : Number.POSITIVE_INFINITY);
const log = (s: string): void => {
  process.stderr.write(`${s}\n`);
};

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const t0 = performance.now();
  const inputs = loadInputs(args);
  const total = inputs.reduce((s, r) => s + r.bytes, 0);
  log(`bench:codec — ${inputs.length} files, ${(total / 1e6).toFixed(1)} MB, levels ${args.levels}`);
  const scratch = mkdtempSync(path.join(os.tmpdir(), "labphi-codec-bench-"));
  const inDir = path.join(scratch, "in");
  mkdirSync(inDir);
  for (const [i, inp] of inputs.entries()) writeFileSync(path.join(inDir, String(i)), inp.data);
  const listFile = path.join(scratch, "list.txt");
  writeFileSync(listFile, inputs.map((_, i) => path.join(inDir, String(i))).join("\n"));

  const rows: FileRow[] = inputs.map((i) => ({
    path: i.key,
    folder: i.folder,
    source: i.source,
    detected: "",
    bytes: i.bytes,
    sha256: i.sha256,
    cells: {},
  }));
  const methods: Method[] = [];
  let failures = 0;

  // omni: one child process per level
  for (const level of args.levels) {
    const r = spawnSync(process.execPath, [...(await omniCommand()), level, listFile], {
      encoding: "utf8",
      cwd: REPO,
      maxBuffer: 64 * 1024 * 1024,
    });
    if (r.status !== 0) throw new Error(`omni ${level} failed: ${r.stderr}`);
    const res = JSON.parse(r.stdout.trim().split("\n").pop()!) as {
      rows: {
        out: number;
        chamber: string;
        data_class: string;
        c_cpu: number;
        d_cpu: number;
        c_wall: number;
        d_wall: number;
        ok: boolean;
      }[];
      max_rss: number;
    };
    const m: Method = {
      name: `omni ${level}`,
      kind: "omni",
      family: "omni",
      bytes: 0,
      c_cpu: 0,
      d_cpu: 0,
      c_wall: 0,
      d_wall: 0,
      peak_rss: res.max_rss,
      ok: true,
    };
    res.rows.forEach((x, i) => {
      rows[i]!.cells[m.name] = { bytes: x.out, ok: x.ok, chamber: x.chamber, c_cpu: x.c_cpu, d_cpu: x.d_cpu };
      rows[i]!.detected ||= x.data_class;
      m.bytes += x.out;
      m.c_cpu += x.c_cpu;
      m.d_cpu += x.d_cpu;
      m.c_wall += x.c_wall;
      m.d_wall += x.d_wall;
      if (!x.ok) {
        m.ok = false;
        failures++;
      }
    });
    methods.push(m);
    log(
      `  ${m.name}: ${m.bytes} B, compress ${m.c_cpu.toFixed(2)} CPU-s, decompress ${m.d_cpu.toFixed(2)} CPU-s, peak RSS ${(m.peak_rss / 2 ** 20).toFixed(0)} MiB`,
    );
  }

  // peers: command-line tools, one process per file, CPU from the children's rusage
  const missing: string[] = [];
  const settings = peerSettings().filter((s) => !args.peers || args.peers.includes(s.family));
  const outDir = path.join(scratch, "out");
  mkdirSync(outDir);
  for (const s of settings) {
    if (missing.includes(s.tool)) continue;
    if (!haveTool(s.tool)) {
      missing.push(s.tool);
      log(`  ${s.tool}: not installed (apt-get install -y ${s.tool === "xz" ? "xz-utils" : s.tool}); skipped`);
      continue;
    }
    const vars = (i: number): string =>
      `IN="${path.join(inDir, String(i))}"; INDIR="${inDir}"; NAME="${i}"; OUT="${path.join(outDir, `${i}.c`)}"; BACK="${path.join(outDir, `${i}.d`)}"`;
    const cScript = inputs.map((_, i) => `(${vars(i)}; ${s.c})`).join("\n");
    const dScript = inputs.map((_, i) => `(${vars(i)}; ${s.d})`).join("\n");
    const cu = timed(cScript, scratch);
    const du = timed(dScript, scratch);
    const m: Method = {
      name: s.name,
      kind: "peer",
      family: s.family,
      bytes: 0,
      c_cpu: cu.cpu,
      d_cpu: du.cpu,
      c_wall: cu.wall,
      d_wall: du.wall,
      peak_rss: Math.max(cu.rss, du.rss),
      ok: true,
    };
    inputs.forEach((inp, i) => {
      const size = statSync(path.join(outDir, `${i}.c`)).size;
      const back = readFileSync(path.join(outDir, `${i}.d`));
      const ok = createHash("sha256").update(back).digest("hex").slice(0, 16) === inp.sha256;
      if (!ok) {
        m.ok = false;
        failures++;
      }
      rows[i]!.cells[s.name] = { bytes: size, ok };
      m.bytes += size;
    });
    methods.push(m);
    log(
      `  ${s.name}: ${m.bytes} B, ${m.c_cpu.toFixed(2)} / ${m.d_cpu.toFixed(2)} CPU-s${m.ok ? "" : " ROUND TRIP FAILED"}`,
    );
  }

  const speedup = args.speedup ? runSpeedup(args, inputs, scratch, await omniCommand()) : [];
  rmSync(scratch, { recursive: true, force: true });

  const report = summarize(args, rows, methods, missing, speedup, failures, (performance.now() - t0) / 1000);
  mkdirSync(args.out, { recursive: true });
  const base = args.quick ? "codec-frontier-quick" : "codec-frontier";
  writeFileSync(path.join(args.out, `${base}.json`), `${JSON.stringify(report, null, 1)}\n`);
  const md = markdown(report);
  writeFileSync(path.join(args.out, `${base}.md`), md);
  process.stdout.write(terminal(report));
  log(`wrote ${path.join(args.out, base)}.{json,md} in ${report.meta.wall_s} s`);
  if (failures) {
    log(`${failures} ROUND TRIP FAILURES`);
    process.exit(1);
  }
  if (args.check && !report.check.pass) {
    log(`check failed: ${report.check.failed.join("; ")}`);
    process.exit(1);
  }
}

// ------------------------------------------------------------------ speed-up with 1, 2, all cores

interface Speedup {
  level: Level;
  bytes: number;
  cores: { cores: number; wall_s: number; cpu_s: number; speedup: number }[];
}

/** compress one input of ≥ 8 MB (corpus files joined) at fast and balanced under taskset */
function runSpeedup(args: Args, inputs: Input[], scratch: string, omni: string[]): Speedup[] {
  const all = os.availableParallelism();
  if (!haveTool("taskset")) {
    log("  taskset missing: no speed-up figures");
    return [];
  }
  const target = 8 * 1024 * 1024 + 1;
  const parts: Buffer[] = [];
  let n = 0;
  for (let i = 0; n < target; i++) {
    const b = inputs[i % inputs.length]!.data;
    parts.push(b);
    n += b.length;
  }
  const file = path.join(scratch, "big.bin");
  writeFileSync(file, Buffer.concat(parts).subarray(0, Math.max(target, args.quick ? target : 16 * 1024 * 1024)));
  const list = path.join(scratch, "big.txt");
  writeFileSync(list, file);
  const size = statSync(file).size;
  const out: Speedup[] = [];
  for (const level of args.levels.filter((l) => l !== "max")) {
    const cores: Speedup["cores"] = [];
    for (const c of [...new Set([1, 2, all])].filter((c) => c <= all)) {
      const r = spawnSync("taskset", ["-c", `0-${c - 1}`, process.execPath, ...omni, level, list], {
        encoding: "utf8",
        cwd: REPO,
        maxBuffer: 64 * 1024 * 1024,
      });
      if (r.status !== 0) throw new Error(`speed-up ${level} failed: ${r.stderr}`);
      const row = (JSON.parse(r.stdout.trim().split("\n").pop()!) as { rows: { c_wall: number; c_cpu: number }[] })
        .rows[0]!;
      cores.push({ cores: c, wall_s: round(row.c_wall, 3), cpu_s: round(row.c_cpu, 3), speedup: 0 });
    }
    for (const c of cores) c.speedup = round(cores[0]!.wall_s / c.wall_s, 2);
    out.push({ level, bytes: size, cores });
    log(`  speed-up ${level}: ${cores.map((c) => `${c.cores} core(s) ${c.wall_s} s (×${c.speedup})`).join(", ")}`);
  }
  return out;
}

// ------------------------------------------------------------------ frontier and checks

interface Line {
  target: string;
  measured: string;
  pass: boolean;
}

function summarize(
  args: Args,
  rows: FileRow[],
  methods: Method[],
  missing: string[],
  speedup: Speedup[],
  failures: number,
  wall: number,
) {
  const total = rows.reduce((s, r) => s + r.bytes, 0);
  const get = (name: string): Method | undefined => methods.find((m) => m.name === name);
  // frontier: no other method both smaller and cheaper to compress
  const dominators = (m: Method): Method[] =>
    methods.filter((p) => p !== m && p.bytes < m.bytes && p.c_cpu < m.c_cpu && p.ok);
  const frontier = methods
    .filter((m) => dominators(m).length === 0)
    .sort((a, b) => a.c_cpu - b.c_cpu)
    .map((m) => m.name);
  const lines: Line[] = [];
  const omni = methods.filter((m) => m.kind === "omni");
  for (const m of omni) {
    const d = dominators(m).filter((p) => p.kind === "peer");
    lines.push({
      target: `${m.name} is on the frontier (no peer setting smaller and faster)`,
      measured: d.length
        ? `dominated by ${d.map((p) => `${p.name} (${p.bytes} B, ${p.c_cpu.toFixed(2)} CPU-s)`).join(", ")}`
        : `${m.bytes} B in ${m.c_cpu.toFixed(2)} CPU-s`,
      pass: d.length === 0,
    });
  }
  const need = (name: string): string => (get(name) ? "" : ` (${name} not measured)`);
  const fast = get("omni fast");
  const bal = get("omni balanced");
  const max = get("omni max");
  const z19 = get("zstd -19");
  const x9e = get("xz -9e");
  const zp5 = get("zpaq -m5");
  const b11 = get("brotli -q 11");
  const mb = (m: Method, which: "c" | "d"): number => mbpc(total, which === "c" ? m.c_cpu : m.d_cpu);
  if (fast) {
    lines.push({
      target: "fast compresses ≥ 100 MB/s per core",
      measured: `${mb(fast, "c").toFixed(1)} MB/s`,
      pass: mb(fast, "c") >= 100,
    });
    lines.push({
      target: "fast decompresses ≥ 300 MB/s per core",
      measured: `${mb(fast, "d").toFixed(1)} MB/s`,
      pass: mb(fast, "d") >= 300,
    });
    lines.push({
      target: `fast smaller than zstd -19${need("zstd -19")}`,
      measured: `${fast.bytes} vs ${z19?.bytes ?? "–"} B`,
      pass: !!z19 && fast.bytes < z19.bytes,
    });
  }
  if (bal) {
    lines.push({
      target: "balanced decompresses ≥ 100 MB/s per core",
      measured: `${mb(bal, "d").toFixed(1)} MB/s`,
      pass: mb(bal, "d") >= 100,
    });
    lines.push({
      target: "balanced compresses in ≤ ¼ of max's CPU",
      measured: max
        ? `${bal.c_cpu.toFixed(2)} vs ${max.c_cpu.toFixed(2)} CPU-s (${(bal.c_cpu / max.c_cpu).toFixed(3)})`
        : "max not run",
      pass: !!max && bal.c_cpu <= max.c_cpu / 4,
    });
    lines.push({
      target: `balanced smaller than xz -9e${need("xz -9e")}`,
      measured: `${bal.bytes} vs ${x9e?.bytes ?? "–"} B`,
      pass: !!x9e && bal.bytes < x9e.bytes,
    });
  }
  if (max) {
    lines.push({
      target: `max ≤ 0.93 × zpaq -m5's bytes${need("zpaq -m5")}`,
      measured: zp5 ? `${max.bytes} vs ${zp5.bytes} B (${(max.bytes / zp5.bytes).toFixed(4)})` : "–",
      pass: !!zp5 && max.bytes <= 0.93 * zp5.bytes,
    });
    lines.push({
      target: "max compresses in less CPU than zpaq -m5",
      measured: zp5 ? `${max.c_cpu.toFixed(2)} vs ${zp5.c_cpu.toFixed(2)} CPU-s` : "–",
      pass: !!zp5 && max.c_cpu < zp5.c_cpu,
    });
    lines.push({
      target: "max compresses in no more wall time than brotli -q 11 (single thread)",
      measured: b11 ? `${max.c_wall.toFixed(2)} vs ${b11.c_wall.toFixed(2)} s` : "–",
      pass: !!b11 && max.c_wall <= b11.c_wall,
    });
    lines.push({
      target: "max decompresses ≥ 1 MB/s per core",
      measured: `${mb(max, "d").toFixed(2)} MB/s`,
      pass: mb(max, "d") >= 1,
    });
    lines.push({
      target: "max peak RSS ≤ 300 MB",
      measured: `${(max.peak_rss / 1e6).toFixed(0)} MB`,
      pass: max.peak_rss <= 300e6,
    });
  }
  for (const level of ["balanced", "max"] as const) {
    if (!get(`omni ${level}`) || !b11 || !x9e) continue;
    const over = rows.filter(
      (r) => r.cells[`omni ${level}`]!.bytes > Math.min(r.cells["brotli -q 11"]!.bytes, r.cells["xz -9e"]!.bytes) + 16,
    );
    lines.push({
      target: `no file at ${level} larger than min(brotli -q 11, xz -9e) + 16 B`,
      measured: over.length
        ? `${over.length} files: ${over
            .slice(0, 8)
            .map(
              (r) =>
                `${r.path} ${r.cells[`omni ${level}`]!.bytes} vs ${Math.min(r.cells["brotli -q 11"]!.bytes, r.cells["xz -9e"]!.bytes)}`,
            )
            .join("; ")}${over.length > 8 ? " …" : ""}`
        : `all ${rows.length} files`,
      pass: over.length === 0,
    });
  }
  if (max && zp5) {
    const over = rows.filter((r) => r.cells["omni max"]!.bytes > 1.03 * r.cells["zpaq -m5"]!.bytes);
    lines.push({
      target: "no file at max more than 3 % larger than zpaq -m5",
      measured: over.length
        ? `${over.length} files: ${over
            .slice(0, 8)
            .map((r) => `${r.path} ${r.cells["omni max"]!.bytes} vs ${r.cells["zpaq -m5"]!.bytes}`)
            .join("; ")}${over.length > 8 ? " …" : ""}`
        : `all ${rows.length} files`,
      pass: over.length === 0,
    });
  }
  for (const s of speedup) {
    const allc = s.cores[s.cores.length - 1]!;
    lines.push({
      target: `${s.level} uses every core on ≥ 8 MB (speed-up with ${allc.cores} cores > 1.3)`,
      measured: s.cores.map((c) => `${c.cores}: ${c.wall_s} s ×${c.speedup}`).join(", "),
      pass: allc.cores === 1 || allc.speedup > 1.3,
    });
  }
  const failed = lines.filter((l) => !l.pass).map((l) => l.target);
  // per-folder sizes of the omni levels and the reference peers
  const refs = [...omni.map((m) => m.name), "zstd -19", "brotli -q 11", "xz -9e", "bzip3", "zpaq -m5"].filter((n) =>
    get(n),
  );
  const folders = [...new Set(rows.map((r) => r.folder))].sort().map((f) => {
    const rs = rows.filter((r) => r.folder === f);
    return {
      folder: f,
      files: rs.length,
      bytes: rs.reduce((s, r) => s + r.bytes, 0),
      sizes: Object.fromEntries(refs.map((n) => [n, rs.reduce((s, r) => s + (r.cells[n]?.bytes ?? 0), 0)])),
    };
  });
  return {
    meta: {
      date: new Date().toISOString(),
      node: process.version,
      cpu: os.cpus()[0]?.model ?? "unknown",
      cores: os.availableParallelism(),
      loadavg_at_end: os.loadavg().map((x) => round(x, 2)),
      codec_version: CODEC_VERSION,
      tools: toolVersions(),
      missing_peers: missing,
      args: {
        quick: args.quick,
        levels: args.levels,
        seed: args.seed,
        system: args.system,
        dirs: args.dirs.map((d) => path.relative(REPO, d) || "."),
      },
      files: rows.length,
      bytes: total,
      wall_s: round(wall, 1),
      failures,
    },
    methods: methods.map((m) => ({
      ...m,
      c_cpu: round(m.c_cpu, 3),
      d_cpu: round(m.d_cpu, 3),
      c_wall: round(m.c_wall, 3),
      d_wall: round(m.d_wall, 3),
      c_mb_s_core: round(mbpc(total, m.c_cpu), 2),
      d_mb_s_core: round(mbpc(total, m.d_cpu), 2),
      ratio: round(total / Math.max(1, m.bytes), 4),
      frontier: frontier.includes(m.name),
    })),
    frontier,
    check: { pass: failed.length === 0, lines, failed },
    speedup,
    folders,
    files: rows,
  };
}

function toolVersions(): Record<string, string> {
  const v: Record<string, string> = {};
  const first = (cmd: string, a: string[]): string => {
    try {
      return execFileSync(cmd, a, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
        .split("\n")[0]!
        .trim();
    } catch (e) {
      const out = (e as { stdout?: string; stderr?: string }).stdout || (e as { stderr?: string }).stderr || "";
      return (
        out
          .split("\n")
          .find((l) => l.trim())
          ?.trim() ?? "missing"
      );
    }
  };
  v.gzip = first("gzip", ["--version"]);
  v.zstd = first("zstd", ["--version"]);
  v.brotli = first("brotli", ["--version"]);
  v.xz = first("xz", ["--version"]);
  v.bzip3 = first("bzip3", ["--version"]);
  v.zpaq = existsSync("/usr/bin/zpaq") || haveTool("zpaq") ? first("sh", ["-c", "zpaq 2>&1 | head -1"]) : "missing";
  return v;
}

type Report = ReturnType<typeof summarize>;

const fmtB = (n: number): string => n.toLocaleString("en");

function terminal(r: Report): string {
  const L: string[] = [];
  L.push(`\nFrontier (total bytes against compress CPU; ${fmtB(r.meta.bytes)} B in ${r.meta.files} files):`);
  for (const name of r.frontier) {
    const m = r.methods.find((x) => x.name === name)!;
    L.push(`  ${name.padEnd(18)} ${fmtB(m.bytes).padStart(14)} B  ${m.c_cpu.toFixed(2).padStart(8)} CPU-s`);
  }
  L.push("\nChecks:");
  for (const l of r.check.lines) L.push(`  ${l.pass ? "PASS" : "FAIL"}  ${l.target}: ${l.measured}`);
  if (r.meta.missing_peers.length) L.push(`  missing peers: ${r.meta.missing_peers.join(", ")}`);
  return `${L.join("\n")}\n`;
}

function markdown(r: Report): string {
  const L: string[] = [];
  L.push(`# Codec frontier${r.meta.args.quick ? " (quick subset)" : ""}`);
  L.push("");
  L.push(
    `Generated by \`npm run bench:codec${r.meta.args.quick ? " -- --quick" : ""}\` on ${r.meta.date} — Node ${r.meta.node}, ${r.meta.cpu} (${r.meta.cores} cores shared with other work, load average at end ${r.meta.loadavg_at_end.join(" / ")}), ${versionText(r.meta.codec_version)}. Corpus: ${r.meta.args.dirs.join(", ")}${r.meta.args.system ? ` plus machine files (seed ${r.meta.args.seed})` : ""}${r.meta.args.quick ? " (quick: per folder its largest file ≤ 1 MB, else a 512 KB head)" : ""}; ${r.meta.files} files, ${fmtB(r.meta.bytes)} bytes; wall time ${r.meta.wall_s} s; round-trip failures: ${r.meta.failures}.`,
  );
  L.push("");
  L.push(
    `Peers: ${Object.entries(r.meta.tools)
      .map(([k, v]) => `${k} (${v})`)
      .join(", ")}${r.meta.missing_peers.length ? `; missing: ${r.meta.missing_peers.join(", ")}` : ""}.`,
  );
  L.push("");
  L.push(
    "CPU seconds are user + system time: for a peer, its command-line tool's rusage (one process per file, as a user runs it, through `/usr/bin/time`); for omni, `process.cpuUsage()` of one child process per level around each call, which includes its worker threads (the process start is not counted; the child runs the codec bundled into one JavaScript file, as `labphi` and the suite worker do, not through tsx). MB/s per core = input MB (10^6 B) / CPU seconds. Peak RSS: the largest process of the setting.",
  );
  L.push("");
  L.push("## Checks");
  L.push("");
  L.push("| target | measured | |");
  L.push("|---|---|---|");
  for (const l of r.check.lines) L.push(`| ${l.target} | ${l.measured} | ${l.pass ? "met" : "**not met**"} |`);
  L.push("");
  L.push("## Frontier (total bytes against compress CPU)");
  L.push("");
  L.push(
    "| setting | bytes | ratio | compress CPU-s | MB/s per core | decompress CPU-s | MB/s per core | peak RSS MB |",
  );
  L.push("|---|---:|---:|---:|---:|---:|---:|---:|");
  for (const name of r.frontier) {
    const m = r.methods.find((x) => x.name === name)!;
    L.push(
      `| ${m.kind === "omni" ? `**${m.name}**` : m.name} | ${fmtB(m.bytes)} | ${m.ratio.toFixed(3)} | ${m.c_cpu.toFixed(2)} | ${m.c_mb_s_core.toFixed(1)} | ${m.d_cpu.toFixed(2)} | ${m.d_mb_s_core.toFixed(1)} | ${(m.peak_rss / 1e6).toFixed(0)} |`,
    );
  }
  L.push("");
  if (r.speedup.length) {
    L.push("## Speed-up on one input ≥ 8 MB (wall seconds of one compress under `taskset`)");
    L.push("");
    L.push("| level | bytes | cores: wall s (speed-up) |");
    L.push("|---|---:|---|");
    for (const s of r.speedup)
      L.push(
        `| ${s.level} | ${fmtB(s.bytes)} | ${s.cores.map((c) => `${c.cores}: ${c.wall_s} s (×${c.speedup}, ${c.cpu_s} CPU-s)`).join("; ")} |`,
      );
    L.push("");
  }
  L.push("## Every setting");
  L.push("");
  L.push(
    "| setting | bytes | compress CPU-s | c MB/s/core | c wall s | decompress CPU-s | d MB/s/core | peak RSS MB | frontier |",
  );
  L.push("|---|---:|---:|---:|---:|---:|---:|---:|---|");
  for (const m of r.methods)
    L.push(
      `| ${m.kind === "omni" ? `**${m.name}**` : m.name} | ${fmtB(m.bytes)} | ${m.c_cpu.toFixed(2)} | ${m.c_mb_s_core.toFixed(1)} | ${m.c_wall.toFixed(2)} | ${m.d_cpu.toFixed(2)} | ${m.d_mb_s_core.toFixed(1)} | ${(m.peak_rss / 1e6).toFixed(0)} | ${m.frontier ? "yes" : ""} |`,
    );
  L.push("");
  const refs = Object.keys(r.folders[0]?.sizes ?? {});
  L.push("## Per folder (bytes)");
  L.push("");
  L.push(`| folder | files | bytes | ${refs.join(" | ")} |`);
  L.push(`|---|---:|---:|${refs.map(() => "---:").join("|")}|`);
  for (const f of r.folders)
    L.push(`| ${f.folder} | ${f.files} | ${fmtB(f.bytes)} | ${refs.map((n) => fmtB(f.sizes[n]!)).join(" | ")} |`);
  L.push("");
  L.push("## Per file (bytes)");
  L.push("");
  L.push(`| file | detected | bytes | ${refs.join(" | ")} | max chamber |`);
  L.push(`|---|---|---:|${refs.map(() => "---:").join("|")}|---|`);
  for (const f of r.files)
    L.push(
      `| ${f.path} | ${f.detected} | ${fmtB(f.bytes)} | ${refs.map((n) => (f.cells[n] ? fmtB(f.cells[n]!.bytes) : "–")).join(" | ")} | ${f.cells["omni max"]?.chamber ?? ""} |`,
    );
  L.push("");
  return `${L.join("\n")}\n`;
}

await main();
