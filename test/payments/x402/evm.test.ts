import { randomBytes } from "node:crypto";
import { x402Client } from "@x402/core/client";
import { x402Facilitator } from "@x402/core/facilitator";
import { encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentRequired } from "@x402/core/types";
import { toClientEvmSigner, toFacilitatorEvmSigner } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { ExactEvmScheme as EvmFacilitatorScheme } from "@x402/evm/exact/facilitator";
import { ExactEvmSchemeV1 } from "@x402/evm/v1";
import { createWalletClient, getAddress, type Hex, http, nonceManager } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../../src/db/database.js";
import type { App } from "../../../src/http/types.js";
import { paymentIdentifierClientExtension } from "../../../src/payments/x402/buyer.js";
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from "../../../src/payments/x402/evm.js";
import { type EvmChain, startAnvil } from "../../support/chains/evm.js";
import { startHttpFacilitator, type TestFacilitator } from "../../support/chains/facilitator.js";
import { ENGINES, freshDatabase } from "../../support/databases.js";
import {
  appOn,
  b64json,
  countRows,
  evmKey,
  expectNoOrderData,
  paymentId,
  paymentRequired,
  paymentResponse,
  signedTxHeader,
} from "./helpers.js";

const BASE_USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" as const;
const GAO = "1000000";

let chain: EvmChain;
let gasKey: Hex;
const seller = evmKey().address;

beforeAll(async () => {
  chain = await startAnvil();
  gasKey = (await chain.newBuyer(0n)).key;
});
afterAll(async () => chain?.stop());

const env = (extra: Record<string, string> = {}) => ({
  PAY_TO_BASE: seller,
  BASE_RPC_URL: chain.rpcUrl,
  X402_EVM_FACILITATOR_KEY: gasKey,
  CONTACT_EMAIL: "ops@lab.test",
  ...extra,
});

async function post(app: App, body: unknown, headers: Record<string, string> = {}) {
  return app.inject({ method: "POST", url: "/api/x402-products", headers, payload: body as object });
}

/**
 * The official v2 client, unchanged: x402Client + ExactEvmScheme over a viem local account; with
 * `id`, the payment-identifier extension registered (what lets it prove it is the buyer on a retry).
 */
function stockClient(key: Hex, id?: string) {
  const account = privateKeyToAccount(key);
  const client = new x402Client().register(
    "eip155:*",
    new ExactEvmScheme(toClientEvmSigner(account, chain.publicClient as never)),
  );
  if (id) client.registerExtension(paymentIdentifierClientExtension(id) as never);
  return client;
}

async function payHeader(app: App, key: Hex, body: unknown, id?: string): Promise<string> {
  const challenge = await post(app, body);
  expect(challenge.statusCode).toBe(402);
  const payload = await stockClient(key, id).createPaymentPayload(paymentRequired(challenge.headers));
  return encodePaymentSignatureHeader(payload);
}

interface AuthOpts {
  to?: string;
  value?: string;
  validAfter?: bigint;
  validBefore?: bigint;
  chainId?: number;
  name?: string;
  version?: string;
  verifyingContract?: `0x${string}`;
  signWith?: Hex;
  from?: `0x${string}`;
}

/** A hand-made EIP-3009 authorization (for the negative cases). */
async function signAuth(key: Hex, o: AuthOpts = {}) {
  const account = privateKeyToAccount(o.signWith ?? key);
  const now = BigInt(Math.floor(Date.now() / 1000));
  const authorization = {
    from: o.from ?? privateKeyToAccount(key).address,
    to: getAddress(o.to ?? seller),
    value: BigInt(o.value ?? GAO),
    validAfter: o.validAfter ?? 0n,
    validBefore: o.validBefore ?? now + 300n,
    nonce: `0x${randomBytes(32).toString("hex")}` as Hex,
  };
  const signature = await account.signTypedData({
    domain: {
      name: o.name ?? "USD Coin",
      version: o.version ?? "2",
      chainId: o.chainId ?? 8453,
      verifyingContract: o.verifyingContract ?? BASE_USDC,
    },
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: "TransferWithAuthorization",
    message: authorization,
  });
  return {
    signature,
    authorization: {
      from: authorization.from,
      to: authorization.to,
      value: authorization.value.toString(),
      validAfter: authorization.validAfter.toString(),
      validBefore: authorization.validBefore.toString(),
      nonce: authorization.nonce,
    },
  };
}

