import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { KeyPairSigner } from "@solana/kit";
import { generateKeyPairSigner } from "@solana/kit";
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CRASH_POINTS, type CrashPoint, crashPoint, crashSettingError } from "../../src/ops/crash-points.js";
import { paymentIdentifierClientExtension } from "../../src/payments/x402/buyer.js";
import { paymentId, solanaKey } from "../payments/x402/helpers.js";
import { type SvmChain, startLiteSvm } from "../support/chains/svm.js";
import { healthy, ledgerProblems, readDb, type Service, spawnService, sqliteCount } from "./service.js";

/**
 * Issue #14 "Faults": the service (`node bin/labphi.mjs serve`, SQLite under DATA_DIR, the Solana
 * rail on a LiteSVM loopback RPC) is killed with SIGKILL during a purchase made with the stock
 * @x402/svm client — before settlement, between settlement and the order, after the order
 * (LABPHI_CRASH_AT, src/ops/crash-points.ts) — then restarted on the same DATA_DIR. Every paid proof
 * has exactly one order, the buyer gets it back by retrying with the same proof and payment
 * identifier, the chain shows exactly one transfer, and a proof that never settled buys nothing.
 */

const PRICE = 1_000_000n; // gao: 1.00 USDC
let chain: SvmChain;
let feePayer: { signer: KeyPairSigner; secret: string };
let seller: KeyPairSigner;
let dataDir: string;
const running: Service[] = [];

