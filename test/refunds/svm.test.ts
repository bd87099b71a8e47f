import { generateKeyPairSigner, getBase58Decoder, type KeyPairSigner, signBytes } from "@solana/kit";
import { x402Client } from "@x402/core/client";
import { encodePaymentSignatureHeader } from "@x402/core/http";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../src/db/database.js";
import type { App } from "../../src/http/types.js";
import type { CrashPoint } from "../../src/ops/crash-points.js";
import { appOn, paymentRequired, solanaKey } from "../payments/x402/helpers.js";
import { type SvmChain, startLiteSvm } from "../support/chains/svm.js";
import { ENGINES, freshDatabase } from "../support/databases.js";

/**
 * Issue #22 item 4 "Refunds" on Solana (LiteSVM): an order bought with the stock @x402/svm client
 * is refunded from the refund wallet (REFUND_SVM_KEY) to the payer exactly once — also when the
 * service "dies" after signing (before broadcast) or after broadcasting (before recording), or the
 * stored transaction's blockhash expires unsent. Without a key the refund is owed and paid by hand.
 * Buyer requests: signed by the paying wallet only, auto-approved within the policy, not after.
 */

const PRICE = 1_000_000n; // gao: 1.00 USDC
const ADMIN = { authorization: "Bearer admin-token-0123456789" };
let chain: SvmChain;
let feePayer: { signer: KeyPairSigner; secret: string };
let refundWallet: { signer: KeyPairSigner; secret: string };
let seller: KeyPairSigner;

beforeAll(async () => {
  chain = await startLiteSvm();
  feePayer = await solanaKey();
  chain.svm.airdrop(feePayer.signer.address, 10_000_000_000n as never);
  refundWallet = await solanaKey();
  chain.svm.airdrop(refundWallet.signer.address, 10_000_000_000n as never);
  await chain.setUsdc(refundWallet.signer.address, 100_000_000n);
  seller = await generateKeyPairSigner();
  await chain.setUsdc(seller.address, 0n);
});
afterAll(async () => chain?.stop());

const env = (extra: Record<string, string> = {}) => ({
  PAY_TO_SOLANA: seller.address,
  SOLANA_RPC_URL: chain.rpcUrl,
  X402_SVM_FEE_PAYER_KEY: feePayer.secret,
  REFUND_SVM_KEY: refundWallet.secret,
  X402_SETTLE_TIMEOUT_SECONDS: "5",
  ...extra,
});

const post = (app: App, url: string, body: unknown = {}, headers: Record<string, string> = {}) =>
  app.inject({ method: "POST", url, headers, payload: body as object });

