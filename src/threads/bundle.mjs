// One plain JavaScript file for a TypeScript entry (issue #10: worker memory). Plain JavaScript
// itself, so that the CLI launcher (bin/labphi.mjs) can use it before any TypeScript loader runs.
//
// The service runs its TypeScript through tsx. A worker thread that loads TypeScript through tsx
// gets tsx's loader hooks, their own thread and a transform cache: measured, two piscina threads
// coding 4 MiB units grew a process by 177 MB that way, and by 101 MB when they imported the same
// code bundled into one JavaScript file; a `labphi worker` process idles at 95 MB on a bundle and
// at 127 MB plus tsx's 33 MB on the sources. So an entry is bundled once per process with esbuild
// (the transformer tsx itself uses) into `node_modules/.cache/labphi/`, where the bundle's bare
// imports (piscina, zstd-napi, …) resolve to the project's packages as before. Each source file
// keeps its own `import.meta.url`, so files found next to it (the codec's WebAssembly model, worker
// scripts) are found where they are. The file name carries the bundle's hash: a changed source
// gets a new file, an unchanged one is reused. Resolves to undefined when bundling is not possible
// (esbuild missing, a read-only tree): the caller then runs its TypeScript entry through tsx.
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const cache = new Map();

/** @param {URL} entry a `.ts` module @returns {Promise<string | undefined>} the bundle's file URL */
export function bundleModule(entry) {
  let found = cache.get(entry.href);
  if (!found) {
    found = bundle(entry).catch(() => undefined);
    cache.set(entry.href, found);
  }
  return found;
}

/**
 * The entry and everything it imports as one CommonJS script (no code splitting: a dynamic
 * import() of a project module becomes a function that initializes it on first call, so a module is
 * still evaluated only when it runs). Node compiles a script through node:vm with V8's code cache
 * (src/cli/fresh-bundle.cjs loadScript), which Node 20 has no way to do for ES modules: the CLI's codec commands
 * start from it (issue #24 item 3). Undefined when the entry cannot be a script (e.g. it uses
 * top-level await) or bundling is not possible.
 * @param {URL} entry a `.ts` module @returns {Promise<string | undefined>} the script's file URL
 */
export function bundleScript(entry) {
  const key = `script:${entry.href}`;
  let found = cache.get(key);
  if (!found) {
    found = bundle(entry, "script").catch(() => undefined);
    cache.set(key, found);
  }
  return found;
}

async function bundle(entry, kind = "module") {
  const source = fileURLToPath(entry);
  if (!source.endsWith(".ts")) return entry.href;
  const dir = cacheDir(source);
  if (!dir) return undefined;
  const esbuild = await import("esbuild").catch(() => undefined);
  if (!esbuild) return undefined;
  const name = path.basename(source, ".ts");
  // Code splitting: a dynamic import() stays a separate file loaded on demand, with the packages it
  // imports; one file would hoist every package import to the top and load them all at start.
  const staging = path.join(dir, `.build-${randomBytes(6).toString("hex")}`);
  const script = kind === "script";
  const ext = script ? ".cjs" : ".mjs";
  const result = await esbuild.build({
    entryPoints: { [name]: source },
    bundle: true,
    splitting: !script,
    platform: "node",
    format: script ? "cjs" : "esm",
    target: "node20",
    packages: "external",
    outdir: staging,
    outExtension: { ".js": ext },
    // a script has no import(): Node 20's node:vm loses its dynamic-import callback with a code
    // cache, and the callback is experimental (a warning on stderr); esbuild turns every import()
    // into a require() of that module instead (packages and node: built-ins alike)
    ...(script ? { supported: { "dynamic-import": false } } : {}),
    chunkNames: "chunk-[hash]",
    write: false,
    logLevel: "silent",
    plugins: [
      {
        name: "own-import-meta-url",
        setup(build) {
          build.onLoad({ filter: /\.ts$/ }, async (args) => {
            const text = await fs.readFile(args.path, "utf8");
            const url = JSON.stringify(pathToFileURL(args.path).href);
            return { contents: text.replaceAll("import.meta.url", url), loader: "ts" };
          });
        },
      },
    ],
  });
  const files = [...result.outputFiles].sort((x, y) => (x.path < y.path ? -1 : 1));
  if (!files.some((f) => path.basename(f.path) === `${name}${ext}`)) return undefined;
  const hash = createHash("sha256");
  for (const f of files) hash.update(path.relative(staging, f.path)).update("\0").update(f.contents);
  const target = path.join(dir, `${name}-${hash.digest("hex").slice(0, 16)}`);
  const main = path.join(target, `${name}${ext}`);
  try {
    await fs.access(main);
  } catch {
    // written whole into a staging folder, then renamed into place: a reader sees all files or none
    for (const f of files) {
      await fs.mkdir(path.dirname(f.path), { recursive: true });
      await fs.writeFile(f.path, f.contents, { mode: 0o644 });
    }
    try {
      await fs.rename(staging, target);
    } catch (err) {
      // another process put the same bundle in place first
      if (!["EEXIST", "ENOTEMPTY"].includes(err?.code)) throw err;
    }
    await prune(dir, name, target);
  }
  await fs.rm(staging, { recursive: true, force: true });
  return pathToFileURL(main).href;
}

/**
 * Removes the entry's earlier bundles once they are a day old (a process started before a change
 * may still start threads from its own; nothing runs a day-old bundle it has not already loaded).
 */
async function prune(dir, name, keep) {
  const dayAgo = Date.now() - 86_400_000;
  for (const other of await fs.readdir(dir)) {
    const entry = path.join(dir, other);
    if (entry === keep || !/^[0-9a-f]{16}$/.test(other.slice(name.length + 1)) || !other.startsWith(`${name}-`)) {
      continue;
    }
    const stat = await fs.stat(entry).catch(() => undefined);
    if (stat && stat.mtimeMs < dayAgo) await fs.rm(entry, { recursive: true, force: true });
  }
}

/** `node_modules/.cache/labphi` of the project whose `src/` (or `bench/`) holds `source` */
function cacheDir(source) {
  let dir = path.dirname(source);
  for (;;) {
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    if (["src", "bench"].includes(path.basename(dir))) return path.join(parent, "node_modules", ".cache", "labphi");
    dir = parent;
  }
}