const v2Header = (payload: unknown, accepted: Record<string, unknown> = {}) =>
  b64json({
    x402Version: 2,
    accepted: {
      scheme: "exact",
      network: "eip155:8453",
      asset: BASE_USDC,
      payTo: seller,
      amount: GAO,
      maxTimeoutSeconds: 300,
      extra: { name: "USD Coin", version: "2" },
      ...accepted,
    },
    payload,
  });

describe.each(ENGINES)("x402 on Base (anvil, chain 8453) — %s", (engine) => {
  let app: App;
  let db: Db;
  beforeAll(async () => {
    db = (await freshDatabase(engine)).db;
    app = await appOn(db, env());
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it("§7.6 the stock v2 client pays via PAYMENT-SIGNATURE → 200, mined transfer of exactly the price to payTo", async () => {
    const buyer = await chain.newBuyer(5_000_000n);
    const before = await chain.balanceOf(seller);
    const header = await payHeader(app, buyer.key, { sku: "gao-entry", note: "agent:bot-7" });
    const res = await post(
      app,
      { sku: "gao-entry", note: "agent:bot-7" },
      { "PAYMENT-SIGNATURE": header, origin: "https://agent.example" },
    );
    expect(res.statusCode).toBe(200);
    // browser-based agents can read the receipt headers (CORS)
    expect(res.headers["access-control-expose-headers"]).toContain("PAYMENT-RESPONSE");
    expect(res.headers["access-control-expose-headers"]).toContain("X-PAYMENT-RESPONSE");
    expect(res.headers["cache-control"]).toBe("private, no-store");
    const body = res.json();
    expect(body).toMatchObject({ sku: "gao-entry", amount_usd: "1.00", rail: "x402_base_usdc" });
    expect(body.order_id).toMatch(/^ord_/);
    expect(body.access_url).toMatch(/^http:\/\/lab\.test\/access\//);
    const pr = paymentResponse(res.headers);
    expect(pr.success).toBe(true);
    expect(pr.transaction).toBe(body.transaction);
    expect(res.headers["x-payment-response"]).toBe(res.headers["payment-response"]);
    const receipt = await chain.publicClient.getTransactionReceipt({ hash: pr.transaction as Hex });
    expect(receipt.status).toBe("success");
    expect(await chain.balanceOf(seller)).toBe(before + 1_000_000n);
    expect(await chain.balanceOf(buyer.address)).toBe(4_000_000n);
    const order = await app.services.orders.get(body.order_id);
    expect(order.agent_id).toBe("bot-7");
    expect(order.transaction_ref).toBe(pr.transaction);
    const proof = await db.kysely
      .selectFrom("payment_proofs")
      .selectAll()
      .where("order_id", "=", body.order_id)
      .executeTakeFirstOrThrow();
    expect(proof.state).toBe("granted");
    expect(proof.settlement_tx).toBe(pr.transaction);
    const attempts = await db.kysely
      .selectFrom("settlement_attempts")
      .selectAll()
      .where("proof_key", "=", proof.proof_key)
      .execute();
    expect(attempts.map((a) => a.outcome)).toEqual(["success"]);

    // access_url opens the entitlement (JSON for agents, HTML for browsers); revocable by the operator
    const path = new URL(body.access_url).pathname;
    const json = await app.inject({ method: "GET", url: path });
    expect(json.statusCode).toBe(200);
    expect(json.json().order.order_id).toBe(body.order_id);
    const html = await app.inject({ method: "GET", url: path, headers: { accept: "text/html" } });
    expect(html.headers["content-type"]).toMatch(/text\/html/);
    expect(html.body).toContain(body.order_id);
    const revoke = await app.inject({
      method: "POST",
      url: `/api/admin/orders/${body.order_id}/revoke`,
      headers: { authorization: "Bearer admin-token-0123456789" },
      payload: { reason: "test" },
    });
    expect(revoke.statusCode).toBe(200);
    expect((await app.inject({ method: "GET", url: path })).statusCode).toBe(410);
  });

  it("§7.7 the same kind of payment in X-PAYMENT (v2 JSON) and as a v1 payload (network base) is accepted", async () => {
    const buyer = await chain.newBuyer(5_000_000n);
    const v2 = await payHeader(app, buyer.key, { sku: "gao" });
    const a = await post(app, { sku: "gao" }, { "X-PAYMENT": v2 });
    expect(a.statusCode).toBe(200);

    const challenge = (await post(app, { sku: "gao" })).json();
    const base = challenge.accepts.find((x: { chain: string }) => x.chain === "base");
    const v1Required = {
      x402Version: 1,
      error: "",
      accepts: [{ ...base, network: "base" }],
    } as unknown as PaymentRequired;
    const account = privateKeyToAccount(buyer.key);
    const v1Client = new x402Client().registerV1(
      "base",
      new ExactEvmSchemeV1(toClientEvmSigner(account, chain.publicClient as never)),
    );
    const v1Payload = await v1Client.createPaymentPayload(v1Required);
    expect(v1Payload.x402Version).toBe(1);
    const b = await post(app, { sku: "gao" }, { "X-PAYMENT": b64json(v1Payload) });
    expect(b.statusCode).toBe(200);
    expect(b.json().order_id).not.toBe(a.json().order_id);
    expect(await chain.balanceOf(buyer.address)).toBe(3_000_000n);
  });

  it("§7.9/§7.10 replay with the same body and payment identifier → same order, no second transfer; another body → 409", async () => {
    const buyer = await chain.newBuyer(5_000_000n);
    const header = await payHeader(app, buyer.key, { sku: "gao", email: "a@example.com" }, paymentId());
    const first = await post(app, { sku: "gao", email: "a@example.com" }, { "PAYMENT-SIGNATURE": header });
    expect(first.statusCode).toBe(200);
    const transfers = await chain.transfersTo(seller);
    const ordersBefore = await countRows(app, "orders");
    const again = await post(app, { sku: "gao", email: "a@example.com" }, { "X-PAYMENT": header });
    expect(again.statusCode).toBe(200);
    expect(again.json().order_id).toBe(first.json().order_id);
    expect(again.json().access_url).toBe(first.json().access_url);
    expect(again.headers["payment-response"]).toBe(first.headers["payment-response"]);
    const other = await post(app, { sku: "sponsor", email: "a@example.com" }, { "PAYMENT-SIGNATURE": header });
    expect(other.statusCode).toBe(409);
    expect(other.headers["content-type"]).toMatch(/problem\+json/);
    expect(other.json().code).toBe("payment_proof_already_used");
    expectNoOrderData(other.body);
    const otherBody = await post(app, { sku: "gao", email: "b@example.com" }, { "PAYMENT-SIGNATURE": header });
    expect(otherBody.statusCode).toBe(409);
    expect(await countRows(app, "orders")).toBe(ordersBefore);
    expect(await chain.transfersTo(seller)).toBe(transfers);
    expect(await chain.balanceOf(buyer.address)).toBe(4_000_000n);
  });

  it("§7.11 20 concurrent requests with one proof → exactly one order and one on-chain transfer", async () => {
    const buyer = await chain.newBuyer(5_000_000n);
    const header = await payHeader(app, buyer.key, { sku: "gao" }, paymentId());
    const transfers = await chain.transfersTo(seller);
    const ordersBefore = await countRows(app, "orders");
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        post(app, { sku: "gao" }, i % 2 ? { "PAYMENT-SIGNATURE": header } : { "X-PAYMENT": header }),
      ),
    );
    const codes = results.map((r) => r.statusCode);
    expect(codes.every((c) => c === 200 || c === 202)).toBe(true);
    const orderIds = new Set(results.filter((r) => r.statusCode === 200).map((r) => r.json().order_id));
    expect(orderIds.size).toBe(1);
    for (const r of results.filter((x) => x.statusCode === 202)) expect(r.headers["retry-after"]).toBeTruthy();
    expect(await countRows(app, "orders")).toBe(ordersBefore + 1);
    expect(await chain.transfersTo(seller)).toBe(transfers + 1);
    expect(await chain.balanceOf(buyer.address)).toBe(4_000_000n);
    // a later retry gets the one order
    const later = await post(app, { sku: "gao" }, { "X-PAYMENT": header });
    expect(later.statusCode).toBe(200);
    expect(orderIds.has(later.json().order_id)).toBe(true);
  });

  it("Base transaction-hash proof signed by its sender: buys once; its replay with the same Idempotency-Key is the same order", async () => {
    const buyer = await chain.newBuyer(30_000_000n);
    const hash = await chain.transfer(buyer.key, seller, 29_000_000n);
    // a bare hash proves nothing: 402 saying what the sender must sign
    const bare = await post(app, { sku: "sponsor" }, { "X-PAYMENT": hash });
    expect(bare.statusCode).toBe(402);
    expect(bare.json().code).toBe("transaction_proof_signature_required");
    expect(bare.json().sign.eip191_message).toContain(hash);
    expect(bare.json().sign.eip191_message).toContain("sponsor");
    const key = { "Idempotency-Key": paymentId() };
    const signed = await signedTxHeader(buyer.key, hash, "sponsor");
    const res = await post(app, { sku: "sponsor" }, { "X-PAYMENT": signed, ...key });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().transaction).toBe(hash);
    const again = await post(app, { sku: "sponsor" }, { "X-PAYMENT": signed, ...key });
    expect(again.json().order_id).toBe(res.json().order_id);
    // the same proof without the buyer's key: no order data
    const stranger = await post(app, { sku: "sponsor" }, { "X-PAYMENT": signed });
    expect(stranger.statusCode).toBe(409);
    expect(stranger.json().code).toBe("payment_already_redeemed");
    expectNoOrderData(stranger.body);
    // the same transfer cannot pay for another sku
    const reuse = await post(app, { sku: "donate" }, { "X-PAYMENT": await signedTxHeader(buyer.key, hash, "donate") });
    expect(reuse.statusCode).toBe(409);
    expect(reuse.json().code).toBe("payment_proof_already_used");
    // a transfer of another amount is refused with the reason
    const short = await chain.transfer(buyer.key, seller, 500_000n);
    const wrong = await post(app, { sku: "donate" }, { "X-PAYMENT": await signedTxHeader(buyer.key, short, "donate") });
    expect(wrong.statusCode).toBe(402);
    expect(wrong.json().code).toBe("invalid_transfer_amount_mismatch");
    const none = `0x${"12".repeat(32)}` as const;
    const unknown = await post(
      app,
      { sku: "donate" },
      { "X-PAYMENT": await signedTxHeader(buyer.key, none, "donate") },
    );
    expect(unknown.statusCode).toBe(402);
    expect(unknown.json().code).toBe("invalid_transaction_not_found");
  });

  it("an open claim of a transfer does not block its payer's x402 purchase; the approved claim is then refused (one payment, one order)", async () => {
    const buyer = await chain.newBuyer(30_000_000n);
    const hash = await chain.transfer(buyer.key, seller, 29_000_000n);
    const claim = await app.inject({
      method: "POST",
      url: "/api/claims",
      payload: {
        sku: "sponsor",
        email: "buyer@example.com",
        rail: "crypto_manual_evm",
        tx: hash.toUpperCase().replace("0X", "0x"),
      },
    });
    expect(claim.statusCode, claim.body).toBeLessThan(300);
    const res = await post(app, { sku: "sponsor" }, { "X-PAYMENT": await signedTxHeader(buyer.key, hash, "sponsor") });
    expect(res.statusCode, res.body).toBe(200);
    const approve = await app.inject({
      method: "POST",
      url: `/api/admin/claims/${claim.json().claim_id}/approve`,
      headers: { authorization: "Bearer admin-token-0123456789" },
      payload: {},
    });
    expect(approve.statusCode, approve.body).toBe(409);
    expect(approve.json().code).toBe("tx_already_used");
    const orders = await app.services.db.kysely
      .selectFrom("orders")
      .selectAll()
      .where("transaction_ref", "=", hash)
      .execute();
    expect(orders).toHaveLength(1);
  });

  it("§7.12 our own EIP-3009 settlement's hash is never a transaction-hash proof", async () => {
    const buyer = await chain.newBuyer(5_000_000n);
    const header = await payHeader(app, buyer.key, { sku: "gao" });
    const paid = await post(app, { sku: "gao" }, { "PAYMENT-SIGNATURE": header });
    expect(paid.statusCode).toBe(200);
    const orders = await countRows(app, "orders");
    const tx = paid.json().transaction as Hex;
    const unsigned = await post(app, { sku: "gao" }, { "X-PAYMENT": tx });
    expect(unsigned.statusCode).toBe(402);
    // even signed by the buyer itself: the settlement belongs to the x402 payment that made it
    const res = await post(app, { sku: "gao" }, { "X-PAYMENT": await signedTxHeader(buyer.key, tx, "gao-entry") });
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe("own_settlement_transaction");
    expectNoOrderData(res.body);
    expect(await countRows(app, "orders")).toBe(orders);
  });
});