/** Buys `gao` with the stock client; returns the order. */
async function buy(app: App, buyer: KeyPairSigner): Promise<{ order_id: string; access_url: string }> {
  const challenge = await post(app, "/api/x402-products", { sku: "gao" });
  expect(challenge.statusCode).toBe(402);
  const client = new x402Client().register("solana:*", new ExactSvmScheme(buyer, { rpcUrl: chain.rpcUrl }));
  const header = encodePaymentSignatureHeader(await client.createPaymentPayload(paymentRequired(challenge.headers)));
  const res = await post(app, "/api/x402-products", { sku: "gao" }, { "PAYMENT-SIGNATURE": header });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

const refund = (app: App, orderId: string) =>
  post(app, `/api/admin/orders/${orderId}/refund`, { reason: "test" }, ADMIN);
const access = (app: App, url: string) =>
  app.inject({ method: "GET", url: new URL(url).pathname, headers: { accept: "application/json" } });
const rowOf = (db: Db, orderId: string) =>
  db.kysely.selectFrom("refunds").selectAll().where("order_id", "=", orderId).executeTakeFirstOrThrow();
const refundedAudits = async (db: Db, orderId: string) =>
  (
    await db.kysely
      .selectFrom("audit_log")
      .select("action")
      .where("subject", "=", orderId)
      .where("action", "=", "order.refunded")
      .execute()
  ).length;

/** The buyer's signed request: challenge, ed25519 signature by `signer`, request. */
async function buyerRequest(app: App, orderId: string, signer: KeyPairSigner) {
  const ch = await post(app, `/api/orders/${orderId}/refund-request/challenge`);
  if (ch.statusCode !== 201) return ch;
  const { nonce, message } = ch.json() as { nonce: string; message: string };
  const sig = await signBytes(signer.keyPair.privateKey, new TextEncoder().encode(message));
  return post(app, `/api/orders/${orderId}/refund-request`, {
    nonce,
    signature: getBase58Decoder().decode(sig),
  });
}

/** In-process "kill" at a crash point: the process stops there (nothing after it runs). */
const dieAt = (app: App, point: CrashPoint) => {
  app.services.refunds.crash = (p) => {
    if (p === point) throw new Error(`simulated kill at ${p}`);
  };
};

describe.each(ENGINES)("refunds on Solana (LiteSVM, stock x402 client) — %s", (engine) => {
  let db: Db;
  let app: App;
  beforeAll(async () => {
    db = (await freshDatabase(engine)).db;
    app = await appOn(db, env());
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it("operator refund: the payer gets exactly the amount back once, the refund wallet pays once, access ends; a second refund → 409", async () => {
    const buyer = await chain.newFunded(5_000_000n);
    const order = await buy(app, buyer);
    expect(await chain.usdcBalance(buyer.address)).toBe(5_000_000n - PRICE);
    const wallet = await chain.usdcBalance(refundWallet.signer.address);
    const landed = chain.landed();
    const res = await refund(app, order.order_id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      state: "done",
      method: "solana",
      payer: buyer.address,
      amount_units: "1000000",
      asset: chain.mint,
    });
    expect(await chain.usdcBalance(buyer.address)).toBe(5_000_000n);
    expect(await chain.usdcBalance(refundWallet.signer.address)).toBe(wallet - PRICE);
    expect(chain.landed()).toBe(landed + 1);
    expect((await access(app, order.access_url)).statusCode).toBe(410);
    const again = await refund(app, order.order_id);
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe("refund_exists");
    const buyerAgain = await buyerRequest(app, order.order_id, buyer);
    expect(buyerAgain.statusCode).toBe(409);
    expect(await chain.usdcBalance(buyer.address)).toBe(5_000_000n);
    expect(await refundedAudits(db, order.order_id)).toBe(1);
  });

  it("five concurrent operator refunds of one order: one transfer, the others 409", async () => {
    const buyer = await chain.newFunded(5_000_000n);
    const order = await buy(app, buyer);
    const wallet = await chain.usdcBalance(refundWallet.signer.address);
    const landed = chain.landed();
    const answers = await Promise.all(Array.from({ length: 5 }, () => refund(app, order.order_id)));
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 409, 409, 409, 409]);
    expect(chain.landed()).toBe(landed + 1);
    expect(await chain.usdcBalance(buyer.address)).toBe(5_000_000n);
    expect(await chain.usdcBalance(refundWallet.signer.address)).toBe(wallet - PRICE);
    expect(await refundedAudits(db, order.order_id)).toBe(1);
  });

  it("crash after broadcast, before recording: the restart finds the transaction on chain, no second transfer", async () => {
    const buyer = await chain.newFunded(5_000_000n);
    const order = await buy(app, buyer);
    const wallet = await chain.usdcBalance(refundWallet.signer.address);
    const landed = chain.landed();
    dieAt(app, "refund_after_broadcast");
    const res = await refund(app, order.order_id);
    expect(res.statusCode).toBe(500); // the "dead" process answered nothing useful
    expect(chain.landed()).toBe(landed + 1); // the transfer went out
    expect((await rowOf(db, order.order_id)).state).toBe("signed"); // …but was not recorded
    await app.close();
    app = await appOn(db, env()); // restart: start-up reconciliation
    const row = await rowOf(db, order.order_id);
    expect(row.state).toBe("done");
    await app.services.refunds.reconcile();
    expect(chain.landed()).toBe(landed + 1);
    expect(await chain.usdcBalance(buyer.address)).toBe(5_000_000n);
    expect(await chain.usdcBalance(refundWallet.signer.address)).toBe(wallet - PRICE);
    expect(await refundedAudits(db, order.order_id)).toBe(1);
  });

  it("crash after signing, before broadcast: the restart sends the SAME stored transaction, once", async () => {
    const buyer = await chain.newFunded(5_000_000n);
    const order = await buy(app, buyer);
    const wallet = await chain.usdcBalance(refundWallet.signer.address);
    const landed = chain.landed();
    dieAt(app, "refund_before_broadcast");
    expect((await refund(app, order.order_id)).statusCode).toBe(500);
    const stored = await rowOf(db, order.order_id);
    expect(stored.state).toBe("signed");
    expect(stored.raw_tx).toMatch(/\S/);
    expect(chain.landed()).toBe(landed);
    expect(await chain.usdcBalance(buyer.address)).toBe(5_000_000n - PRICE);
    await app.close();
    app = await appOn(db, env());
    const after = await rowOf(db, order.order_id);
    expect(after.state).toBe("done");
    expect(after.tx).toBe(stored.tx);
    expect(chain.readBack(stored.tx ?? "")).toBe(stored.raw_tx);
    await app.services.refunds.reconcile();
    expect(chain.landed()).toBe(landed + 1);
    expect(await chain.usdcBalance(buyer.address)).toBe(5_000_000n);
    expect(await chain.usdcBalance(refundWallet.signer.address)).toBe(wallet - PRICE);
  });

  it("a stored transaction whose blockhash expired unsent is replaced; the old bytes can no longer pay", async () => {
    const buyer = await chain.newFunded(5_000_000n);
    const order = await buy(app, buyer);
    const wallet = await chain.usdcBalance(refundWallet.signer.address);
    dieAt(app, "refund_before_broadcast");
    expect((await refund(app, order.order_id)).statusCode).toBe(500);
    const stored = await rowOf(db, order.order_id);
    chain.svm.warpToSlot(BigInt((stored.valid_until ?? 0) + 10));
    chain.svm.expireBlockhash();
    await app.close();
    app = await appOn(db, env());
    const after = await rowOf(db, order.order_id);
    expect(after.state).toBe("done");
    expect(after.tx).not.toBe(stored.tx);
    // the expired bytes, sent by anyone, move nothing
    try {
      chain.broadcast(stored.raw_tx ?? "");
    } catch {
      // refused outright is as good
    }
    expect(await chain.usdcBalance(buyer.address)).toBe(5_000_000n);
    expect(await chain.usdcBalance(refundWallet.signer.address)).toBe(wallet - PRICE);
  });

  it("buyer request: refused when signed by another wallet; signed by the payer → requested, the operator approves → refunded", async () => {
    const buyer = await chain.newFunded(5_000_000n);
    const order = await buy(app, buyer);
    const stranger = await generateKeyPairSigner();
    const wrong = await buyerRequest(app, order.order_id, stranger);
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().code).toBe("refund_signature_invalid");
    expect(await chain.usdcBalance(buyer.address)).toBe(5_000_000n - PRICE);
    const ok = await buyerRequest(app, order.order_id, buyer);
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toMatchObject({ state: "requested", origin: "buyer", payer: buyer.address });
    const opened = await access(app, order.access_url);
    expect(opened.statusCode, opened.body).toBe(200); // not yet
    const listed = await app.inject({ method: "GET", url: "/api/admin/refunds?state=requested", headers: ADMIN });
    expect(listed.json().refunds.map((r: { order_id: string }) => r.order_id)).toContain(order.order_id);
    const approved = await post(app, `/api/admin/refunds/${ok.json().refund_id}/approve`, {}, ADMIN);
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.json().state).toBe("done");
    expect(await chain.usdcBalance(buyer.address)).toBe(5_000_000n);
    expect((await access(app, order.access_url)).statusCode).toBe(410);
  });
});

