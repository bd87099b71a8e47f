import { x402Client } from "@x402/core/client";
import { encodePaymentSignatureHeader } from "@x402/core/http";
import { toClientEvmSigner } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../src/db/database.js";
import type { App } from "../../src/http/types.js";
import { paymentIdentifierClientExtension } from "../../src/payments/x402/buyer.js";
import { verifyReceipt } from "../../src/receipts/verify.js";
import { appOn, evmKey, paymentId, paymentRequired } from "../payments/x402/helpers.js";
import { type EvmChain, startAnvil } from "../support/chains/evm.js";
import { freshDatabase } from "../support/databases.js";

/**
 * Every purchase answer carries the receipt of what it bought (issue #22 item 5): the x402 200 of a
 * product, its replay, and the access page give the same signed bytes, and the receipt verifies
 * against the service's published key set with the purchase's facts.
 */

let chain: EvmChain;
let db: Db;
let app: App;
const seller = evmKey().address;

beforeAll(async () => {
  chain = await startAnvil();
  const gas = await chain.newBuyer(0n);
  ({ db } = await freshDatabase("sqlite"));
  app = await appOn(db, {
    PAY_TO_BASE: seller,
    BASE_RPC_URL: chain.rpcUrl,
    X402_EVM_FACILITATOR_KEY: gas.key,
    CONTACT_EMAIL: "ops@lab.test",
  });
});
afterAll(async () => {
  await app?.close();
  await db?.close();
  await chain?.stop();
});

async function buy(key: Hex, id: string) {
  const challenge = await app.inject({ method: "POST", url: "/api/x402-products", payload: { sku: "gao" } });
  expect(challenge.statusCode).toBe(402);
  const client = new x402Client().register(
    "eip155:*",
    new ExactEvmScheme(toClientEvmSigner(privateKeyToAccount(key), chain.publicClient as never)),
  );
  client.registerExtension(paymentIdentifierClientExtension(id) as never);
  const payload = await client.createPaymentPayload(paymentRequired(challenge.headers));
  const header = encodePaymentSignatureHeader(payload);
  const paid = () =>
    app.inject({
      method: "POST",
      url: "/api/x402-products",
      payload: { sku: "gao" },
      headers: { "payment-signature": header },
    });
  return { paid };
}

describe("receipts in purchase answers", () => {
  it("an x402 purchase answers its signed receipt; a replay and the access page give the same bytes", async () => {
    const buyer = await chain.newBuyer(5_000_000n);
    const { paid } = await buy(buyer.key, paymentId());
    const first = await paid();
    expect(first.statusCode).toBe(200);
    const body = first.json();
    expect(typeof body.receipt).toBe("string");

    const jwks = (await app.inject({ method: "GET", url: "/.well-known/jwks.json" })).json();
    const checked = await verifyReceipt(body.receipt, jwks);
    expect(checked.ok).toBe(true);
    if (!checked.ok) return;
    expect(checked.claims).toMatchObject({
      order_id: body.order_id,
      transaction: body.transaction,
      amount: "1000000",
      currency: "USDC",
      rail: "x402_base_usdc",
    });
    expect(String(checked.claims.payer).toLowerCase()).toBe(buyer.address.toLowerCase());

    const again = await paid();
    expect(again.statusCode).toBe(200);
    expect(again.json().receipt).toBe(body.receipt);

    const access = await app.inject({
      method: "GET",
      url: new URL(body.access_url).pathname,
      headers: { accept: "application/json" },
    });
    expect(access.statusCode).toBe(200);
    expect(access.json().receipt).toBe(body.receipt);
  });

  it("a receipt edited by the buyer (another amount) no longer verifies", async () => {
    const buyer = await chain.newBuyer(5_000_000n);
    const { paid } = await buy(buyer.key, paymentId());
    const r = await paid();
    expect(r.statusCode).toBe(200);
    const [h, p, s] = (r.json().receipt as string).split(".");
    const claims = JSON.parse(Buffer.from(p as string, "base64url").toString("utf8"));
    claims.amount = "1";
    const forged = `${h}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.${s}`;
    const jwks = (await app.inject({ method: "GET", url: "/.well-known/jwks.json" })).json();
    expect(await verifyReceipt(forged, jwks)).toMatchObject({ ok: false, reason: "signature" });
  });
});