describe("x402 on Base: refusals, timeouts, crashes, facilitators", () => {
  let app: App;
  let db: Db;
  beforeAll(async () => {
    db = (await freshDatabase("sqlite")).db;
    app = await appOn(db, env());
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  async function refused(header: string, reason: string, buyer: `0x${string}`) {
    const orders = await countRows(app, "orders");
    const transfers = await chain.transfersTo(seller);
    const before = await chain.balanceOf(buyer);
    const res = await post(app, { sku: "gao" }, { "PAYMENT-SIGNATURE": header });
    expect(res.statusCode, res.body).toBe(402);
    expect(res.json().code).toBe(reason);
    expect(res.json().accepts).toHaveLength(1);
    expect(res.headers["payment-required"]).toBeTruthy();
    expect(await countRows(app, "orders")).toBe(orders);
    expect(await chain.transfersTo(seller)).toBe(transfers);
    expect(await chain.balanceOf(buyer)).toBe(before);
  }

  it("§7.13 value ≠ price, to ≠ payTo, wrong asset, wrong chain id / domain name, another key → 402 with the reason", async () => {
    const buyer = await chain.newBuyer(5_000_000n);
    await refused(
      v2Header(await signAuth(buyer.key, { value: "999999" })),
      "invalid_exact_evm_payload_authorization_value_mismatch",
      buyer.address,
    );
    await refused(
      v2Header(await signAuth(buyer.key, { value: "1000001" })),
      "invalid_exact_evm_payload_authorization_value_mismatch",
      buyer.address,
    );
    await refused(
      v2Header(await signAuth(buyer.key, { to: evmKey().address })),
      "invalid_exact_evm_recipient_mismatch",
      buyer.address,
    );
    const otherAsset = "0x1111111111111111111111111111111111111111";
    await refused(
      v2Header(await signAuth(buyer.key, { verifyingContract: otherAsset }), { asset: otherAsset }),
      "invalid_exact_evm_asset_mismatch",
      buyer.address,
    );
    await refused(
      v2Header(await signAuth(buyer.key, { verifyingContract: otherAsset })),
      "invalid_exact_evm_signature",
      buyer.address,
    );
    await refused(
      v2Header(await signAuth(buyer.key, { chainId: 84532 })),
      "invalid_exact_evm_signature",
      buyer.address,
    );
    await refused(v2Header(await signAuth(buyer.key, { name: "USDC" })), "invalid_exact_evm_signature", buyer.address);
    await refused(
      v2Header(await signAuth(buyer.key, { signWith: evmKey().key })),
      "invalid_exact_evm_signature",
      buyer.address,
    );
  });

  it("§7.14 validBefore past or < now + 6 s, validAfter in the future → 402 valid_before / valid_after", async () => {
    const buyer = await chain.newBuyer(5_000_000n);
    const now = BigInt(Math.floor(Date.now() / 1000));
    await refused(
      v2Header(await signAuth(buyer.key, { validBefore: now - 10n })),
      "invalid_exact_evm_payload_authorization_valid_before",
      buyer.address,
    );
    await refused(
      v2Header(await signAuth(buyer.key, { validBefore: now + 3n })),
      "invalid_exact_evm_payload_authorization_valid_before",
      buyer.address,
    );
    await refused(
      v2Header(await signAuth(buyer.key, { validAfter: now + 120n })),
      "invalid_exact_evm_payload_authorization_valid_after",
      buyer.address,
    );
  });

  it("§7.15 a buyer holding less than the price → 402 insufficient_funds, nothing settled", async () => {
    const buyer = await chain.newBuyer(999_999n);
    await refused(v2Header(await signAuth(buyer.key)), "insufficient_funds", buyer.address);
  });

  it("§7.19 settlement timeout → 202 + Retry-After (never a fresh 402), proof pending_unknown; reconciled into one order", async () => {
    const slow = await appOn(db, env({ X402_SETTLE_TIMEOUT_SECONDS: "1" }));
    try {
      const buyer = await chain.newBuyer(5_000_000n);
      const header = await payHeader(slow, buyer.key, { sku: "gao" }, paymentId());
      await chain.setAutomine(false);
      let res: Awaited<ReturnType<typeof post>>;
      try {
        res = await post(slow, { sku: "gao" }, { "PAYMENT-SIGNATURE": header });
        expect(res.statusCode, res.body).toBe(202);
        expect(res.headers["retry-after"]).toBe("5");
        expect(res.json().code).toBe("payment_settlement_pending");
        const again = await post(slow, { sku: "gao" }, { "PAYMENT-SIGNATURE": header });
        expect(again.statusCode).toBe(202);
      } finally {
        await chain.setAutomine(true);
      }
      await chain.mine(1);
      const proof = await db.kysely
        .selectFrom("payment_proofs")
        .selectAll()
        .where("state", "=", "pending_unknown")
        .execute();
      expect(proof).toHaveLength(1);
      const transfers = await chain.transfersTo(seller);
      const r = await slow.services.x402.reconcile();
      expect(r.granted).toBe(1);
      const retry = await post(slow, { sku: "gao" }, { "PAYMENT-SIGNATURE": header });
      expect(retry.statusCode).toBe(200);
      expect(await chain.transfersTo(seller)).toBe(transfers);
      expect(await chain.balanceOf(buyer.address)).toBe(4_000_000n);
      const orders = await db.kysely
        .selectFrom("orders")
        .selectAll()
        .where("transaction_ref", "=", retry.json().transaction)
        .execute();
      expect(orders).toHaveLength(1);
    } finally {
      await slow.close();
    }
  });

  it("§7.19 a pending proof retried by the agent is reconciled in-line into the one order", async () => {
    const slow = await appOn(db, env({ X402_SETTLE_TIMEOUT_SECONDS: "1" }));
    try {
      const buyer = await chain.newBuyer(5_000_000n);
      const header = await payHeader(slow, buyer.key, { sku: "gao" }, paymentId());
      await chain.setAutomine(false);
      try {
        expect((await post(slow, { sku: "gao" }, { "X-PAYMENT": header })).statusCode).toBe(202);
      } finally {
        await chain.setAutomine(true);
      }
      await chain.mine(1);
      const retry = await post(slow, { sku: "gao" }, { "X-PAYMENT": header });
      expect(retry.statusCode, retry.body).toBe(200);
      expect(await chain.balanceOf(buyer.address)).toBe(4_000_000n);
    } finally {
      await slow.close();
    }
  });

  it("§7.20 a crash between settlement and order creation is recovered at start-up into exactly one order", async () => {
    const { db: crashDb } = await freshDatabase("sqlite");
    const first = await appOn(crashDb, env());
    const buyer = await chain.newBuyer(5_000_000n);
    const header = await payHeader(first, buyer.key, { sku: "gao", note: "agent:crashy" }, paymentId());
    first.services.x402.hooks.afterSettle = async () => {
      throw new Error("simulated crash after settlement");
    };
    const res = await post(first, { sku: "gao", note: "agent:crashy" }, { "PAYMENT-SIGNATURE": header });
    expect(res.statusCode).toBe(500);
    expect(await chain.balanceOf(buyer.address)).toBe(4_000_000n); // paid on chain…
    expect(await countRows(first, "orders")).toBe(0); // …but no order
    await first.close();
    const transfers = await chain.transfersTo(seller);
    const restarted = await appOn(crashDb, env()); // start-up reconciliation runs here
    try {
      expect(await countRows(restarted, "orders")).toBe(1);
      const order = await crashDb.kysely.selectFrom("orders").selectAll().executeTakeFirstOrThrow();
      expect(order.agent_id).toBe("crashy");
      const retry = await post(restarted, { sku: "gao", note: "agent:crashy" }, { "PAYMENT-SIGNATURE": header });
      expect(retry.statusCode).toBe(200);
      expect(retry.json().order_id).toBe(order.id);
      expect(await chain.transfersTo(seller)).toBe(transfers);
      expect(await countRows(restarted, "orders")).toBe(1);
    } finally {
      await restarted.close();
      await crashDb.close();
    }
  });

  it("tx-hash proofs honour X402_MIN_CONFIRMATIONS (202 until deep enough) and X402_TX_MAX_AGE_SECONDS", async () => {
    const deep = await appOn(db, env({ X402_MIN_CONFIRMATIONS: "3", X402_TX_MAX_AGE_SECONDS: "60" }));
    try {
      const buyer = await chain.newBuyer(2_000_000n);
      const pay = async () => {
        const hash = await chain.transfer(buyer.key, seller, 1_000_000n);
        return hash;
      };
      const fresh = await pay();
      const proof = await signedTxHeader(buyer.key, fresh, "gao-entry");
      const early = await post(deep, { sku: "gao" }, { "X-PAYMENT": proof });
      expect(early.statusCode).toBe(202);
      expect(early.json().code).toBe("transaction_not_confirmed");
      expect(early.headers["retry-after"]).toBeTruthy();
      await chain.mine(2);
      const ok = await post(deep, { sku: "gao" }, { "X-PAYMENT": proof });
      expect(ok.statusCode, ok.body).toBe(200);

      const old = await pay();
      await chain.rpc("evm_increaseTime", [120]);
      await chain.mine(3);
      const stale = await post(
        deep,
        { sku: "gao" },
        { "X-PAYMENT": await signedTxHeader(buyer.key, old, "gao-entry") },
      );
      expect(stale.statusCode).toBe(402);
      expect(stale.json().code).toBe("invalid_transaction_too_old");
    } finally {
      await deep.close();
    }
  });

  it("operators see the proof ledger and can run a reconciliation pass (ADMIN_TOKEN)", async () => {
    const auth = { authorization: "Bearer admin-token-0123456789" };
    expect((await app.inject({ method: "GET", url: "/api/admin/x402/proofs" })).statusCode).toBe(401);
    const list = await app.inject({
      method: "GET",
      url: "/api/admin/x402/proofs?state=granted&limit=5",
      headers: auth,
    });
    expect(list.statusCode).toBe(200);
    const body = list.json();
    expect(body.total).toBeGreaterThan(0);
    expect(body.items.length).toBeLessThanOrEqual(5);
    for (const item of body.items) {
      expect(item.state).toBe("granted");
      expect(item.order_id).toMatch(/^ord_/);
      expect(item).not.toHaveProperty("payload");
    }
    expect(
      (await app.inject({ method: "GET", url: "/api/admin/x402/proofs?state=nope", headers: auth })).statusCode,
    ).toBe(400);
    const pass = await app.inject({ method: "POST", url: "/api/admin/x402/reconcile", headers: auth });
    expect(pass.statusCode).toBe(200);
    expect(pass.json()).toMatchObject({ examined: expect.any(Number), granted: expect.any(Number) });
  });

  it("refuses to start when BASE_RPC_URL's chain id is not BASE_CHAIN_ID (8453 unless set)", async () => {
    await expect(appOn(db, env({ BASE_CHAIN_ID: "84532" }))).rejects.toThrow(
      /BASE_RPC_URL serves chain id 8453, but the Base rail needs 84532/,
    );
  });
});

describe("x402 on Base through a hosted facilitator (X402_FACILITATOR_URL)", () => {
  let hosted: TestFacilitator;
  let app: App;
  let db: Db;
  beforeAll(async () => {
    const publicClient = chain.publicClient;
    // a separate gas key so the hosted facilitator's nonces never race the in-process one's
    const hostedGas = await chain.newBuyer(0n);
    const hostedWallet = createWalletClient({
      account: privateKeyToAccount(hostedGas.key, { nonceManager }),
      chain: chain.wallet.chain,
      transport: http(chain.rpcUrl),
    });
    const signer = toFacilitatorEvmSigner({
      address: hostedWallet.account.address,
      readContract: (a) => publicClient.readContract(a as never),
      verifyTypedData: (a) => publicClient.verifyTypedData(a as never),
      writeContract: (a) => hostedWallet.writeContract(a as never),
      sendTransaction: (a) => hostedWallet.sendTransaction(a as never),
      waitForTransactionReceipt: (a) => publicClient.waitForTransactionReceipt(a as never),
      getCode: (a) => publicClient.getCode(a),
    });
    hosted = await startHttpFacilitator(
      new x402Facilitator().register("eip155:8453", new EvmFacilitatorScheme(signer)),
    );
    db = (await freshDatabase("sqlite")).db;
    // no gas key of our own: settlement goes through the hosted facilitator; BASE_RPC_URL stays for checks
    app = await appOn(db, { PAY_TO_BASE: seller, BASE_RPC_URL: chain.rpcUrl, X402_FACILITATOR_URL: hosted.url });
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
    await hosted?.stop();
  });

  it("a stock client pays and the hosted facilitator settles → 200", async () => {
    const buyer = await chain.newBuyer(5_000_000n);
    const header = await payHeader(app, buyer.key, { sku: "gao" });
    const res = await post(app, { sku: "gao" }, { "PAYMENT-SIGNATURE": header });
    expect(res.statusCode, res.body).toBe(200);
    expect(hosted.calls.settle).toBeGreaterThan(0);
    expect(await chain.balanceOf(buyer.address)).toBe(4_000_000n);
  });

  it("§7.18 settle answering HTTP 200 with success:false → 402 with its errorReason; no order", async () => {
    const buyer = await chain.newBuyer(5_000_000n);
    const header = await payHeader(app, buyer.key, { sku: "gao" });
    const drain = evmKey().address;
    hosted.beforeSettle = async () => {
      // between verification and settlement the payer moves its funds away
      await chain.transfer(buyer.key, drain, 5_000_000n);
    };
    const orders = await countRows(app, "orders");
    try {
      const res = await post(app, { sku: "gao" }, { "PAYMENT-SIGNATURE": header });
      expect(res.statusCode, res.body).toBe(402);
      expect(res.json().code).toMatch(/^invalid_exact_evm_|insufficient/);
      expect(res.json().error).toBe(res.json().code);
    } finally {
      hosted.beforeSettle = undefined;
    }
    expect(await countRows(app, "orders")).toBe(orders);
    expect(await chain.balanceOf(seller)).toBeGreaterThan(0n);
    const proof = await db.kysely.selectFrom("payment_proofs").selectAll().where("state", "=", "failed").execute();
    expect(proof.length).toBe(1);
  });

  it("§7.21 facilitator /supported unreachable at start-up → paid routes answer 503, never 200", async () => {
    const { db: d2 } = await freshDatabase("sqlite");
    const down = await appOn(d2, {
      PAY_TO_BASE: seller,
      BASE_RPC_URL: chain.rpcUrl,
      X402_FACILITATOR_URL: "http://127.0.0.1:9", // nothing listens on the discard port
    });
    try {
      const buyer = await chain.newBuyer(5_000_000n);
      const header = await payHeader(down, buyer.key, { sku: "gao" });
      const res = await post(down, { sku: "gao" }, { "PAYMENT-SIGNATURE": header });
      expect(res.statusCode).toBe(503);
      expect(res.json().code).toBe("settlement_unavailable");
      expect(await countRows(down, "orders")).toBe(0);
      expect(await chain.balanceOf(buyer.address)).toBe(5_000_000n);
    } finally {
      await down.close();
      await d2.close();
    }
  });
});
