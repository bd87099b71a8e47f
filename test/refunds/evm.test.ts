import { x402Client } from "@x402/core/client";
import { encodePaymentSignatureHeader } from "@x402/core/http";
import { toClientEvmSigner } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { createWalletClient, type Hex, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../src/db/database.js";
import type { App } from "../../src/http/types.js";
import type { CrashPoint } from "../../src/ops/crash-points.js";
import { appOn, evmKey, paymentRequired } from "../payments/x402/helpers.js";
import { type EvmChain, startAnvil } from "../support/chains/evm.js";
import { freshDatabase } from "../support/databases.js";

/**
 * Issue #22 item 4 "Refunds" on Base (anvil, USDC at the mainnet address): an order bought with the
 * stock @x402/evm client is refunded by an ERC-20 transfer from the refund wallet (REFUND_EVM_KEY)
 * to the payer, exactly once, also across a "crash" after broadcast or before it (same nonce, same
 * bytes); without the key it is owed; a buyer request signed by another wallet is refused.
 */

const PRICE = 1_000_000n;
const ADMIN = { authorization: "Bearer admin-token-0123456789" };
let chain: EvmChain;
let gasKey: Hex;
let refundWallet: { key: Hex; address: `0x${string}` };
const seller = evmKey().address;

beforeAll(async () => {
  chain = await startAnvil();
  gasKey = (await chain.newBuyer(0n)).key;
  refundWallet = await chain.newBuyer(100_000_000n);
});
afterAll(async () => chain?.stop());

const env = (extra: Record<string, string> = {}) => ({
  PAY_TO_BASE: seller,
  BASE_RPC_URL: chain.rpcUrl,
  X402_EVM_FACILITATOR_KEY: gasKey,
  REFUND_EVM_KEY: refundWallet.key,
  X402_SETTLE_TIMEOUT_SECONDS: "5",
  ...extra,
});

const post = (app: App, url: string, body: unknown = {}, headers: Record<string, string> = {}) =>
  app.inject({ method: "POST", url, headers, payload: body as object });

async function buy(app: App, key: Hex): Promise<{ order_id: string; access_url: string }> {
  const challenge = await post(app, "/api/x402-products", { sku: "gao" });
  expect(challenge.statusCode).toBe(402);
  const client = new x402Client().register(
    "eip155:*",
    new ExactEvmScheme(toClientEvmSigner(privateKeyToAccount(key), chain.publicClient as never)),
  );
  const header = encodePaymentSignatureHeader(await client.createPaymentPayload(paymentRequired(challenge.headers)));
  const res = await post(app, "/api/x402-products", { sku: "gao" }, { "PAYMENT-SIGNATURE": header });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

const refund = (app: App, orderId: string) => post(app, `/api/admin/orders/${orderId}/refund`, {}, ADMIN);
const rowOf = (db: Db, orderId: string) =>
  db.kysely.selectFrom("refunds").selectAll().where("order_id", "=", orderId).executeTakeFirstOrThrow();
const transfersFromWallet = async () =>
  (
    await chain.publicClient.getContractEvents({
      address: chain.usdc,
      abi: chain.abi,
      eventName: "Transfer",
      args: { from: refundWallet.address },
      fromBlock: 0n,
    })
  ).length;
const dieAt = (app: App, point: CrashPoint) => {
  app.services.refunds.crash = (p) => {
    if (p === point) throw new Error(`simulated kill at ${p}`);
  };
};

describe("refunds on Base (anvil, stock x402 client, SQLite)", () => {
  let db: Db;
  let app: App;
  beforeAll(async () => {
    db = (await freshDatabase("sqlite")).db;
    app = await appOn(db, env());
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it("operator refund: an ERC-20 transfer of exactly the amount back to the payer, once; access 410; again → 409", async () => {
    const buyer = await chain.newBuyer(5_000_000n);
    const order = await buy(app, buyer.key);
    const wallet = await chain.balanceOf(refundWallet.address);
    const sent = await transfersFromWallet();
    const res = await refund(app, order.order_id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      state: "done",
      method: "evm",
      payer: buyer.address.toLowerCase(),
      amount_units: "1000000",
    });
    const receipt = await chain.publicClient.getTransactionReceipt({ hash: res.json().transaction });
    expect(receipt.status).toBe("success");
    expect(await chain.balanceOf(buyer.address)).toBe(5_000_000n);
    expect(await chain.balanceOf(refundWallet.address)).toBe(wallet - PRICE);
    expect(await transfersFromWallet()).toBe(sent + 1);
    const opened = await app.inject({ method: "GET", url: new URL(order.access_url).pathname });
    expect(opened.statusCode).toBe(410);
    const again = await refund(app, order.order_id);
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe("refund_exists");
    expect(await chain.balanceOf(buyer.address)).toBe(5_000_000n);
  });

  it.each([
    ["refund_after_broadcast", 1],
    ["refund_before_broadcast", 0],
  ] as const)(
    "crash at %s: the restart confirms or sends the same signed transaction (same nonce), one transfer",
    async (point, sentAtCrash) => {
      const buyer = await chain.newBuyer(5_000_000n);
      const order = await buy(app, buyer.key);
      const wallet = await chain.balanceOf(refundWallet.address);
      const sent = await transfersFromWallet();
      dieAt(app, point);
      expect((await refund(app, order.order_id)).statusCode).toBe(500);
      const stored = await rowOf(db, order.order_id);
      expect(stored.state).toBe("signed");
      expect(await transfersFromWallet()).toBe(sent + sentAtCrash);
      await app.close();
      app = await appOn(db, env());
      const after = await rowOf(db, order.order_id);
      expect(after.state).toBe("done");
      expect(after.tx).toBe(stored.tx);
      expect(after.evm_nonce).toBe(stored.evm_nonce);
      await app.services.refunds.reconcile();
      expect(await transfersFromWallet()).toBe(sent + 1);
      expect(await chain.balanceOf(buyer.address)).toBe(5_000_000n);
      expect(await chain.balanceOf(refundWallet.address)).toBe(wallet - PRICE);
    },
  );

  it("crash after broadcast while the transaction is still in the mempool: the restart re-sends the same bytes, never a second transfer", async () => {
    const buyer = await chain.newBuyer(5_000_000n);
    const order = await buy(app, buyer.key);
    const wallet = await chain.balanceOf(refundWallet.address);
    const sent = await transfersFromWallet();
    await chain.setAutomine(false);
    try {
      dieAt(app, "refund_after_broadcast");
      expect((await refund(app, order.order_id)).statusCode).toBe(500);
      const stored = await rowOf(db, order.order_id);
      expect(stored.state).toBe("signed");
      await app.close();
      app = await appOn(db, env()); // start-up reconciliation: not mined yet → same bytes, state sent
      const waiting = await rowOf(db, order.order_id);
      expect(waiting.state).toBe("sent");
      expect(waiting.tx).toBe(stored.tx);
      expect(await transfersFromWallet()).toBe(sent);
      await chain.mine(1);
      await app.services.refunds.reconcile();
      const after = await rowOf(db, order.order_id);
      expect(after.state).toBe("done");
      expect(after.tx).toBe(stored.tx);
      await chain.mine(2);
      expect(await transfersFromWallet()).toBe(sent + 1);
      expect(await chain.balanceOf(buyer.address)).toBe(5_000_000n);
      expect(await chain.balanceOf(refundWallet.address)).toBe(wallet - PRICE);
    } finally {
      await chain.setAutomine(true);
    }
  }, 30_000);

  it("a stored transfer that lands and reverts (the wallet was emptied meanwhile) becomes owed, never signed again", async () => {
    const buyer = await chain.newBuyer(5_000_000n);
    const order = await buy(app, buyer.key);
    const sink = await chain.newBuyer(0n);
    const owner = createWalletClient({ account: privateKeyToAccount(refundWallet.key), transport: http(chain.rpcUrl) });
    const taker = createWalletClient({ account: privateKeyToAccount(sink.key), transport: http(chain.rpcUrl) });
    const call = async (w: typeof owner, functionName: string, args: unknown[]) => {
      const hash = await w.writeContract({ address: chain.usdc, abi: chain.abi, functionName, args, chain: null });
      await chain.publicClient.waitForTransactionReceipt({ hash });
    };
    // The sink may move the refund wallet's USDC without using the refund wallet's nonce.
    await call(owner, "approve", [sink.address, 2n ** 255n]);
    const sent = await transfersFromWallet();
    dieAt(app, "refund_before_broadcast");
    expect((await refund(app, order.order_id)).statusCode).toBe(500);
    const stored = await rowOf(db, order.order_id);
    expect(stored.state).toBe("signed");
    const balance = await chain.balanceOf(refundWallet.address);
    await call(taker, "transferFrom", [refundWallet.address, sink.address, balance]);
    try {
      await app.close();
      app = await appOn(db, env()); // start-up reconciliation sends the stored bytes: they revert
      await app.services.refunds.reconcile();
      const after = await rowOf(db, order.order_id);
      expect(after.state, JSON.stringify({ ...after, raw_tx: undefined })).toBe("owed");
      expect(after.error).toMatch(/reverted/);
      const listed = await app.inject({ method: "GET", url: "/api/admin/refunds?state=owed", headers: ADMIN });
      expect(listed.json().refunds.map((r: { order_id: string }) => r.order_id)).toContain(order.order_id);
      await app.services.refunds.reconcile();
      expect((await rowOf(db, order.order_id)).state).toBe("owed");
      expect(await transfersFromWallet()).toBe(sent + 1); // the drain only: no refund transfer landed
      expect(await chain.balanceOf(buyer.address)).toBe(4_000_000n);
    } finally {
      await call(taker, "transfer", [refundWallet.address, balance]);
    }
  }, 30_000);

  it("buyer request signed by another wallet → 401; by the payer → requested; no second request", async () => {
    const buyer = await chain.newBuyer(5_000_000n);
    const order = await buy(app, buyer.key);
    const sign = async (key: Hex) => {
      const ch = await post(app, `/api/orders/${order.order_id}/refund-request/challenge`);
      expect(ch.statusCode, ch.body).toBe(201);
      const { nonce, message } = ch.json() as { nonce: string; message: string };
      return post(app, `/api/orders/${order.order_id}/refund-request`, {
        nonce,
        signature: await privateKeyToAccount(key).signMessage({ message }),
      });
    };
    const wrong = await sign(evmKey().key);
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().code).toBe("refund_signature_invalid");
    const ok = await sign(buyer.key);
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().state).toBe("requested");
    const twice = await post(app, `/api/orders/${order.order_id}/refund-request/challenge`);
    expect(twice.statusCode).toBe(409);
    expect(await chain.balanceOf(buyer.address)).toBe(5_000_000n - PRICE);
  });

  it("buyer refund requests are rate-limited per IP (checkout group: 10 a minute, then 429)", async () => {
    const limitedDb = (await freshDatabase("sqlite")).db;
    const limited = await appOn(limitedDb, env({ RATE_LIMIT_ENABLED: "true" }));
    try {
      const ask = (url: string) =>
        limited.inject({
          method: "POST",
          url,
          remoteAddress: "10.9.8.7",
          payload: { nonce: "0".repeat(32), signature: "0x".padEnd(140, "1") },
        });
      const codes: number[] = [];
      for (let i = 0; i < 6; i++)
        codes.push((await ask("/api/orders/ord_nothing/refund-request/challenge")).statusCode);
      for (let i = 0; i < 6; i++) codes.push((await ask("/api/orders/ord_nothing/refund-request")).statusCode);
      expect(codes.slice(0, 10).every((c) => c === 404)).toBe(true);
      expect(codes.slice(10)).toEqual([429, 429]);
    } finally {
      await limited.close();
      await limitedDb.close();
    }
  });

  it("no REFUND_EVM_KEY: owed and listed; nothing moves", async () => {
    const owedDb = (await freshDatabase("sqlite")).db;
    const plain = await appOn(owedDb, env({ REFUND_EVM_KEY: "" }));
    try {
      const buyer = await chain.newBuyer(5_000_000n);
      const order = await buy(plain, buyer.key);
      const sent = await transfersFromWallet();
      const res = await refund(plain, order.order_id);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().state).toBe("owed");
      const owed = await plain.inject({ method: "GET", url: "/api/admin/refunds?state=owed", headers: ADMIN });
      expect(owed.json().refunds.map((r: { order_id: string }) => r.order_id)).toEqual([order.order_id]);
      expect(await transfersFromWallet()).toBe(sent);
      expect(await chain.balanceOf(buyer.address)).toBe(5_000_000n - PRICE);
    } finally {
      await plain.close();
      await owedDb.close();
    }
  });
});
