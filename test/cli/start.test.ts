import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import * as esbuild from "esbuild";
import { describe, expect, it } from "vitest";
import { freshBundle } from "../../src/cli/fresh-bundle.mjs";

/**
 * Issue #24 item 3, "a CLI that starts at once": what `labphi compress` loads is checked here by
 * structure, not by timing (bench/cli-start.ts measures the CPU seconds). The CLI entry is
 * bundled the way bin/labphi.mjs runs it (src/threads/bundle.mjs: esbuild, code splitting, packages
 * external), and the modules a codec command loads are the entry's static imports plus the chunk
 * of that command's dynamic import, with their static imports in turn.
 */

const root = path.resolve(import.meta.dirname, "../..");

/** packages of the service, the payments and the storage: none belongs in a codec command's start */
const HEAVY = [
  "fastify",
  "@fastify/",
  "fastify-type-provider-zod",
  "kysely",
  "better-sqlite3",
  "pg",
  "bullmq",
  "ioredis",
  "viem",
  "@x402/",
  "x402",
  "@solana/",
  "@aws-sdk/",
  "stripe",
  "@modelcontextprotocol/",
  "pino",
  "zod",
];

interface Graph {
  /** bare package imports reached */
  packages: Set<string>;
  /** source files (relative to the project) reached */
  sources: Set<string>;
}

let built: esbuild.Metafile | undefined;
async function metafile(): Promise<esbuild.Metafile> {
  if (built) return built;
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-start-"));
  try {
    const r = await esbuild.build({
      absWorkingDir: root,
      entryPoints: { main: "src/cli/main.ts" },
      bundle: true,
      splitting: true,
      platform: "node",
      format: "esm",
      target: "node20",
      packages: "external",
      outdir,
      outExtension: { ".js": ".mjs" },
      write: false,
      metafile: true,
      logLevel: "silent",
    });
    built = r.metafile;
    return built;
  } finally {
    fs.rmSync(outdir, { recursive: true, force: true });
  }
}

/** the modules loaded to run `labphi <command>` (the entry, then the command's own chunk) */
async function graphOf(command: string): Promise<Graph> {
  const meta = await metafile();
  const outputs = meta.outputs;
  const main = Object.keys(outputs).find((o) => outputs[o]?.entryPoint === "src/cli/main.ts");
  const commandChunk = Object.keys(outputs).find((o) => outputs[o]?.entryPoint === `src/cli/commands/${command}.ts`);
  if (!main) throw new Error("no output for src/cli/main.ts");
  const g: Graph = { packages: new Set(), sources: new Set() };
  // a command the entry imports statically has no chunk of its own: then the entry holds it
  const todo = [main, ...(commandChunk ? [commandChunk] : [])];
  const seen = new Set<string>();
  while (todo.length) {
    const o = todo.pop() as string;
    if (seen.has(o)) continue;
    seen.add(o);
    const out = outputs[o];
    if (!out) continue;
    for (const src of Object.keys(out.inputs)) g.sources.add(src);
    for (const imp of out.imports) {
      if (imp.kind !== "import-statement" && imp.kind !== "require-call") continue;
      if (imp.external) g.packages.add(imp.path);
      else todo.push(imp.path);
    }
  }
  return g;
}

const heavyIn = (g: Graph) =>
  [...g.packages].filter((p) =>
    HEAVY.some((h) => (h.endsWith("/") ? p.startsWith(h) : p === h || p.startsWith(`${h}/`))),
  );

describe("labphi codec commands start without the service", () => {
  it("the compress command's module graph holds no Fastify, Kysely, viem, x402, Solana, AWS SDK, zod…", async () => {
    const g = await graphOf("compress");
    expect(g.sources.has("src/cli/commands/compress.ts")).toBe(true);
    expect(g.sources.has("src/codec/api/compress.ts")).toBe(true);
    expect(heavyIn(g)).toEqual([]);
    // nor the service's own modules
    const service = [...g.sources].filter((s) => /^src\/(http|db|payments|jobs|engine|app|services|config)\b/.test(s));
    expect(service).toEqual([]);
  }, 60_000);

  it("neither do decompress, profile and bench", async () => {
    for (const command of ["decompress", "profile", "bench"]) {
      const g = await graphOf(command);
      expect(g.sources.has(`src/cli/commands/${command}.ts`)).toBe(true);
      expect(heavyIn(g), command).toEqual([]);
      // they decode in their own thread: the decode pool (worker threads) is for servers
      expect(g.sources.has("src/codec/decode-pool.ts"), command).toBe(command === "bench");
    }
  }, 60_000);
});

