/**
 * Codec benchmark: omni (each level) against gzip-9, brotli-11 (node:zlib), zstd-19 (zstd-napi)
 * and xz-9 (lzma-native) on the same buffers in one process, with a byte-for-byte round-trip
 * check of every output.
 *
 *   npm run bench:codec [-- --quick] [--levels fast,balanced,max] [--out bench/results] [DIR…]
 *
 * Default corpus: ../shared/corpus relative to the repository. Writes codec.json and codec.md
 * (--quick writes codec-quick.json / codec-quick.md). Exit code 1 when any round trip fails.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import zlib from "node:zlib";
import { CODEC_VERSION, compressWithReport, decompress, LEVELS, type Level } from "../src/codec/index.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const require_ = (await import("node:module")).createRequire(import.meta.url);

interface Args {
  quick: boolean;
  levels: Level[];
  out: string;
  dirs: string[];
}
function parseArgs(argv: string[]): Args {
  const a: Args = { quick: false, levels: [...LEVELS], out: path.join(REPO, "bench/results"), dirs: [] };
  for (let i = 0; i < argv.length; i++) {
    const x = argv[i]!;
    if (x === "--quick") a.quick = true;
    else if (x === "--levels") a.levels = argv[++i]!.split(",") as Level[];
    else if (x === "--out") a.out = path.resolve(argv[++i]!);
    else if (x === "--help") {
      console.log("usage: npm run bench:codec -- [--quick] [--levels fast,balanced,max] [--out DIR] [DIR…]");
      process.exit(0);
    } else a.dirs.push(path.resolve(x));
  }
  for (const l of a.levels) if (!LEVELS.includes(l)) throw new Error(`unknown level ${l}`);
  if (a.dirs.length === 0) a.dirs.push(path.resolve(REPO, "../shared/corpus"));
  return a;
}

// ------------------------------------------------------------------ classes and targets

/** goal classes of compression-notes §6 (size vs brotli-11: must, stretch) */
const GOALS: Record<string, { must: number; stretch: number; note: string }> = {
  text: { must: 0.87, stretch: 0.8, note: "UTF-8 text & XML" },
  code: { must: 0.88, stretch: 0.82, note: "source code" },
  json: { must: 0.92, stretch: 0.82, note: "JSON" },
  csv: { must: 0.85, stretch: 0.7, note: "CSV time series" },
  float: { must: 0.88, stretch: 0.8, note: "float arrays" },
  int32: { must: 0.8, stretch: 0.72, note: "int32 arrays (without synth_uniform_random)" },
  binary: { must: 0.95, stretch: 0.88, note: "binary / executables" },
  compressed: { must: 1.0005, stretch: 1.0, note: "already compressed (≤ input + 0.05 %, ≤ brotli-11 + 16 B)" },
};
const TEXT_FILES = new Set([
  "bib",
  "book1",
  "book2",
  "news",
  "paper1",
  "paper2",
  "paper3",
  "paper4",
  "paper5",
  "paper6",
  "trans",
  "alice29.txt",
  "asyoulik.txt",
  "cp.html",
  "lcet10.txt",
  "plrabn12.txt",
  "xargs.1",
]);
const CODE_FILES = new Set(["progc", "progl", "progp", "fields.c", "grammar.lsp"]);
function goalClass(folder: string, name: string, detected: string): string {
  if (name === "synth_uniform_random.i32") return "compressed";
  if (folder === "text" || folder === "large") return "text";
  if (folder === "code") return "code";
  if (folder === "json") return "json";
  if (folder === "csv") return "csv";
  if (folder === "float64") return "float";
  if (folder === "int32") return "int32";
  if (folder === "binary") return "binary";
  if (folder === "compressed") return "compressed";
  if (folder === "calgary" || folder === "canterbury") {
    if (TEXT_FILES.has(name)) return "text";
    if (CODE_FILES.has(name)) return "code";
    return "binary";
  }
  // unseen corpora: by detection
  const map: Record<string, string> = {
    text: "text",
    csv: "csv",
    json: "json",
    float64: "float",
    float32: "float",
    int32: "int32",
    timestamps: "int32",
    high_entropy: "compressed",
    binary: "binary",
    empty: "binary",
  };
  return map[detected] ?? "binary";
}

