#!/usr/bin/env node
// Launcher for the labphi CLI. Runs the CLI bundled into one JavaScript file (src/threads/bundle.mjs:
// esbuild, cached under node_modules/.cache/labphi) in this process, which starts faster and keeps
// long-running commands such as `labphi worker` smaller; if bundling is not possible, it runs the
// TypeScript entry through tsx in a child process, as before.
//
// A start costs little (issue #24 item 3): the bundle is reused without rebuilding it while its
// sources are unchanged (src/cli/fresh-bundle.mjs compares sizes and mtimes), V8's compile cache
// keeps the parsed code between starts where Node has one (22.1 and later), and the codec commands
// load only the codec (src/cli/main.ts).
import module from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { freshBundle } from "../src/cli/fresh-bundle.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const entry = path.join(here, "..", "src", "cli", "main.ts");
const argv = process.argv.slice(2);

if (typeof module.enableCompileCache === "function" && !process.env.LABPHI_NO_BUNDLE) {
  try {
    module.enableCompileCache(path.join(here, "..", "node_modules", ".cache", "labphi", "v8"));
  } catch {
    // no cache directory (a read-only tree): compile as usual
  }
}

// bundle.mjs (esbuild, hashing) is loaded only when the bundle must be built again
const build = async (url) => (await import("../src/threads/bundle.mjs")).bundleModule(url);
// a command in a chunk of its own (compress, decompress, profile, bench) checks only its own sources
const part = argv[0] && /^[a-z-]+$/.test(argv[0]) ? `src/cli/commands/${argv[0]}.ts` : undefined;
const bundled = process.env.LABPHI_NO_BUNDLE ? undefined : await freshBundle(pathToFileURL(entry), build, part);
if (bundled) {
  const { runCli } = await import(bundled);
  // process.stdin/stdout/stderr are created on first use: `labphi compress FILE -o OUT -q` never
  // opens them (a stdin stream alone loads the net and tty modules)
  process.exitCode = await runCli(argv, {
    get stdin() {
      return process.stdin;
    },
    get stdout() {
      return process.stdout;
    },
    get stderr() {
      return process.stderr;
    },
    env: process.env,
  });
} else {
  const { spawn } = await import("node:child_process");
  const require = module.createRequire(import.meta.url);
  const child = spawn(process.execPath, [require.resolve("tsx/cli"), entry, ...argv], { stdio: "inherit" });
  // A signal sent to this launcher alone (a process manager's SIGTERM) is passed on, so the
  // command stops gracefully and no child is left serving after the launcher is gone.
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) {
    process.on(signal, () => child.kill(signal));
  }
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 128 + (signal === "SIGKILL" ? 9 : 15) : 1)));
}