describe("freshBundle: the launcher reuses its bundle while the sources are unchanged", () => {
  it("builds once, then reuses the bundle without building; an edited source or a missing bundle builds again", async () => {
    const project = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-fresh-"));
    try {
      fs.mkdirSync(path.join(project, "src"));
      fs.writeFileSync(path.join(project, "src/entry.ts"), 'import { n } from "./dep.js";\nexport const m = n + 1;\n');
      fs.writeFileSync(path.join(project, "src/dep.ts"), "export const n = 1;\n");
      const out = path.join(project, "bundle.mjs");
      let builds = 0;
      const build = async () => {
        builds++;
        fs.writeFileSync(out, `export const build = ${builds};\n`);
        return pathToFileURL(out).href;
      };
      const entry = pathToFileURL(path.join(project, "src/entry.ts"));
      expect(await freshBundle(entry, build)).toBe(pathToFileURL(out).href);
      expect(builds).toBe(1);
      const manifests = fs.readdirSync(path.join(project, "node_modules/.cache/labphi"));
      expect(manifests).toEqual([expect.stringMatching(/^entry-[0-9a-f]{12}\.inputs\.json$/)]);
      // unchanged: no build
      expect(await freshBundle(entry, build)).toBe(pathToFileURL(out).href);
      expect(await freshBundle(entry, build)).toBe(pathToFileURL(out).href);
      expect(builds).toBe(1);
      // a source the entry imports changes (size and mtime): built again
      fs.writeFileSync(path.join(project, "src/dep.ts"), "export const n = 12;\n");
      await freshBundle(entry, build);
      expect(builds).toBe(2);
      await freshBundle(entry, build);
      expect(builds).toBe(2);
      // same size, later mtime: built again
      const later = new Date(Date.now() + 5000);
      fs.utimesSync(path.join(project, "src/entry.ts"), later, later);
      await freshBundle(entry, build);
      expect(builds).toBe(3);
      // the bundle itself is gone: built again
      fs.rmSync(out);
      await freshBundle(entry, build);
      expect(builds).toBe(4);
      // a build that fails leaves no manifest behind it: the next start tries again
      fs.writeFileSync(path.join(project, "src/dep.ts"), "export const n = 123;\n");
      expect(await freshBundle(entry, async () => undefined)).toBeUndefined();
      await freshBundle(entry, build);
      expect(builds).toBe(5);
    } finally {
      fs.rmSync(project, { recursive: true, force: true });
    }
  }, 60_000);
});

