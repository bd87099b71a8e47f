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

async function bundle(entry) {
  const source = fileURLToPath(entry);
  if (!source.endsWith(".ts")) return entry.href;
  const dir = cacheDir(source);
  if (!dir) return undefined;
  const esbuild = await import("esbuild").catch(() => undefined);
  if (!esbuild) return undefined;
  const result = await esbuild.build({
    entryPoints: [source],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
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
  const code = result.outputFiles[0]?.contents;
  if (!code) return undefined;
  const hash = createHash("sha256").update(code).digest("hex").slice(0, 16);
  const file = path.join(dir, `${path.basename(source, ".ts")}-${hash}.mjs`);
  try {
    await fs.access(file);
  } catch {
    await fs.mkdir(dir, { recursive: true });
    const tmp = `${file}.${randomBytes(6).toString("hex")}.tmp`;
    await fs.writeFile(tmp, code, { mode: 0o644 });
    await fs.rename(tmp, file);
    await prune(dir, path.basename(source, ".ts"), file);
  }
  return pathToFileURL(file).href;
}

/**
 * Removes the entry's earlier bundles once they are a day old (a process started before a change
 * may still start threads from its own; nothing runs a day-old bundle it has not already loaded).
 */
async function prune(dir, name, keep) {
  const dayAgo = Date.now() - 86_400_000;
  for (const other of await fs.readdir(dir)) {
    const file = path.join(dir, other);
    if (file === keep || !other.startsWith(`${name}-`) || !other.endsWith(".mjs")) continue;
    const stat = await fs.stat(file).catch(() => undefined);
    if (stat && stat.mtimeMs < dayAgo) await fs.rm(file, { force: true });
  }
}

/** `node_modules/.cache/labphi` of the project whose `src/` holds `source` */
function cacheDir(source) {
  let dir = path.dirname(source);
  for (;;) {
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    if (path.basename(dir) === "src") return path.join(parent, "node_modules", ".cache", "labphi");
    dir = parent;
  }
}
