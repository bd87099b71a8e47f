#!/usr/bin/env node
// Launcher for the labphi CLI. Runs the CLI bundled into one JavaScript file (src/threads/bundle.mjs:
// esbuild, cached under node_modules/.cache/labphi) in this process, which starts faster and keeps
// long-running commands such as `labphi worker` smaller; if bundling is not possible, it runs the
// TypeScript entry through tsx in a child process, as before.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { bundleModule } from "../src/threads/bundle.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const entry = path.join(here, "..", "src", "cli", "main.ts");
const argv = process.argv.slice(2);

const bundled = process.env.LABPHI_NO_BUNDLE ? undefined : await bundleModule(pathToFileURL(entry));
if (bundled) {
  const { runCli } = await import(bundled);
  process.exitCode = await runCli(argv, {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
  });
} else {
  const require = createRequire(import.meta.url);
  const child = spawn(process.execPath, [require.resolve("tsx/cli"), entry, ...argv], { stdio: "inherit" });
  // A signal sent to this launcher alone (a process manager's SIGTERM) is passed on, so the
  // command stops gracefully and no child is left serving after the launcher is gone.
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) {
    process.on(signal, () => child.kill(signal));
  }
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 128 + (signal === "SIGKILL" ? 9 : 15) : 1)));
}