describe("freshBundle with a part: a command checks only the sources it runs", () => {
  it("an edit outside the part's modules keeps its bundle; an edit inside, or no part, builds again", async () => {
    const project = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-fresh-part-"));
    try {
      const src = (name: string, text: string) => fs.writeFileSync(path.join(project, "src", name), text);
      fs.mkdirSync(path.join(project, "src"));
      src(
        "entry.ts",
        'import { n } from "./dep.js";\nexport const cmd = () => import("./cmd.js");\nexport const other = () => import("./other.js");\nexport const m = n;\n',
      );
      src("dep.ts", "export const n = 1;\n");
      src(
        "cmd.ts",
        'import { k } from "./cmd-dep.js";\nexport const run = () => import("./cmd-lazy.js").then((l) => l.x + k);\n',
      );
      src("cmd-dep.ts", "export const k = 2;\n");
      src("cmd-lazy.ts", "export const x = 3;\n");
      src("other.ts", "export const o = 4;\n");
      const out = path.join(project, "bundle.mjs");
      let builds = 0;
      const build = async () => {
        builds++;
        fs.writeFileSync(out, `export const build = ${builds};\n`);
        return pathToFileURL(out).href;
      };
      const entry = pathToFileURL(path.join(project, "src/entry.ts"));
      await freshBundle(entry, build, "src/cmd.ts");
      expect(builds).toBe(1);
      src("other.ts", "export const o = 44;\n");
      await freshBundle(entry, build, "src/cmd.ts"); // other.ts is not the command's
      expect(builds).toBe(1);
      await freshBundle(entry, build); // the whole entry: other.ts changed
      expect(builds).toBe(2);
      for (const [file, text] of [
        ["cmd-lazy.ts", "export const x = 33;\n"], // imported dynamically by the command: its own
        ["cmd-dep.ts", "export const k = 22;\n"],
        ["dep.ts", "export const n = 11;\n"], // the entry's static imports run before any command
        ["cmd.ts", "export const run = async () => 5;\n"],
      ] as const) {
        const before = builds;
        src(file, text);
        await freshBundle(entry, build, "src/cmd.ts");
        expect(builds, file).toBe(before + 1);
        await freshBundle(entry, build, "src/cmd.ts");
        expect(builds, file).toBe(before + 1);
      }
      // a part the manifest does not know checks everything
      src("other.ts", "export const o = 444;\n");
      await freshBundle(entry, build, "src/nothing.ts");
      expect(builds).toBe(7);
    } finally {
      fs.rmSync(project, { recursive: true, force: true });
    }
  }, 60_000);
});

