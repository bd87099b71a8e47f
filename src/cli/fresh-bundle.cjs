// Start the CLI's bundle without rebuilding it (issue #24 item 3: a CLI that starts at once).
//
// src/threads/bundle.mjs knows whether a bundle is current only by building it again with esbuild
// and hashing the output: about 0.4 CPU-s, paid by every `labphi` call. This module keeps a small
// manifest beside the bundles (node_modules/.cache/labphi/<entry>-<hash>.inputs.json): the
// bundle's URL and the size and modification time of every source file that went into it (from
// esbuild's metafile), of bundle.mjs and of esbuild's package.json. A start whose inputs all still
// match runs that bundle after a few hundred stat calls (2.5 ms here); any difference (an edited,
// moved or deleted source) rebuilds it through bundle.mjs and writes a new manifest. Plain
// JavaScript, as it runs before any TypeScript loader; CommonJS, so that bin/labphi.cjs starts a
// codec command without Node's ES module loader (about 5 ms of CPU per start on Node 20).
// fresh-bundle.mjs re-exports it for ES modules.
"use strict";
const fs = require("node:fs");
const { createRequire } = require("node:module");
const path = require("node:path");
const { fileURLToPath } = require("node:url");
const vm = require("node:vm");

const FORMAT = 2;
const BUNDLER = path.join(__dirname, "..", "threads", "bundle.mjs");

/**
 * The bundle of `entry`: the one the manifest names when every input is unchanged, else
 * `build(entry)` (bundle.mjs's bundleModule), recorded for the next start. With `part` (a module
 * the entry imports dynamically, e.g. "src/cli/commands/compress.ts"), only the inputs that part
 * runs are compared: the entry's static imports and everything the part imports, statically or
 * not. An edit elsewhere cannot change what that part runs, so its chunks in the bundle are current.
 * @param {URL} entry a `.ts` module under a `src/` tree
 * @param {(entry: URL) => Promise<string | undefined>} build
 * @param {string} [part] project-relative path of a module the entry imports dynamically
 * @returns {Promise<string | undefined>}
 */
async function freshBundle(entry, build, part) {
  const source = fileURLToPath(entry);
  const root = projectOf(source);
  if (!root) return build(entry);
  // one manifest per entry path: two checkouts sharing one node_modules keep theirs apart
  const name = `${path.basename(source, ".ts")}-${fnv1a(entry.href)}.inputs.json`;
  const file = path.join(root, "node_modules", ".cache", "labphi", name);
  const known = current(file, entry.href, part);
  if (known) return known;
  // the inputs are listed (and stamped) before the build, so an edit made meanwhile shows next time
  const listed = await inputsOf(source, root).catch(() => undefined);
  // bundle.mjs and the esbuild release shape the bundle too
  const esbuildPackage = path.join(root, "node_modules", "esbuild", "package.json");
  const always = [BUNDLER, ...(fs.existsSync(esbuildPackage) ? [esbuildPackage] : [])];
  let manifest;
  if (listed) {
    const all = [...listed.all, ...always];
    const index = new Map(all.map((p, i) => [p, i]));
    const parts = {};
    for (const [key, files] of Object.entries(listed.parts))
      parts[key] = [...files, ...always].map((p) => index.get(p)).filter((i) => i !== undefined);
    manifest = { format: FORMAT, entry: entry.href, inputs: stampAll(all), parts };
  }
  const url = await build(entry);
  if (url && manifest) save(file, { ...manifest, bundle: url });
  return url;
}

/**
 * The bundle URL when the manifest matches the size and mtime of every input (of `part`'s inputs
 * when the manifest lists that part), else undefined.
 */
function current(file, entryHref, part) {
  try {
    const m = JSON.parse(fs.readFileSync(file, "utf8"));
    if (m?.format !== FORMAT || m.entry !== entryHref || typeof m.bundle !== "string") return undefined;
    if (!Array.isArray(m.inputs) || m.inputs.length === 0) return undefined;
    fs.statSync(fileURLToPath(m.bundle));
    const subset = part !== undefined && Object.hasOwn(m.parts ?? {}, part) ? m.parts[part] : undefined;
    for (const input of subset ? subset.map((i) => m.inputs[i]) : m.inputs) {
      const [p, size, mtime] = input;
      const s = fs.statSync(p);
      if (s.size !== size || s.mtimeMs !== mtime) return undefined;
    }
    return m.bundle;
  } catch {
    return undefined;
  }
}

/**
 * The project's source files esbuild bundles for `source` (absolute paths), and for each module
 * `source` imports dynamically the files that module runs (see freshBundle's `part`).
 */