/** source entropy of derive.py's seeded generators (bytes), for the synthetic int32 files */
function entropyBound(name: string, data: Uint8Array): number | null {
  const n = data.length / 4;
  const log2 = Math.log2;
  switch (name) {
    case "synth_random_walk.i32":
      return (n * log2(201)) / 8;
    case "synth_small_range_0_999.i32":
      return (n * log2(1000)) / 8;
    case "synth_sorted_docids.i32": {
      const p = 1 / 8;
      const h = (-(1 - p) * log2(1 - p) - p * log2(p)) / p;
      return (n * h) / 8;
    }
    case "synth_uniform_random.i32":
      return n * 4;
    case "synth_runs.i32": {
      // runs of U{0..49} values with U{1..64} lengths: ≈ (log2 50 + log2 64) bits per observed run
      const v = new Int32Array(data.buffer, data.byteOffset, n);
      let runs = 1;
      for (let i = 1; i < n; i++) if (v[i] !== v[i - 1]) runs++;
      return (runs * (log2(50) + log2(64))) / 8;
    }
    default:
      return null;
  }
}

// ------------------------------------------------------------------ peers

type Zstd = { compress(b: Buffer, o: { compressionLevel: number }): Buffer; decompress(b: Buffer): Buffer };
type Lzma = {
  compress(b: Buffer, o: unknown, cb: (r: Buffer) => void): void;
  decompress(b: Buffer, o: unknown, cb: (r: Buffer) => void): void;
  versionString(): string;
};
const zstd = require_("zstd-napi") as Zstd;
const lzma = require_("lzma-native") as Lzma;

interface Peer {
  name: string;
  c: (b: Buffer) => Promise<Buffer>;
  d: (b: Buffer) => Promise<Buffer>;
}
const PEERS: Peer[] = [
  { name: "gzip-9", c: async (b) => zlib.gzipSync(b, { level: 9 }), d: async (b) => zlib.gunzipSync(b) },
  {
    name: "brotli-11",
    c: async (b) =>
      zlib.brotliCompressSync(b, {
        params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: b.length },
      }),
    d: async (b) => zlib.brotliDecompressSync(b),
  },
  { name: "zstd-19", c: async (b) => zstd.compress(b, { compressionLevel: 19 }), d: async (b) => zstd.decompress(b) },
  {
    name: "xz-9",
    c: (b) => new Promise((res) => lzma.compress(b, { preset: 9 }, res)),
    d: (b) => new Promise((res) => lzma.decompress(b, {}, res)),
  },
];

// ------------------------------------------------------------------ run

interface Cell {
  bytes: number;
  c_ms: number;
  d_ms: number;
  ok: boolean;
  chamber?: string;
}
interface FileRow {
  path: string;
  folder: string;
  class: string;
  detected: string;
  bytes: number;
  sha256: string;
  bound: number | null;
  omni: Partial<Record<Level, Cell>>;
  peers: Record<string, Cell>;
}

const ms = (): number => Number(process.hrtime.bigint()) / 1e6;
const same = (a: Uint8Array, b: Uint8Array): boolean => Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;