beforeAll(async () => {
  chain = await startLiteSvm();
  feePayer = await solanaKey();
  chain.svm.airdrop(feePayer.signer.address, 10_000_000_000n as never);
  seller = await generateKeyPairSigner();
  await chain.setUsdc(seller.address, 0n);
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-faults-buy-"));
});
afterAll(async () => {
  for (const s of running) await s.kill();
  await chain?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function serve(extra: Record<string, string> = {}): Promise<Service> {
  const s = spawnService({
    DATA_DIR: dataDir,
    PAY_TO_SOLANA: seller.address,
    SOLANA_RPC_URL: chain.rpcUrl,
    X402_SVM_FEE_PAYER_KEY: feePayer.secret,
    X402_SETTLE_TIMEOUT_SECONDS: "5",
    ...extra,
  });
  running.push(s);
  await healthy(s);
  return s;
}

const buy = (s: Service, headers: Record<string, string> = {}) =>
  fetch(`${s.url}/api/x402-products`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json", ...headers },
    body: JSON.stringify({ sku: "gao" }),
    signal: AbortSignal.timeout(30_000),
  });

/** The stock client's PAYMENT-SIGNATURE for one purchase, with a payment identifier. */
async function stockPayment(s: Service, buyer: KeyPairSigner, id: string): Promise<string> {
  const challenge = await buy(s);
  expect(challenge.status).toBe(402);
  const required = decodePaymentRequiredHeader(challenge.headers.get("payment-required") ?? "");
  const client = new x402Client().register("solana:*", new ExactSvmScheme(buyer, { rpcUrl: chain.rpcUrl }));
  client.registerExtension(paymentIdentifierClientExtension(id) as never);
  return encodePaymentSignatureHeader(await client.createPaymentPayload(required));
}

const proofsOf = (payer: string) =>
  readDb(dataDir, (db) => db.prepare("select state, order_id from payment_proofs where payer = ?").all(payer)) as {
    state: string;
    order_id: string | null;
  }[];

/** Buys with LABPHI_CRASH_AT=point: the service dies (SIGKILL) at that point; the request gets no answer. */
async function crashDuring(point: CrashPoint, buyer: KeyPairSigner) {
  const s = await serve({ LABPHI_CRASH_AT: point });
  const header = await stockPayment(s, buyer, paymentId());
  const answer = await buy(s, { "PAYMENT-SIGNATURE": header }).then(
    (r) => `HTTP ${r.status}`,
    () => "no answer",
  );
  const exit = await s.exited;
  expect(exit.signal, s.output()).toBe("SIGKILL");
  expect(s.output()).toContain(`crash point ${point} reached`);
  expect(answer).toBe("no answer");
  return header;
}

/** Retries the same proof (same payment identifier) until it is decided; 202 pending meanwhile. */
async function retry(s: Service, header: string, ms = 30_000): Promise<Response> {
  const end = Date.now() + ms;
  for (;;) {
    const r = await buy(s, { "PAYMENT-SIGNATURE": header });
    if (r.status !== 202 || Date.now() > end) return r;
    await new Promise((done) => setTimeout(done, 500));
  }
}

describe("SIGKILL during a purchase (real service process, SQLite, Solana on LiteSVM)", () => {
  it.each([
    ["before_settle", 0],
    ["after_settle", 1],
    ["after_grant", 1],
  ] as const)(
    "killed %s: after a restart the proof has exactly one order and one transfer",
    async (point, landedAtCrash) => {
      const buyer = await chain.newFunded(5_000_000n);
      const sellerBefore = await chain.usdcBalance(seller.address);
      const landed = chain.landed();
      const header = await crashDuring(point, buyer);
      // what the crash left: the transfer (or not), and an order only when the grant committed
      expect(chain.landed()).toBe(landed + landedAtCrash);
      const left = proofsOf(buyer.address);
      expect(left).toHaveLength(1);
      expect(left[0]?.state).toBe(point === "after_grant" ? "granted" : "settling");
      expect(left[0]?.order_id === null).toBe(point !== "after_grant");

      const s = await serve();
      const first = await retry(s, header);
      expect(first.status, await first.clone().text()).toBe(200);
      const order = (await first.json()) as { order_id: string; access_url: string };
      expect(order.order_id).toMatch(/\S/);
      const again = await buy(s, { "PAYMENT-SIGNATURE": header });
      expect(again.status).toBe(200);
      expect(((await again.json()) as { order_id: string }).order_id).toBe(order.order_id);
      const access = await fetch(order.access_url.replace(/^https?:\/\/[^/]+/, s.url), {
        headers: { accept: "application/json" },
      });
      expect(access.status).toBe(200);
      // exactly one transfer, of exactly the price
      expect(chain.landed()).toBe(landed + 1);
      expect(await chain.usdcBalance(seller.address)).toBe(sellerBefore + PRICE);
      expect(await chain.usdcBalance(buyer.address)).toBe(5_000_000n - PRICE);
      expect(proofsOf(buyer.address)).toEqual([{ state: "granted", order_id: order.order_id }]);
      expect(await ledgerProblems(sqliteCount(dataDir))).toEqual([]);
      await s.kill();
    },
    90_000,
  );

  it("a proof that never settles buys nothing: killed before settlement, the payer's funds gone by the restart", async () => {
    const buyer = await chain.newFunded(5_000_000n);
    const landed = chain.landed();
    const header = await crashDuring("before_settle", buyer);
    await chain.setUsdc(buyer.address, 0n); // the payer empties the account meanwhile
    const s = await serve();
    const res = await retry(s, header);
    expect(res.status, await res.clone().text()).toBe(402);
    const body = (await res.json()) as { code?: string; order_id?: string };
    expect(body.order_id).toBeUndefined();
    expect(chain.landed()).toBe(landed);
    expect(proofsOf(buyer.address)).toEqual([expect.objectContaining({ state: "failed", order_id: null })]);
    expect(await ledgerProblems(sqliteCount(dataDir))).toEqual([]);
    await s.kill();
  }, 90_000);
});

describe("crash points cannot be enabled in production", () => {
  it("the configuration refuses LABPHI_CRASH_AT when NODE_ENV=production (the service exits 78)", async () => {
    expect(crashSettingError({ NODE_ENV: "production", LABPHI_CRASH_AT: "after_settle" })).toMatch(/production/);
    expect(crashSettingError({ NODE_ENV: "development", LABPHI_CRASH_AT: "sometime" })).toMatch(/one of/);
    for (const p of CRASH_POINTS) expect(crashSettingError({ NODE_ENV: "test", LABPHI_CRASH_AT: p })).toBeUndefined();
    const s = spawnService({
      NODE_ENV: "production",
      LABPHI_CRASH_AT: "after_settle",
      DATA_DIR: dataDir,
    });
    running.push(s);
    expect((await s.exited).code).toBe(78);
    expect(s.output()).toMatch(/LABPHI_CRASH_AT: .*refused when NODE_ENV=production/);
  }, 60_000);

  it("crashPoint does nothing under NODE_ENV=production, or at another point", () => {
    crashPoint("after_settle", { NODE_ENV: "production", LABPHI_CRASH_AT: "after_settle" });
    crashPoint("after_settle", { NODE_ENV: "test", LABPHI_CRASH_AT: "before_settle" });
    crashPoint("after_settle", { NODE_ENV: "test" });
    expect(process.exitCode ?? 0).toBe(0); // still here
  });
});
