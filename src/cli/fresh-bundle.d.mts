/** The bundle of `entry` without rebuilding it while its sources (or `part`'s) are unchanged (fresh-bundle.mjs). */
export function freshBundle(
  entry: URL,
  build: (entry: URL) => Promise<string | undefined>,
  part?: string,
): Promise<string | undefined>;
/** The bundle URL the manifest `file` names when every input (of `part`) still matches, else undefined. */
export function current(file: string, entryHref: string, part?: string): string | undefined;
/** Runs a CommonJS script bundle through node:vm with V8's code cache (see fresh-bundle.mjs). */
export function loadScript(url: string): { exports: Record<string, unknown>; saveCache(): void };