describe("refund policy and owed refunds (Solana, SQLite)", () => {
  let db: Db;
  afterAll(async () => db?.close());

  it("auto-approve: an unused order within REFUND_AUTO_APPROVE_HOURS is refunded at once; an opened one waits; after the window → 410", async () => {
    db = (await freshDatabase("sqlite")).db;
    const app = await appOn(db, env({ REFUND_AUTO_APPROVE_HOURS: "24", REFUND_WINDOW_HOURS: "72" }));
    try {
      const unused = await chain.newFunded(5_000_000n);
      const o1 = await buy(app, unused);
      const r1 = await buyerRequest(app, o1.order_id, unused);
      expect(r1.statusCode, r1.body).toBe(200);
      expect(r1.json().state).toBe("done");
      expect(await chain.usdcBalance(unused.address)).toBe(5_000_000n);

      const used = await chain.newFunded(5_000_000n);
      const o2 = await buy(app, used);
      expect((await access(app, o2.access_url)).statusCode).toBe(200); // opened: used
      const r2 = await buyerRequest(app, o2.order_id, used);
      expect(r2.json().state).toBe("requested");
      expect(await chain.usdcBalance(used.address)).toBe(5_000_000n - PRICE);

      const late = await chain.newFunded(5_000_000n);
      const o3 = await buy(app, late);
      app.services.refunds.clock = () => new Date(Date.now() + 73 * 3_600_000);
      const r3 = await buyerRequest(app, o3.order_id, late);
      expect(r3.statusCode).toBe(410);
      expect(r3.json().code).toBe("refund_window_closed");
      // within the window but past the auto-approve hours: waits for the operator
      app.services.refunds.clock = () => new Date(Date.now() + 25 * 3_600_000);
      const r4 = await buyerRequest(app, o3.order_id, late);
      expect(r4.json().state).toBe("requested");
      expect(await chain.usdcBalance(late.address)).toBe(5_000_000n - PRICE);
    } finally {
      await app.close();
    }
  });

  it("no REFUND_SVM_KEY: the refund is owed, listed, then marked paid by hand; nothing moves on chain", async () => {
    const owedDb = (await freshDatabase("sqlite")).db;
    const app = await appOn(owedDb, env({ REFUND_SVM_KEY: "" }));
    try {
      const buyer = await chain.newFunded(5_000_000n);
      const order = await buy(app, buyer);
      const landed = chain.landed();
      const res = await refund(app, order.order_id);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({
        state: "owed",
        method: "solana",
        payer: buyer.address,
        amount_units: "1000000",
      });
      expect((await access(app, order.access_url)).statusCode).toBe(410);
      const owed = await app.inject({ method: "GET", url: "/api/admin/refunds?state=owed", headers: ADMIN });
      expect(owed.statusCode).toBe(200);
      expect(owed.json().refunds).toHaveLength(1);
      const id = res.json().refund_id as string;
      const paid = await post(app, `/api/admin/refunds/${id}/paid`, { reference: "solana:manual-transfer-1" }, ADMIN);
      expect(paid.statusCode, paid.body).toBe(200);
      expect(paid.json()).toMatchObject({ state: "paid", transaction: "solana:manual-transfer-1" });
      const twice = await post(app, `/api/admin/refunds/${id}/paid`, { reference: "solana:manual-transfer-2" }, ADMIN);
      expect(twice.statusCode).toBe(409);
      expect(chain.landed()).toBe(landed);
      expect(await chain.usdcBalance(buyer.address)).toBe(5_000_000n - PRICE);
      expect(
        (await app.inject({ method: "GET", url: "/api/admin/refunds?state=owed", headers: ADMIN })).json().refunds,
      ).toHaveLength(0);
    } finally {
      await app.close();
      await owedDb.close();
    }
  });
});
