#!/usr/bin/env node
// Launcher for the labphi CLI. Runs the CLI bundled into one JavaScript file (src/threads/bundle.mjs:
// esbuild, cached under node_modules/.cache/labphi) in this process, which starts faster and keeps
// long-running commands such as `labphi worker` smaller; if bundling is not possible, it runs the
// TypeScript entry through tsx in a child process, as before.
//
// A start costs little (issue #24 item 3): the bundle is reused without rebuilding it while its
// sources are unchanged (src/cli/fresh-bundle.cjs compares sizes and mtimes); the codec commands
// load only the codec (src/cli/codec.ts), from one CommonJS script that V8 compiles from its code
// cache (fresh-bundle.cjs loadScript; Node 20 has no compile cache for ES modules), and the other
// commands from the ES module bundle, which V8's compile cache keeps where Node has one (22.1+).
//
// CommonJS (the package's `bin`): a codec command then starts without Node's ES module loader,
// about 5 ms of CPU per start on Node 20 (bench/cli-start.ts); bin/labphi.mjs imports this file.
"use strict";
const module_ = require("node:module");
const path = require("node:path");
const { pathToFileURL } = require("node:url");
const { freshBundle, loadScript } = require("../src/cli/fresh-bundle.cjs");

const here = __dirname;
const entry = path.join(here, "..", "src", "cli", "main.ts");
const argv = process.argv.slice(2);

if (typeof module_.enableCompileCache === "function" && !process.env.LABPHI_NO_BUNDLE) {
  try {
    module_.enableCompileCache(path.join(here, "..", "node_modules", ".cache", "labphi", "v8"));
  } catch {
    // no cache directory (a read-only tree): compile as usual
  }
}

// process.stdin/stdout/stderr are created on first use: `labphi compress FILE -o OUT -q` never
// opens them (a stdin stream alone loads the net and tty modules)
const io = {
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
};

async function main() {
  // a command in a chunk of its own (compress, decompress, profile, bench) checks only its own sources
  const part = argv[0] && /^[a-z-]+$/.test(argv[0]) ? `src/cli/commands/${argv[0]}.ts` : undefined;
  const useBundle = !process.env.LABPHI_NO_BUNDLE;

  // The codec commands run from one CommonJS script compiled with V8's code cache (loadScript):
  // on Node 20 that halves what their start costs beyond Node's own (bench/cli-start.ts). Any other
  // command, or a script that cannot be built or loaded here, takes the ES module bundle below.
  let done = false;
  if (useBundle && ["compress", "decompress", "profile", "bench"].includes(argv[0])) {
    const codec = pathToFileURL(path.join(here, "..", "src", "cli", "codec.ts"));
    const buildScript = async (url) => (await import("../src/threads/bundle.mjs")).bundleScript(url);
    const script = await freshBundle(codec, buildScript, part);
    let loaded;
    try {
      loaded = script ? loadScript(script) : undefined;
    } catch {
      loaded = undefined; // e.g. a script an older build left behind: the module bundle runs instead
    }
    if (loaded && typeof loaded.exports.runCodecCli === "function") {
      process.exitCode = await loaded.exports.runCodecCli(argv, io);
      loaded.saveCache();
      done = true;
    }
  }

  // bundle.mjs (esbuild, hashing) is loaded only when the bundle must be built again
  const build = async (url) => (await import("../src/threads/bundle.mjs")).bundleModule(url);
  const bundled = done || !useBundle ? undefined : await freshBundle(pathToFileURL(entry), build, part);
  if (done) {
    // ran from the script above
  } else if (bundled) {
    const { runCli } = await import(bundled);
    process.exitCode = await runCli(argv, io);
  } else {
    const { spawn } = require("node:child_process");
    const child = spawn(process.execPath, [require.resolve("tsx/cli"), entry, ...argv], { stdio: "inherit" });
    // A signal sent to this launcher alone (a process manager's SIGTERM) is passed on, so the
    // command stops gracefully and no child is left serving after the launcher is gone.
    for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) {
      process.on(signal, () => child.kill(signal));
    }
    child.on("exit", (code, signal) => process.exit(code ?? (signal ? 128 + (signal === "SIGKILL" ? 9 : 15) : 1)));
  }
}

main().catch((err) => {
  process.stderr.write(`labphi: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exitCode = 1;
});
