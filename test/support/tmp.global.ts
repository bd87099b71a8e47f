import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/**
 * Vitest global setup: one temporary folder for the whole run. TMPDIR points into it before any
 * test process starts, so every temporary file of the tests, of the services and ledgers they start
 * and of the browsers they drive lands there, and the teardown removes all of it: a run leaves no
 * temporary folder behind, even when a test or a child process dies before its own clean-up.
 * (0755: PostgreSQL, run as its own user when the tests run as root, must reach its folder inside.)
 */
export default function setup(): () => void {
  const outer = process.env.TMPDIR;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-tests-"));
  fs.chmodSync(root, 0o755);
  process.env.TMPDIR = root;
  return () => {
    if (outer === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = outer;
    fs.rmSync(root, { recursive: true, force: true, maxRetries: 3 });
  };
}
