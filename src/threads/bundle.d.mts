/** The file URL of `entry` (a `.ts` module) bundled into one JavaScript file, or undefined (see bundle.mjs). */
export function bundleModule(entry: URL): Promise<string | undefined>;
/** The file URL of `entry` bundled into one CommonJS script (for node:vm with V8's code cache), or undefined. */
export function bundleScript(entry: URL): Promise<string | undefined>;
