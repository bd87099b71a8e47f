import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import { freePort } from "../../src/sandbox/ledgers/evm.js";

/**
 * Ports for the servers the tests start. A port picked with freePort() (listen on port 0, read it,
 * close) and handed to a process started afterwards can be taken in between by another test file's
 * process (vitest runs files in parallel), which then answers for the one started: its /healthz
 * for a service that has not started (commit 56af3e4). So:
 *
 * - a child process that logs the address it listens on (the service, src/server.ts: `Lab Phi is
 *   serving … (listening on http://127.0.0.1:N)`) starts with PORT=0 and the test reads its port
 *   from its output: waitForListening;
 * - an in-process server that must know its URL before it listens (BASE_URL): onFreePort, which
 *   tries another port when the listen fails with EADDRINUSE (a listen that succeeds in this process
 *   is this server's: nothing else can answer for it);
 * - an address that must refuse connections, or a server that must have its port before it starts
 *   and keep it across a restart (PostgreSQL): unassignedPort, a port the kernel never hands out.
 */

/** "listening on http://HOST:PORT" (an IPv6 host in brackets), in a plain or a JSON log line. */
const LISTENING = /listening on https?:\/\/(?:\[[^\]\s]+\]|[^\s/:()"]+):(\d+)/;

/** The port of the first "listening on http://HOST:PORT" in `output`, if any. */
export function listeningPort(output: string): number | undefined {
  const m = LISTENING.exec(output);
  const port = m ? Number(m[1]) : 0;
  return port > 0 ? port : undefined;
}

/**
 * Waits until a child started with PORT=0 logs the address it listens on (the service logs it at
 * level info, once listening) and returns its port. Fails at once when the child exits first, and
 * after `ms` without the line, with what the child wrote.
 */
export async function waitForListening(
  child: ChildProcess,
  output: () => string,
  ms: number,
  what = "the service",
): Promise<number> {
  const end = Date.now() + ms;
  for (;;) {
    const port = listeningPort(output());
    if (port !== undefined) return port;
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${what} exited (${child.exitCode ?? child.signalCode}) before it listened:\n${output()}`);
    }
    if (Date.now() > end) {
      throw new Error(`${what} did not log the address it listens on within ${ms} ms:\n${output()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * An in-process server on a free port whose URL it must know before it listens (BASE_URL):
 * `start(port)` builds it for that port and listens there, closing what it built when the listen
 * fails. When another process took the port since freePort() (EADDRINUSE), this tries again on
 * another one; any other error is thrown.
 */
export async function onFreePort<T>(start: (port: number) => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return await start(port);
    } catch (err) {
      if (attempt >= attempts || (err as NodeJS.ErrnoException).code !== "EADDRINUSE") throw err;
    }
  }
}

/** The lowest port of the range the kernel picks ports from itself (Linux; else IANA's 49152). */
function ephemeralLow(): number {
  try {
    const low = Number(fs.readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > 1024) return low;
  } catch {
    // not Linux
  }
  return 49152;
}

/** Whether nothing listens on 127.0.0.1:port now (this process could listen there). */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once("error", () => resolve(false));
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
  });
}

/** fetch() refuses the "bad ports" of the Fetch standard; the highest is 10080. */
const ABOVE_BAD_PORTS = 10_081;

/**
 * A loopback port nothing listens on now, below the range the kernel picks ports from (a listen on
 * port 0, freePort(), an outgoing connection's own port). No process of the tests can be given it
 * (they all listen on port 0 or on a port from freePort()), so it stays closed unless a process asks
 * for this very number: an address that must refuse connections stays refused, and a server that
 * must know its port before it starts (PostgreSQL) finds it free, again after a restart.
 */
export async function unassignedPort(): Promise<number> {
  const high = ephemeralLow();
  const low = Math.max(ABOVE_BAD_PORTS, high - 10_000);
  if (high - low < 100) throw new Error(`no room below the kernel's ephemeral port range (from ${high})`);
  for (let i = 0; i < 100; i++) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port in ${low}-${high - 1}`);
}
