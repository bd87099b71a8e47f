// Builds the human pages' front-end (issue #13): the TypeScript entries under web/src and the one
// stylesheet web/styles/site.css, bundled by esbuild into hashed files with a manifest.
// Plain JavaScript so that `npm run build` and the CLI launcher run it before any TypeScript loader.
//
//   node src/web/build.mjs            build when stale, print where
//   node src/web/build.mjs --force    build even when up to date
//
// Output: <out>/<source hash>/manifest.json and <out>/<source hash>/assets/<name>-<hash>.{js,css}.
// <out> is dist/web under the package root (or a temporary folder when that is read-only). The
// source hash covers every file under web/, this file and the versions of the bundled packages, so
// a changed source means a new folder: `ensureWebAssets()` (called by the service at start) builds
// when the folder for the current sources is missing. Builds go to a staging folder renamed into
// place, so processes starting at once (tests, several services) never see half a build.
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const PACKAGE_ROOT = path.resolve(HERE, "../..");
export const WEB_SOURCE = path.join(PACKAGE_ROOT, "web");
/** Bundled into the browser code: their versions are part of the source hash. */
const BUNDLED_PACKAGES = ["tus-js-client"];
/** Built folders kept besides the current one (older ones are removed). */
const KEEP = 3;

function walk(dir, out = []) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "node_modules") walk(p, out);
    } else out.push(p);
  }
  return out;
}

function packageVersion(name) {
  try {
    return JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, "node_modules", name, "package.json"), "utf8")).version;
  } catch {
    return "missing";
  }
}

/** Hash of everything the build reads. */
export function sourceHash() {
  const h = createHash("sha256");
  for (const file of walk(WEB_SOURCE)) {
    h.update(path.relative(WEB_SOURCE, file)).update("\0").update(fs.readFileSync(file)).update("\0");
  }
  h.update(fs.readFileSync(fileURLToPath(import.meta.url)));
  for (const name of BUNDLED_PACKAGES) h.update(`${name}@${packageVersion(name)}\0`);
  return h.digest("hex").slice(0, 16);
}

function writable(dir) {
  try {
    fs.mkdirSync(dir, { recursive: true });
    fs.accessSync(dir, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** Where builds go: WEB_ASSETS_DIR, else dist/web, else a temporary folder. */
export function outputRoot() {
  if (process.env.WEB_ASSETS_DIR) return path.resolve(process.env.WEB_ASSETS_DIR);
  const dist = path.join(PACKAGE_ROOT, "dist", "web");
  return writable(dist) ? dist : path.join(os.tmpdir(), "labphi-web");
}

/** The entries: every web/src/*.ts that is not a shared module (those start with "_" or are in lib/). */
function entries() {
  const src = path.join(WEB_SOURCE, "src");
  const points = {};
  for (const name of fs.readdirSync(src).sort()) {
    if (name.endsWith(".ts") && !name.startsWith("_") && !name.endsWith(".d.ts")) {
      points[name.slice(0, -3)] = path.join(src, name);
    }
  }
  points.site = path.join(WEB_SOURCE, "styles", "site.css");
  return points;
}

/**
 * Builds into a staging folder and renames it to <root>/<hash>. Returns that folder.
 * @param {{ root?: string, hash?: string, minify?: boolean }} [options]
 */
export async function buildWebAssets(options = {}) {
  const esbuild = await import("esbuild");
  const root = options.root ?? outputRoot();
  const hash = options.hash ?? sourceHash();
  const target = path.join(root, hash);
  const staging = path.join(root, `.staging-${process.pid}-${randomBytes(4).toString("hex")}`);
  fs.mkdirSync(staging, { recursive: true });
  try {
    const result = await esbuild.build({
      entryPoints: entries(),
      bundle: true,
      format: "esm",
      splitting: true,
      platform: "browser",
      target: ["es2022", "chrome110", "firefox110", "safari16"],
      outdir: path.join(staging, "assets"),
      entryNames: "[name]-[hash]",
      chunkNames: "chunk-[hash]",
      assetNames: "[name]-[hash]",
      minify: options.minify ?? true,
      sourcemap: "linked",
      metafile: true,
      logLevel: "silent",
      tsconfig: path.join(WEB_SOURCE, "tsconfig.json"),
      legalComments: "linked",
    });
    /** manifest: logical name (jobs.js, site.css) → file name under assets/ */
    const files = {};
    for (const [out, meta] of Object.entries(result.metafile.outputs)) {
      if (!meta.entryPoint) continue;
      const base = path.basename(out);
      const logical = `${base.replace(/-[A-Z0-9]+(\.[a-z]+)$/i, "$1")}`;
      files[logical] = base;
    }
    fs.writeFileSync(
      path.join(staging, "manifest.json"),
      `${JSON.stringify({ source: hash, built_at: new Date().toISOString(), files }, null, 2)}\n`,
    );
    try {
      fs.renameSync(staging, target);
    } catch (err) {
      // another process finished the same build first: theirs is identical
      if (!["ENOTEMPTY", "EEXIST"].includes(err.code)) throw err;
      fs.rmSync(staging, { recursive: true, force: true });
    }
  } catch (err) {
    fs.rmSync(staging, { recursive: true, force: true });
    throw err;
  }
  prune(root, hash);
  return target;
}

/** Removes all but the newest KEEP builds (and staging folders older than an hour). */
function prune(root, current) {
  let dirs;
  try {
    dirs = fs.readdirSync(root, { withFileTypes: true }).filter((d) => d.isDirectory());
  } catch {
    return;
  }
  const aged = dirs
    .map((d) => ({ name: d.name, mtime: fs.statSync(path.join(root, d.name)).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime);
  let kept = 0;
  for (const d of aged) {
    const p = path.join(root, d.name);
    if (d.name.startsWith(".staging-")) {
      if (Date.now() - d.mtime > 3_600_000) fs.rmSync(p, { recursive: true, force: true });
    } else if (d.name === current || kept++ < KEEP) {
      // keep
    } else fs.rmSync(p, { recursive: true, force: true });
  }
}

/** The built folder for the current sources, building it first when missing. */
export async function ensureWebAssets() {
  const root = outputRoot();
  const hash = sourceHash();
  const target = path.join(root, hash);
  if (fs.existsSync(path.join(target, "manifest.json"))) return target;
  return buildWebAssets({ root, hash });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const force = process.argv.includes("--force");
  const started = Date.now();
  const dir = force ? await buildWebAssets() : await ensureWebAssets();
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, "manifest.json"), "utf8"));
  console.log(`web assets: ${dir} (${Object.keys(manifest.files).length} entries, ${Date.now() - started} ms)`);
  for (const [name, file] of Object.entries(manifest.files)) console.log(`  ${name} → assets/${file}`);
}