describe("bin/labphi.mjs", () => {
  it("compresses FILE -o OUT and decompresses it back through the bundle (no stdin or stdout needed)", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-bin-"));
    try {
      const bin = path.join(root, "bin/labphi.mjs");
      const text = "start at once ".repeat(80);
      fs.writeFileSync(path.join(dir, "in.txt"), text);
      const run = (args: string[]) =>
        execFileSync(process.execPath, [bin, ...args], { stdio: ["ignore", "pipe", "pipe"] });
      run(["compress", path.join(dir, "in.txt"), "-o", path.join(dir, "in.phi"), "-q", "--level", "fast"]);
      run(["decompress", path.join(dir, "in.phi"), "-o", path.join(dir, "back.txt"), "-q"]);
      expect(fs.readFileSync(path.join(dir, "back.txt"), "utf8")).toBe(text);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

/**
 * What one `labphi compress` of a 1 KB file loads and starts, seen from inside a fresh process (a
 * preload records it at exit): the addons' native bindings only, not their JavaScript wrappers
 * (lzma-native's index.js pulls readable-stream, util and assert; zstd-napi's pulls assert and its
 * stream classes: src/codec/addons.ts), no worker thread (small inputs are coded in the calling
 * thread), and no WebAssembly compile at the levels whose chambers do not use the context-mixing
 * model. bench/cli-start.ts measures what this saves in CPU seconds.
 */
describe("labphi compress of 1 KB: what a fresh process loads and starts", () => {
  const PRELOAD = `
const fs = require("node:fs");
const wt = require("node:worker_threads");
const seen = { workers: 0, wasmCompiles: 0, scripts: [] };
const vm = require("node:vm");
const Script = vm.Script;
vm.Script = class extends Script {
  constructor(source, options) {
    super(source, options);
    seen.scripts.push({ file: options?.filename, cached: Boolean(options?.cachedData), rejected: this.cachedDataRejected === true });
  }
};
const Base = wt.Worker;
wt.Worker = class extends Base { constructor(...a) { super(...a); seen.workers++; } };
const W = globalThis.WebAssembly;
W.Module = new Proxy(W.Module, { construct(t, a, n) { seen.wasmCompiles++; return Reflect.construct(t, a, n); } });
for (const k of ["compile", "instantiate"]) { const f = W[k]; W[k] = function (...a) { seen.wasmCompiles++; return f.apply(this, a); }; }
process.on("exit", () => {
  seen.cjs = Object.keys(require.cache).filter((p) => p.includes("node_modules")).map((p) => p.slice(p.lastIndexOf("node_modules/") + 13));
  seen.builtins = process.moduleLoadList.filter((m) => m.startsWith("NativeModule ")).map((m) => m.slice(13));
  fs.writeFileSync(process.env.LABPHI_START_REPORT, JSON.stringify(seen));
});
`;

  interface Seen {
    workers: number;
    wasmCompiles: number;
    scripts: { file: string; cached: boolean; rejected: boolean }[];
    cjs: string[];
    builtins: string[];
  }

  /** the package's `bin`: what `labphi` runs */
  const BIN = path.join(
    root,
    (JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { bin: { labphi: string } }).bin.labphi,
  );

  /** `labphi compress` of 1 KB at `level` in a fresh process (`node -e 0` for level "node") */
  function run(level: string, bin = BIN): Seen {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-start-seen-"));
    try {
      fs.writeFileSync(path.join(dir, "preload.cjs"), PRELOAD);
      const input = path.join(dir, "in.txt");
      const words = ["level", "start", "compress", "chamber", "thread", "model", "bytes", "quick"];
      let text = "";
      for (let i = 0; text.length < 1024; i++) text += `${words[(i * 7 + (i >> 3)) % words.length]} `;
      fs.writeFileSync(input, text.slice(0, 1024));
      const report = path.join(dir, "seen.json");
      execFileSync(
        process.execPath,
        [
          "-r",
          path.join(dir, "preload.cjs"),
          ...(level === "node"
            ? ["-e", "0"]
            : [bin, "compress", input, "-o", path.join(dir, "out"), "-q", "--level", level]),
        ],
        { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, LABPHI_START_REPORT: report } },
      );
      return JSON.parse(fs.readFileSync(report, "utf8")) as Seen;
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  it("runs the codec commands from one CommonJS script, compiled from V8's code cache from the second start on", () => {
    // the first start builds the script if the sources changed and writes its code cache; a start
    // after it on the same script compiles from that cache (in a tree being edited meanwhile, a
    // start may rebuild the script: then the next pair counts)
    let seen = run("fast");
    for (let i = 0; i < 3; i++) {
      const next = run("fast");
      const same = next.scripts[0]?.file === seen.scripts[0]?.file;
      seen = next;
      if (same) break;
    }
    expect(seen.scripts).toEqual([{ file: expect.stringMatching(/codec\.cjs$/), cached: true, rejected: false }]);
    // and no import() in it: a script compiled from a code cache has no dynamic-import callback on Node 20
    expect(fs.readFileSync(seen.scripts[0]!.file, "utf8")).not.toMatch(/\bimport\(/);
  }, 120_000);

  it("the package's bin starts a codec command without Node's ES module loader (bin/labphi.mjs still works)", () => {
    expect(path.basename(BIN)).toBe("labphi.cjs");
    const esm = (seen: Seen) => seen.builtins.filter((m) => m.startsWith("internal/modules/esm/"));
    // whatever Node itself loads at start (newer releases may load more of it for require(esm))
    const own = new Set(esm(run("node")));
    expect(esm(run("fast")).filter((m) => !own.has(m))).toEqual([]);
    // the ES module launcher runs the same script; where Node does not load its ES module loader at
    // start (Node 20; 24 does), it loads it: what the CommonJS launcher saves
    const viaMjs = run("fast", path.join(root, "bin/labphi.mjs"));
    if (!own.has("internal/modules/esm/loader"))
      expect(esm(viaMjs).filter((m) => !own.has(m)).length).toBeGreaterThan(0);
    expect(viaMjs.scripts).toEqual([expect.objectContaining({ file: expect.stringMatching(/codec\.cjs$/) })]);
  }, 120_000);

  const WRAPPERS = ["lzma-native/index.js", "readable-stream/", "zstd-napi/dist/", "zstd-napi/index"];

  for (const level of ["fast", "balanced", "max"]) {
    it(`at ${level}: no addon wrapper, no worker thread${level === "max" ? ", the model compiled at most once" : ", no WebAssembly"}`, () => {
      const seen = run(level);
      expect(seen.cjs.filter((p) => WRAPPERS.some((w) => p.startsWith(w)))).toEqual([]);
      expect(seen.workers).toBe(0);
      expect(seen.wasmCompiles).toBeLessThanOrEqual(level === "max" ? 1 : 0);
      // nor Node's timing module (the global `performance` loads it on first use)
      expect(seen.builtins).not.toContain("perf_hooks");
    }, 120_000);
  }
});
