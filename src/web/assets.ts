import fs from "node:fs";
import path from "node:path";

/**
 * The built front-end (src/web/build.mjs): where the hashed files are and the URL of each logical
 * name (`site.css`, `jobs.js`). Loaded once per process; the service builds the assets at start
 * when the sources changed or nothing was built yet.
 */
export interface WebAssets {
  /** folder served at /assets/ */
  dir: string;
  /** `/assets/<name>-<hash>.<ext>` for a logical name; throws for an unknown one (a typo in a page). */
  url(name: string): string;
  /** the source hash the build was made from */
  source: string;
}

export const ASSETS_PREFIX = "/assets/";

let loaded: WebAssets | undefined;
let loading: Promise<WebAssets> | undefined;

function read(dir: string): WebAssets {
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, "manifest.json"), "utf8")) as {
    source: string;
    files: Record<string, string>;
  };
  return {
    dir: path.join(dir, "assets"),
    source: manifest.source,
    url(name) {
      const file = manifest.files[name];
      if (!file) throw new Error(`web asset ${name} is not in the build (${Object.keys(manifest.files).join(", ")})`);
      return `${ASSETS_PREFIX}${file}`;
    },
  };
}

/** Builds when stale (at start), then keeps the result for the life of the process. */
export async function loadWebAssets(): Promise<WebAssets> {
  if (loaded) return loaded;
  // Imported from its own file at run time (not bundled into the launcher's bundle): the builder
  // finds web/ next to itself through import.meta.url.
  const builder = new URL("./build.mjs", import.meta.url).href;
  loading ??= (import(builder) as Promise<typeof import("./build.mjs")>)
    .then((m) => m.ensureWebAssets())
    .then((dir) => {
      loaded = read(dir);
      return loaded;
    });
  return loading;
}

/** The assets loaded by `loadWebAssets()` (pages render only after the app is built). */
export function webAssets(): WebAssets {
  if (!loaded) throw new Error("web assets are not loaded: call loadWebAssets() while building the app");
  return loaded;
}
