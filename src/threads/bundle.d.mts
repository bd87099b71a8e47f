/** The file URL of `entry` (a `.ts` module) bundled into one JavaScript file, or undefined (see bundle.mjs). */
export function bundleModule(entry: URL): Promise<string | undefined>;
