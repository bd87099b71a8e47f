import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { waitForListening } from "./support/ports.js";

const root = path.resolve(import.meta.dirname, "..");
const tsx = path.join(root, "node_modules", "tsx", "dist", "cli.mjs");

function start(env: Record<string, string>): { child: ChildProcess; output: () => string } {
  let out = "";
  const child = spawn(process.execPath, [tsx, "src/server.ts"], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.on("data", (d) => {
    out += d;
  });
  child.stderr?.on("data", (d) => {
    out += d;
  });
  return { child, output: () => out };
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

async function waitFor(predicate: () => boolean, ms = 30_000) {
  const until = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > until) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
}

let children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  children = [];
});

describe("server process", () => {
  it("stops with one line naming an invalid setting", async () => {
    const { child, output } = start({ PORT: "eighty" });
    children.push(child);
    const code = await exited(child);
    expect(code).toBe(78);
    expect(output().trim()).toBe("labphi: invalid setting PORT: must be an integer between 0 and 65535");
  });

  it("serves, then on SIGTERM drains an in-flight request before exiting 0", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-srv-"));
    // PORT=0: the service takes a port of its own and logs it (a port picked here and passed in could
    // be taken by another test file's process first, which would then answer for this one).
    const { child, output } = start({ PORT: "0", DATA_DIR: dataDir, ADMIN_TOKEN: "t".repeat(32) });
    children.push(child);
    // its "Lab Phi is serving … (listening on http://127.0.0.1:N)" line
    const port = await waitForListening(child, output, 30_000);
    expect(fs.existsSync(path.join(dataDir, "labphi.sqlite"))).toBe(true);

    // Start a request whose body is still arriving when SIGTERM lands.
    const body = JSON.stringify({ reason: "drain test" });
    const socket = net.connect(port, "127.0.0.1");
    await new Promise<void>((r) => socket.once("connect", () => r()));
    let response = "";
    socket.on("data", (d) => {
      response += d;
    });
    socket.write(
      `POST /api/admin/orders/ord_missing/revoke HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${"t".repeat(32)}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 5)}`,
    );
    await new Promise((r) => setTimeout(r, 200));
    const exit = exited(child);
    child.kill("SIGTERM");
    await waitFor(() => output().includes("draining"));
    socket.write(body.slice(5));
    await new Promise<void>((r) => socket.once("close", () => r()));
    expect(response).toMatch(/^HTTP\/1\.1 404/);
    expect(response).toContain("order_not_found");
    expect(await exit).toBe(0);
  });
});
