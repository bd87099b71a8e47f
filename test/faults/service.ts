import { type ChildProcess, spawn } from "node:child_process";
import os from "node:os";
import path from "node:path";
import SQLite from "../../src/db/sqlite-driver.js";
import { waitForListening } from "../support/ports.js";

/**
 * The service as a host runs it, for the fault tests: `node bin/labphi.mjs serve` in its own
 * process group, with a clean environment (only what a host would give). It listens on a port of
 * its own (PORT=0) and logs it: a port picked by the test and passed in could be taken by another
 * test file's process first, whose /healthz would then answer for this one (commit 56af3e4).
 */
const ROOT = path.resolve(import.meta.dirname, "../..");

export interface Service {
  /** http://127.0.0.1:PORT, the port the service logged; known once `healthy(s)` (or `listening()`) resolved. */
  readonly url: string;
  /** Waits for the service's "listening on http://127.0.0.1:N" log line; its URL. */
  listening(ms: number): Promise<string>;
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL to the whole process group (a no-op when it is gone). */
  kill(): Promise<void>;
}

/** `prefix`: a command that runs the service (e.g. `prlimit --fsize=N --`), or none. */
export function spawnService(env: Record<string, string>, opts: { args?: string[]; prefix?: string[] } = {}): Service {
  const argv = [...(opts.prefix ?? []), process.execPath, "bin/labphi.mjs", ...(opts.args ?? ["serve"])];
  const child = spawn(argv[0] as string, argv.slice(1), {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? os.tmpdir(),
      NODE_ENV: "development",
      // info: the service logs the address it listens on at level info (src/server.ts)
      LOG_LEVEL: "info",
      PORT: "0",
      HOST: "127.0.0.1",
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
  const pgid = child.pid as number;
  let url: string | undefined;
  return {
    get url() {
      if (url === undefined) throw new Error("the service's port is not known yet: await healthy(s) first");
      return url;
    },
    async listening(ms: number) {
      url ??= `http://127.0.0.1:${await waitForListening(child, () => text, ms)}`;
      return url;
    },
    child,
    output: () => text,
    exited,
    kill: async () => {
      try {
        process.kill(-pgid, "SIGKILL");
      } catch {
        return;
      }
      await exited;
    },
  };
}

/** Waits for the port the service logs, then until GET /healthz answers 200 there. */
export async function healthy(s: Service, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  await s.listening(ms);
  while (Date.now() < end) {
    if (s.child.exitCode !== null || s.child.signalCode !== null) {
      throw new Error(`the service exited while starting:\n${s.output()}`);
    }
    try {
      const r = await fetch(`${s.url}/healthz`, { signal: AbortSignal.timeout(1000) });
      if (r.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the service did not answer /healthz within ${ms} ms:\n${s.output()}`);
}

/** Reads the SQLite database of a DATA_DIR (read-only; the service may be running: WAL). */
export function readDb<T>(dataDir: string, read: (db: InstanceType<typeof SQLite>) => T): T {
  const db = new SQLite(path.join(dataDir, "labphi.sqlite"), { readonly: true, fileMustExist: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/** Counts with one SQL query (`select count(*) as n …`), on either engine. */
export type Count = (query: string) => number | Promise<number>;

/** A Count on the SQLite database of a DATA_DIR (read-only). */
export const sqliteCount =
  (dataDir: string): Count =>
  (query) =>
    readDb(dataDir, (db) => Number((db.prepare(query).get() as { n: number }).n));

/**
 * The ledger's promises, read from the database: every order has one settled payment and every
 * settled payment one order (orders = distinct settled payments), no payment reference or proof
 * with two orders, no x402 order without a granted proof.
 */
export async function ledgerProblems(n: Count): Promise<string[]> {
  const problems: string[] = [];
  const orders = await n("select count(*) as n from orders");
  const settled = await n(
    "select count(distinct settlement_tx) as n from payment_proofs where settlement_tx is not null and state = 'granted'",
  );
  if (orders !== settled) problems.push(`orders (${orders}) ≠ distinct settled payments (${settled})`);
  const twiceByProof = await n(
    "select count(*) as n from (select proof_key from orders group by proof_key having count(*) > 1) t",
  );
  if (twiceByProof > 0) problems.push(`${twiceByProof} proof(s) with two orders`);
  const twiceByTx = await n(
    "select count(*) as n from (select transaction_ref from orders where transaction_ref is not null group by transaction_ref having count(*) > 1) t",
  );
  if (twiceByTx > 0) problems.push(`${twiceByTx} transaction(s) with two orders`);
  const refsTwice = await n(
    "select count(*) as n from (select tx from payment_references where order_id is not null group by chain, tx having count(*) > 1) t",
  );
  if (refsTwice > 0) problems.push(`${refsTwice} payment reference(s) with two orders`);
  const orphan = await n(
    "select count(*) as n from orders o left join payment_proofs p on p.order_id = o.id where o.rail like 'x402%' and (p.proof_key is null or p.state <> 'granted')",
  );
  if (orphan > 0) problems.push(`${orphan} x402 order(s) without a granted proof`);
  return problems;
}
