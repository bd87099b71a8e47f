import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

/**
 * Issue #14 "Operations": SIGTERM sent to the process a host starts (`npm start`, or the labphi
 * launcher) stops the whole service gracefully: nothing of its process group is left serving.
 */
const ROOT = path.resolve(import.meta.dirname, "../..");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-proc-test-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function start(command: string, args: string[], env: Record<string, string>): Started {
  // its own process group, so that the test can see whether any of its processes survive
  const child = spawn(command, args, {
    cwd: ROOT,
    // a clean environment: only what a host would give (the test runner's own settings stay out)
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? os.tmpdir(),
      NODE_ENV: "development",
      LOG_LEVEL: "info",
      ...env,
    },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let text = "";
  child.stdout?.on("data", (c) => {
    text += c;
  });
  child.stderr?.on("data", (c) => {
    text += c;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  return { child, output: () => text, exited };
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(
  check: () => boolean | Promise<boolean>,
  ms: number,
  what: () => string,
  gone?: () => boolean,
): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    if (gone?.()) throw new Error(`the process exited while waiting for ${what()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what()}`);
}

const answers = async (url: string) => {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(1000) })).ok;
  } catch {
    return false;
  }
};

async function serveThenTerm(command: string, args: string[], extraEnv: Record<string, string> = {}) {
  const dataDir = fs.mkdtempSync(path.join(tmp, "data-"));
  // PORT=0: the service takes a port of its own and logs it. A port picked here and passed in
  // could be taken by another test's service first, whose /healthz would then answer for this one
  // (a Node 24 pass once sent SIGTERM to a service that had not started: no output at all).
  const s = start(command, args, { PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, ...extraEnv });
  const pgid = s.child.pid!;
  let port = 0;
  try {
    await until(
      () => {
        port = Number(/listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(s.output())?.[1] ?? 0);
        return port > 0;
      },
      90_000,
      () => `the service's address in its log\n${s.output()}`,
    );
    await until(
      () => answers(`http://127.0.0.1:${port}/healthz`),
      30_000,
      () => `the service on ${port}\n${s.output()}`,
    );
    s.child.kill("SIGTERM"); // the launched process only, not its group
    const { code } = await s.exited;
    await until(
      async () => !(await answers(`http://127.0.0.1:${port}/healthz`)),
      15_000,
      () => "the port to close",
    );
    await until(
      () => !groupAlive(pgid),
      15_000,
      () => "every process of the group to exit",
    );
    expect(s.output()).toMatch(/draining in-flight requests/);
    return code;
  } finally {
    if (groupAlive(pgid)) process.kill(-pgid, "SIGKILL");
  }
}

describe("SIGTERM stops the whole service", () => {
  it("npm start: SIGTERM to npm leaves no process serving", async () => {
    const code = await serveThenTerm("npm", ["start", "--silent"]);
    expect(code === 0 || code === null || code === 143).toBe(true);
  }, 150_000);

  it("the launcher's tsx fallback (LABPHI_NO_BUNDLE=1) passes SIGTERM to its child", async () => {
    const code = await serveThenTerm(process.execPath, ["bin/labphi.mjs", "serve"], { LABPHI_NO_BUNDLE: "1" });
    expect(code).toBe(0);
  }, 150_000);

  it("labphi worker finishes and exits 0 on SIGTERM, leaving nothing behind", async () => {
    const dataDir = fs.mkdtempSync(path.join(tmp, "worker-"));
    const s = start(process.execPath, ["bin/labphi.mjs", "worker"], { DATA_DIR: dataDir });
    const pgid = s.child.pid!;
    try {
      await until(
        () => /worker|waiting|segments/i.test(s.output()),
        90_000,
        () => `the worker to start\n${s.output()}`,
      );
      s.child.kill("SIGTERM");
      const { code } = await s.exited;
      expect(code, s.output()).toBe(0);
      await until(
        () => !groupAlive(pgid),
        15_000,
        () => "every process of the group to exit",
      );
      expect(s.output()).toMatch(/SIGTERM/);
    } finally {
      if (groupAlive(pgid)) process.kill(-pgid, "SIGKILL");
    }
  }, 150_000);
});
