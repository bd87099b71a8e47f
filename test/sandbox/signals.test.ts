import { type ChildProcess, spawn } from "node:child_process";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Issue #25 item 4: SIGINT or SIGTERM sent to the npm process of `npm run sandbox` (what a process
 * manager, a terminal multiplexer or `kill <npm pid>` does) stops the sandbox, anvil and the
 * Solana ledger's JSON-RPC server: nothing of its process group is left, no port left listening.
 */
const ROOT = path.resolve(import.meta.dirname, "../..");

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startNpmSandbox(): Started {
  // its own process group, so that the test can see whether any of its processes survive
  const child = spawn("npm", ["run", "sandbox", "--silent", "--", "--port", "0"], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? os.tmpdir(),
      TMPDIR: os.tmpdir(),
      NODE_ENV: "development",
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

/** Whether something accepts a TCP connection on 127.0.0.1:port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: "127.0.0.1" });
    socket.setTimeout(1000);
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("timeout", () => {
      socket.destroy();
      resolve(true); // accepted by the kernel's backlog but not served: still taken
    });
    socket.once("error", () => resolve(false));
  });
}

async function until(check: () => boolean | Promise<boolean>, ms: number, what: () => string): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what()}`);
}

const portOf = (url: string | undefined) => Number(new URL(url ?? "http://x:0").port);

async function signalNpm(signal: "SIGTERM" | "SIGINT") {
  const s = startNpmSandbox();
  const pgid = s.child.pid as number;
  try {
    await until(
      () => /^ready: \S+$/m.test(s.output()),
      120_000,
      () => `the sandbox to print ready\n${s.output()}`,
    );
    const out = s.output();
    const ports = {
      service: portOf(/^ready: (\S+)$/m.exec(out)?.[1]),
      anvil: portOf(/Base \(anvil\) +(\S+)/.exec(out)?.[1]),
      solana: portOf(/Solana \(LiteSVM\) +(\S+)/.exec(out)?.[1]),
    };
    for (const port of Object.values(ports)) {
      expect(port).toBeGreaterThan(0);
      expect(await listening(port)).toBe(true);
    }
    process.kill(pgid, signal); // the npm process only, not its group
    // npm itself exits once its script has (bounded: a hang shows as the checks below failing)
    await Promise.race([s.exited, new Promise((r) => setTimeout(r, 20_000))]);
    for (const [name, port] of Object.entries(ports)) {
      await until(
        async () => !(await listening(port)),
        15_000,
        () => `the ${name} port ${port} to close\n${s.output()}`,
      );
    }
    await until(
      () => !groupAlive(pgid),
      15_000,
      () => `every process of npm's group to exit\n${s.output()}`,
    );
    return s.output();
  } finally {
    if (groupAlive(pgid)) process.kill(-pgid, "SIGKILL");
  }
}

describe("npm run sandbox stops on a signal to npm, leaving nothing running", () => {
  it("SIGTERM to npm: the service, anvil and the Solana RPC stop; no process of the group is left", async () => {
    const out = await signalNpm("SIGTERM");
    expect(out).toMatch(/SIGTERM: stopping the service and the ledgers/);
    expect(out).toMatch(/sandbox stopped/);
  }, 180_000);

  it("SIGINT to npm (not to its group): the same", async () => {
    const out = await signalNpm("SIGINT");
    expect(out).toMatch(/SIGINT: stopping the service and the ledgers/);
    expect(out).toMatch(/sandbox stopped/);
  }, 180_000);
});