async function inputsOf(source, root) {
  const esbuild = await import("esbuild");
  const r = await esbuild.build({
    absWorkingDir: root,
    entryPoints: [source],
    bundle: true,
    splitting: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    outdir: path.join(root, "node_modules", ".cache", "labphi", ".inputs"),
    write: false,
    metafile: true,
    logLevel: "silent",
  });
  const abs = (p) => path.resolve(root, p);
  const outputs = r.metafile.outputs;
  const mainKey = path.relative(root, source).split(path.sep).join("/");
  const main = Object.keys(outputs).find((o) => outputs[o].entryPoint === mainKey);
  /** source files of the outputs reached from `start` (dynamic imports followed when `dynamic`) */
  const reach = (start, dynamic, into) => {
    const todo = [start];
    const seen = new Set();
    while (todo.length) {
      const o = todo.pop();
      if (seen.has(o) || !outputs[o]) continue;
      seen.add(o);
      for (const p of Object.keys(outputs[o].inputs)) into.add(abs(p));
      for (const imp of outputs[o].imports)
        if (!imp.external && (dynamic || imp.kind !== "dynamic-import")) todo.push(imp.path);
    }
    return into;
  };
  const parts = {};
  if (main) {
    const base = reach(main, false, new Set());
    for (const [o, out] of Object.entries(outputs))
      if (out.entryPoint && o !== main) parts[out.entryPoint] = reach(o, true, new Set(base));
  }
  return { all: Object.keys(r.metafile.inputs).map(abs), parts };
}

function stampAll(files) {
  return files.map((p) => {
    const s = fs.statSync(p);
    return [p, s.size, s.mtimeMs];
  });
}

function save(file, manifest) {
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(manifest));
    fs.renameSync(tmp, file); // whole or not at all, whichever process writes last
  } catch {
    // a read-only tree: the next start checks by building again, as before
  }
}

/** the project whose `src/` holds `source` (bundle.mjs keeps its bundles there) */
function projectOf(source) {
  let dir = path.dirname(source);
  for (;;) {
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    if (path.basename(dir) === "src") return parent;
    dir = parent;
  }
}

/** 12 hex digits of FNV-1a (64-bit) of `text`: a name, not a secret (node:crypto costs a start ~5 ms) */
function fnv1a(text) {
  let h = 0xcbf29ce484222325n;
  for (let i = 0; i < text.length; i++) h = ((h ^ BigInt(text.charCodeAt(i))) * 0x100000001b3n) & 0xffffffffffffffffn;
  return h.toString(16).padStart(16, "0").slice(0, 12);
}

// Running a CommonJS script bundle (src/threads/bundle.mjs bundleScript) with V8's code cache
// (issue #24 item 3: a CLI that starts at once). Node 20 compiles every ES module from its source at
// every start (its module compile cache arrives in 22.1); a script compiled through node:vm can be
// given the code V8 produced for it last time, kept beside it in `<script>.v8-cache`, and then skips
// parsing and compiling what that run compiled. The cache is written once, after the first run that
// had none (or whose cache V8 rejected: another Node release), so it holds the functions that run
// compiled. Here rather than in a module of its own: one module less to load at every start.

/**
 * The script's exports, and `saveCache()` to call once the work is done. The script must not use
 * import() (bundle.mjs turns each into a require()): a script compiled from a code cache has no
 * dynamic-import callback on Node 20.
 * @param {string} url file URL of the script
 * @returns {{ exports: Record<string, unknown>, saveCache(): void }}
 */
function loadScript(url) {
  const file = fileURLToPath(url);
  const cacheFile = `${file}.v8-cache`;
  let cachedData;
  try {
    cachedData = fs.readFileSync(cacheFile);
  } catch {
    // none yet
  }
  // the CommonJS wrapper on the source's first line: stack traces keep the bundle's line numbers
  const source = `(function (exports, require, module, __filename, __dirname) { ${fs.readFileSync(file, "utf8")}\n})`;
  const script = new vm.Script(source, { filename: file, cachedData });
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(file), module, file, path.dirname(file));
  const stale = cachedData === undefined || script.cachedDataRejected === true;
  return {
    exports: module.exports,
    saveCache() {
      if (!stale) return;
      try {
        const tmp = `${cacheFile}.${process.pid}.tmp`;
        fs.writeFileSync(tmp, script.createCachedData());
        fs.renameSync(tmp, cacheFile); // whole or not at all
      } catch {
        // a read-only tree: compile from the source next time too
      }
    },
  };
}

exports.freshBundle = freshBundle;
exports.current = current;
exports.loadScript = loadScript;
