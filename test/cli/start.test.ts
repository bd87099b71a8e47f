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