/** time a fast operation: repeat until ≥ 200 ms (max 20 runs) and take the mean */
async function timeRepeat<T>(fn: () => Promise<T>, quick: boolean): Promise<{ v: T; t: number }> {
  const t0 = ms();
  const v = await fn();
  let t = ms() - t0;
  if (quick || t > 200) return { v, t };
  let runs = 1;
  const start = ms();
  while (ms() - start < 200 && runs < 20) {
    await fn();
    runs++;
  }
  t = (t + (ms() - start)) / runs;
  return { v, t };
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

function quickPick(files: string[], root: string): string[] {
  // one small file (≤ 64 KB) per folder
  const seen = new Set<string>();
  const out: string[] = [];
  for (const f of files) {
    const folder = path.relative(root, f).split(path.sep)[0]!;
    if (seen.has(folder)) continue;
    if (statSync(f).size <= 64 * 1024) {
      seen.add(folder);
      out.push(f);
    }
  }
  return out;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const t0 = ms();
  const rows: FileRow[] = [];
  const inputs = new Map<string, Buffer>();
  for (const dir of args.dirs) {
    let files = listFiles(dir);
    if (args.quick) files = quickPick(files, dir);
    for (const f of files) {
      const rel = path.relative(dir, f);
      const folder = rel.includes(path.sep) ? rel.split(path.sep)[0]! : path.basename(dir);
      const data = readFileSync(f);
      const name = path.basename(f);
      const key = `${path.basename(dir)}/${rel}`;
      inputs.set(key, data);
      rows.push({
        path: key,
        folder,
        class: "",
        detected: "",
        bytes: data.length,
        sha256: createHash("sha256").update(data).digest("hex").slice(0, 16),
        bound: entropyBound(name, data),
        omni: {},
        peers: {},
      });
    }
  }
  const total = rows.reduce((s, r) => s + r.bytes, 0);
  process.stderr.write(`bench:codec — ${rows.length} files, ${(total / 1e6).toFixed(1)} MB, levels ${args.levels}\n`);
  // JIT warm-up on a small mixed input
  const warm = Buffer.from('warm-up text 12345 {"a":[1,2,3]} '.repeat(200));
  for (const level of args.levels) await decompress((await compressWithReport(warm, { level })).container);

  const memory: Record<string, number> = {};
  let failures = 0;
  for (const level of args.levels) {
    for (const row of rows) {
      const data = inputs.get(row.path)!;
      const tc = ms();
      const rep = await compressWithReport(data, { level });
      const c_ms = ms() - tc;
      let back: Uint8Array = new Uint8Array(0);
      let d_ms = 0;
      try {
        ({ v: back, t: d_ms } = await timeRepeat(() => decompress(rep.container), args.quick));
      } catch (e) {
        process.stderr.write(`  omni-${level} ${row.path}: decompress failed: ${String(e)}\n`);
      }
      const ok = same(back, data);
      if (!ok) failures++;
      row.omni[level] = { bytes: rep.container.length, c_ms, d_ms, ok, chamber: rep.chamber };
      row.detected ||= rep.data_class;
      row.class ||= goalClass(row.folder, path.basename(row.path), rep.data_class);
      process.stderr.write(
        `  omni-${level} ${row.path}: ${row.bytes} → ${rep.container.length} (${rep.chamber}) ${ok ? "ok" : "ROUND TRIP FAILED"}\n`,
      );
    }
    memory[`omni-${level}`] = process.resourceUsage().maxRSS * 1024;
  }
  for (const peer of PEERS) {
    for (const row of rows) {
      const data = inputs.get(row.path)!;
      const { v: out, t: c_ms } = await timeRepeat(() => peer.c(data), true);
      const { v: back, t: d_ms } = await timeRepeat(() => peer.d(out), args.quick);
      const ok = same(back, data);
      if (!ok) failures++;
      row.peers[peer.name] = { bytes: out.length, c_ms, d_ms, ok };
    }
    process.stderr.write(`  ${peer.name} done\n`);
  }
  memory.peers = process.resourceUsage().maxRSS * 1024;
  const report = summarize(rows, args, memory, ms() - t0, failures);
  mkdirSync(args.out, { recursive: true });
  const base = args.quick ? "codec-quick" : "codec";
  writeFileSync(path.join(args.out, `${base}.json`), `${JSON.stringify(report, null, 1)}\n`);
  writeFileSync(path.join(args.out, `${base}.md`), markdown(report));
  process.stderr.write(`wrote ${path.join(args.out, base)}.{json,md} in ${((ms() - t0) / 1000).toFixed(1)} s\n`);
  if (failures) {
    process.stderr.write(`${failures} ROUND TRIP FAILURES\n`);
    process.exit(1);
  }
}

// ------------------------------------------------------------------ summary

interface Agg {
  name: string;
  files: number;
  bytes: number;
  sizes: Record<string, number>;
  c_ms: Record<string, number>;
  d_ms: Record<string, number>;
  omni_vs_brotli: number;
  geomean_ratio: Record<string, number>;
}

function aggregate(name: string, rows: FileRow[], methods: string[]): Agg {
  const a: Agg = {
    name,
    files: rows.length,
    bytes: 0,
    sizes: {},
    c_ms: {},
    d_ms: {},
    omni_vs_brotli: 0,
    geomean_ratio: {},
  };
  for (const m of methods) {
    a.sizes[m] = 0;
    a.c_ms[m] = 0;
    a.d_ms[m] = 0;
    a.geomean_ratio[m] = 0;
  }
  for (const r of rows) {
    a.bytes += r.bytes;
    for (const m of methods) {
      const cell = cellOf(r, m);
      if (!cell) continue;
      a.sizes[m]! += cell.bytes;
      a.c_ms[m]! += cell.c_ms;
      a.d_ms[m]! += cell.d_ms;
      a.geomean_ratio[m]! += Math.log(r.bytes / Math.max(1, cell.bytes));
    }
  }
  for (const m of methods) a.geomean_ratio[m] = round(Math.exp(a.geomean_ratio[m]! / Math.max(1, rows.length)), 3);
  const best = methods.includes("omni-max") ? "omni-max" : methods[0]!;
  a.omni_vs_brotli = round(a.sizes[best]! / Math.max(1, a.sizes["brotli-11"]!), 4);
  return a;
}

function cellOf(r: FileRow, m: string): Cell | undefined {
  return m.startsWith("omni-") ? r.omni[m.slice(5) as Level] : r.peers[m];
}
const round = (x: number, d: number): number => Math.round(x * 10 ** d) / 10 ** d;

function summarize(rows: FileRow[], args: Args, memory: Record<string, number>, wall: number, failures: number) {
  const methods = [...args.levels.map((l) => `omni-${l}`), ...PEERS.map((p) => p.name)];
  const top = args.levels.includes("max") ? "omni-max" : `omni-${args.levels[args.levels.length - 1]}`;
  const classes = [...new Set(rows.map((r) => r.class))].sort().map((c) => {
    const agg = aggregate(
      c,
      rows.filter((r) => r.class === c),
      methods,
    );
    const goal = GOALS[c];
    return { ...agg, must: goal?.must ?? null, stretch: goal?.stretch ?? null, note: goal?.note ?? "" };
  });
  const folders = [...new Set(rows.map((r) => r.folder))].sort().map((f) =>
    aggregate(
      f,
      rows.filter((r) => r.folder === f),
      methods,
    ),
  );
  const all = aggregate("all", rows, methods);
  const violations = rows
    .filter((r) => {
      const o = cellOf(r, top)!.bytes;
      return o > Math.min(r.peers["brotli-11"]!.bytes, r.peers["xz-9"]!.bytes) + 16;
    })
    .map((r) => ({
      path: r.path,
      omni: cellOf(r, top)!.bytes,
      brotli: r.peers["brotli-11"]!.bytes,
      xz: r.peers["xz-9"]!.bytes,
    }));
  const bounds = rows
    .filter((r) => r.bound !== null)
    .map((r) => ({
      path: r.path,
      bound: Math.round(r.bound!),
      omni: cellOf(r, top)!.bytes,
      over: round(cellOf(r, top)!.bytes / r.bound! - 1, 4),
    }));
  const zlibVersions = { zlib: process.versions.zlib ?? "", brotli: process.versions.brotli ?? "" };
  return {
    meta: {
      date: new Date().toISOString(),
      node: process.version,
      cpu: os.cpus()[0]?.model ?? "unknown",
      cores: os.cpus().length,
      loadavg_at_end: os.loadavg().map((x) => round(x, 2)),
      codec_version: CODEC_VERSION,
      peers: { ...zlibVersions, zstd: "zstd-napi (bundled zstd)", xz: `lzma-native (liblzma ${lzma.versionString()})` },
      args: { quick: args.quick, levels: args.levels, dirs: args.dirs.map((d) => path.relative(REPO, d) || ".") },
      wall_s: round(wall / 1000, 1),
      failures,
      peak_rss_bytes_after: memory,
      headline: top,
    },
    total: all,
    classes,
    folders,
    checks: {
      never_larger_than_min_brotli_xz_plus_16: { pass: violations.length === 0, violations },
      whole_corpus_vs_brotli: {
        value: all.omni_vs_brotli,
        must: 0.87,
        stretch: 0.79,
        pass: all.omni_vs_brotli <= 0.87,
      },
      entropy_bounds: { within_5pct: bounds.every((b) => b.over <= 0.05), files: bounds },
      numeric_decode: numericDecode(rows),
      compress_time_vs_brotli: {
        omni_ms: round(all.c_ms[top]!, 0),
        brotli_ms: round(all.c_ms["brotli-11"]!, 0),
        pass: all.c_ms[top]! <= all.c_ms["brotli-11"]!,
      },
    },
    files: rows,
  };
}

const NUMERIC_CHAMBERS = new Set(["zrw", "float", "delta"]);
const NUMERIC_DECODE_MBPS = 100;

/** decode speed of every file whose max-level container uses a numeric chamber (target ≥ 100 MB/s) */
function numericDecode(rows: FileRow[]) {
  const files = rows
    .filter((r) => NUMERIC_CHAMBERS.has(r.omni.max?.chamber ?? ""))
    .map((r) => ({
      path: r.path,
      chamber: r.omni.max!.chamber,
      mbps: round(r.bytes / 1e3 / r.omni.max!.d_ms, 1),
    }));
  const min = files.length ? Math.min(...files.map((f) => f.mbps)) : null;
  return { target_mbps: NUMERIC_DECODE_MBPS, min_mbps: min, pass: min === null || min >= NUMERIC_DECODE_MBPS, files };
}

type Report = ReturnType<typeof summarize>;

function mbps(bytes: number, t: number): string {
  return t > 0 ? (bytes / 1e3 / t).toFixed(t > 0 && bytes / 1e3 / t < 10 ? 2 : 1) : "–";
}

function markdown(r: Report): string {
  const methods = Object.keys(r.total.sizes);
  const top = r.meta.headline;
  const L: string[] = [];
  L.push(`# Codec benchmark${r.meta.args.quick ? " (quick subset)" : ""}`);
  L.push("");
  L.push(
    `Generated by \`npm run bench:codec${r.meta.args.quick ? " -- --quick" : ""}\` on ${r.meta.date} — Node ${r.meta.node}, ${r.meta.cpu} (${r.meta.cores} cores, load average at end ${r.meta.loadavg_at_end.join(" / ")}), codec ${r.meta.codec_version}; peers: zlib ${r.meta.peers.zlib}, brotli ${r.meta.peers.brotli}, ${r.meta.peers.zstd}, ${r.meta.peers.xz}. Corpus: ${r.meta.args.dirs.join(", ")}; ${r.total.files} files, ${r.total.bytes.toLocaleString("en")} bytes; wall time ${r.meta.wall_s} s; round-trip failures: ${r.meta.failures}.`,
  );
  L.push("");
  L.push(
    "Sizes include every header, table and checksum. Speeds are input MB (10^6 B) per second of wall time around the call only (machine shared with other work, so speeds are indicative).",
  );
  L.push("");
  L.push("## Per goal class (size vs brotli-11, lower is better)");
  L.push("");
  L.push(`| class | files | bytes | ${methods.join(" | ")} | ${top} / brotli-11 | must | stretch | verdict |`);
  L.push(`|---|---:|---:|${methods.map(() => "---:").join("|")}|---:|---:|---:|---|`);
  for (const c of r.classes) {
    const verdict =
      c.must === null
        ? ""
        : c.omni_vs_brotli <= (c.stretch ?? 0)
          ? "stretch met"
          : c.omni_vs_brotli <= c.must
            ? "must met"
            : "**missed**";
    L.push(
      `| ${c.name} | ${c.files} | ${c.bytes.toLocaleString("en")} | ${methods.map((m) => c.sizes[m]!.toLocaleString("en")).join(" | ")} | ${c.omni_vs_brotli.toFixed(3)} | ${c.must ?? ""} | ${c.stretch ?? ""} | ${verdict} |`,
    );
  }
  const t = r.total;
  L.push(
    `| **all** | ${t.files} | ${t.bytes.toLocaleString("en")} | ${methods.map((m) => `**${t.sizes[m]!.toLocaleString("en")}**`).join(" | ")} | **${t.omni_vs_brotli.toFixed(3)}** | 0.87 | 0.79 | ${t.omni_vs_brotli <= 0.79 ? "stretch met" : t.omni_vs_brotli <= 0.87 ? "must met" : "**missed**"} |`,
  );
  L.push("");
  L.push("## Speed per goal class (compress / decompress MB/s)");
  L.push("");
  L.push(`| class | ${methods.join(" | ")} |`);
  L.push(`|---|${methods.map(() => "---:").join("|")}|`);
  for (const c of [...r.classes, { ...t, name: "**all**" }]) {
    L.push(
      `| ${c.name} | ${methods.map((m) => `${mbps(c.bytes, c.c_ms[m]!)} / ${mbps(c.bytes, c.d_ms[m]!)}`).join(" | ")} |`,
    );
  }
  L.push("");
  L.push("## Per folder");
  L.push("");
  L.push(`| folder | files | bytes | ${methods.join(" | ")} | ${top} / brotli-11 |`);
  L.push(`|---|---:|---:|${methods.map(() => "---:").join("|")}|---:|`);
  for (const f of r.folders) {
    L.push(
      `| ${f.name} | ${f.files} | ${f.bytes.toLocaleString("en")} | ${methods.map((m) => f.sizes[m]!.toLocaleString("en")).join(" | ")} | ${f.omni_vs_brotli.toFixed(3)} |`,
    );
  }
  L.push("");
  L.push("## Checks");
  L.push("");
  const ck = r.checks;
  L.push(
    `- Whole corpus ${top} / brotli-11 = **${ck.whole_corpus_vs_brotli.value.toFixed(4)}** (must ≤ 0.87, stretch ≤ 0.79): ${ck.whole_corpus_vs_brotli.pass ? "met" : "**missed**"}.`,
  );
  L.push(
    `- Never larger than min(brotli-11, xz-9) + 16 B on any file: ${ck.never_larger_than_min_brotli_xz_plus_16.pass ? "held" : `**${ck.never_larger_than_min_brotli_xz_plus_16.violations.length} violations**: ${ck.never_larger_than_min_brotli_xz_plus_16.violations.map((v) => `${v.path} (${v.omni} vs brotli ${v.brotli}, xz ${v.xz})`).join("; ")}`}.`,
  );
  L.push(
    `- Numeric chambers (zrw, float, delta) decode at ≥ ${ck.numeric_decode.target_mbps} MB/s on every file they won: slowest ${ck.numeric_decode.min_mbps ?? "–"} MB/s over ${ck.numeric_decode.files.length} files — ${ck.numeric_decode.pass ? "met" : "**missed**"}.`,
    `- Total compress time ${top} ${(ck.compress_time_vs_brotli.omni_ms / 1000).toFixed(1)} s vs brotli-11 ${(ck.compress_time_vs_brotli.brotli_ms / 1000).toFixed(1)} s: ${ck.compress_time_vs_brotli.pass ? "met" : "**missed**"}.`,
  );
  if (ck.entropy_bounds.files.length) {
    L.push(`- Synthetic int32 files vs their source entropy (${top}):`);
    L.push("");
    L.push("| file | entropy bound B | omni B | over bound |");
    L.push("|---|---:|---:|---:|");
    for (const b of ck.entropy_bounds.files)
      L.push(
        `| ${b.path} | ${b.bound.toLocaleString("en")} | ${b.omni.toLocaleString("en")} | ${(b.over * 100).toFixed(2)} % |`,
      );
  }
  L.push("");
  L.push(
    `- Peak RSS of the bench process after each pass (bytes, cumulative maximum): ${Object.entries(
      r.meta.peak_rss_bytes_after,
    )
      .map(([k, v]) => `${k} ${(v / 2 ** 20).toFixed(0)} MiB`)
      .join(", ")}.`,
  );
  L.push("");
  L.push("## Per file");
  L.push("");
  L.push(
    `| file | class | detected | bytes | ${methods.join(" | ")} | ${top} chamber | ${top} / brotli-11 | ${top} c / d MB/s |`,
  );
  L.push(`|---|---|---|---:|${methods.map(() => "---:").join("|")}|---|---:|---:|`);
  for (const f of r.files) {
    const o = cellOf(f, top)!;
    L.push(
      `| ${f.path} | ${f.class} | ${f.detected} | ${f.bytes.toLocaleString("en")} | ${methods.map((m) => cellOf(f, m)!.bytes.toLocaleString("en")).join(" | ")} | ${o.chamber} | ${(o.bytes / f.peers["brotli-11"]!.bytes).toFixed(3)} | ${mbps(f.bytes, o.c_ms)} / ${mbps(f.bytes, o.d_ms)} |`,
    );
  }
  L.push("");
  return `${L.join("\n")}\n`;
}

await main();
