import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { generateKeyPairSigner, type KeyPairSigner } from "@solana/kit";
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { Challenge, Credential, Receipt } from "mppx";
import { Mppx } from "mppx/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../../src/db/database.js";
import type { App } from "../../../src/http/types.js";
import { type SvmChain, startLiteSvm } from "../../support/chains/svm.js";
import { freshDatabase } from "../../support/databases.js";
import { appOn, b64json, countRows, expectNoOrderData, solanaKey } from "../x402/helpers.js";

/** A response body read loosely (the assertions check its shape). */
// biome-ignore lint/suspicious/noExplicitAny: test bodies are read loosely
type Json = Record<string, any>;
const jsonOf = async (r: Response): Promise<Json> => (await r.json()) as Json;

/**
 * MPP beside x402 on Solana (LiteSVM behind JSON-RPC, USDC at the mainnet mint): @solana/mpp's own
 * client (`solana.charge` under mppx's Mppx) against the app over real HTTP, no code of ours in its
 * path; the stock @x402/svm client for the cross-dialect cases.
 */

import { solana } from "@solana/mpp/client";

const SOL_CAIP2 = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";
let chain: SvmChain;
let feePayer: { signer: KeyPairSigner; secret: string };
let seller: KeyPairSigner;

beforeAll(async () => {
  chain = await startLiteSvm();
  feePayer = await solanaKey();
  chain.svm.airdrop(feePayer.signer.address, 10_000_000_000n as never);
  seller = await generateKeyPairSigner();
  await chain.setUsdc(seller.address, 0n);
});
afterAll(async () => chain?.stop());

const idem = () => `idem_${randomBytes(16).toString("hex")}`;
const json = { "content-type": "application/json" };

function mppClient(signer: KeyPairSigner) {
  return Mppx.create({ polyfill: false, methods: [solana.charge({ signer, rpcUrl: chain.rpcUrl })] });
}

describe("MPP on Solana (@solana/mpp client, LiteSVM)", () => {
  let app: App;
  let db: Db;
  let base: string;
  beforeAll(async () => {
    db = (await freshDatabase("sqlite")).db;
    app = await appOn(db, {
      PAY_TO_SOLANA: seller.address,
      SOLANA_RPC_URL: chain.rpcUrl,
      X402_SVM_FEE_PAYER_KEY: feePayer.secret,
    });
    await app.listen({ port: 0, host: "127.0.0.1" });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  const products = () => `${base}/api/x402-products`;
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(products(), { method: "POST", headers: { ...json, ...headers }, body: JSON.stringify(body) });

  it("the 402 offers the solana charge: SPL USDC, the same payTo, no fee payer (the buyer signs the whole transaction)", async () => {
    const res = await post({ sku: "gao-entry" });
    expect(res.status).toBe(402);
    expect(decodePaymentRequiredHeader(res.headers.get("payment-required") ?? "").accepts[0]).toMatchObject({
      payTo: seller.address,
      amount: "1000000",
    });
    const [c] = Challenge.fromResponseList(res);
    expect(c?.method).toBe("solana");
    expect(c?.request).toEqual({
      amount: "1000000",
      currency: chain.mint,
      recipient: seller.address,
      methodDetails: {
        decimals: 6,
        network: "mainnet-beta",
        tokenProgram: "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
      },
    });
  });

  it("@solana/mpp buys a product: 200 + Payment-Receipt naming the transaction; the seller's USDC rises once", async () => {
    const buyer = await chain.newFunded(5_000_000n);
    const before = await chain.usdcBalance(seller.address);
    const landed = chain.landed();
    const res = await mppClient(buyer).fetch(products(), {
      method: "POST",
      headers: { ...json, "Idempotency-Key": idem() },
      body: JSON.stringify({ sku: "gao-entry" }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = await jsonOf(res);
    expect(body).toMatchObject({ sku: "gao-entry", rail: "x402_solana_usdc", amount_usd: "1.00" });
    expect(Receipt.fromResponse(res)).toMatchObject({
      method: "solana",
      status: "success",
      reference: body.transaction,
    });
    expect(await chain.usdcBalance(seller.address)).toBe(before + 1_000_000n);
    expect(await chain.usdcBalance(buyer.address)).toBe(4_000_000n);
    expect(chain.landed()).toBe(landed + 1);
  });

  it("an MPP-paid transaction replayed: its buyer gets the order, a stranger 409, as x402 409; one transfer", async () => {
    const buyer = await chain.newFunded(5_000_000n);
    const key = idem();
    const credential = await mppClient(buyer).createCredential(await post({ sku: "gao" }));
    const first = await post({ sku: "gao" }, { Authorization: credential, "Idempotency-Key": key });
    expect(first.status, await first.clone().text()).toBe(200);
    const order = (await jsonOf(first)).order_id;
    const landed = chain.landed();
    const orders = await countRows(app, "orders");
    const again = await post({ sku: "gao" }, { Authorization: credential, "Idempotency-Key": key });
    expect((await jsonOf(again)).order_id).toBe(order);
    const stranger = await post({ sku: "gao" }, { Authorization: credential });
    expect(stranger.status).toBe(409);
    const text = await stranger.text();
    expect(JSON.parse(text).code).toBe("payment_already_redeemed");
    expectNoOrderData(text);
    const { payload } = Credential.deserialize(credential) as { payload: { transaction: string } };
    const asX402 = b64json({
      x402Version: 2,
      accepted: { scheme: "exact", network: SOL_CAIP2, amount: "1000000", asset: chain.mint, payTo: seller.address },
      payload: { transaction: payload.transaction },
    });
    const x = await post({ sku: "gao" }, { "PAYMENT-SIGNATURE": asX402 });
    expect(x.status).toBe(409);
    expect((await jsonOf(x)).code).toBe("payment_already_redeemed");
    expect(chain.landed()).toBe(landed);
    expect(await countRows(app, "orders")).toBe(orders);
    expect(await chain.usdcBalance(buyer.address)).toBe(4_000_000n);
  });

  it("an x402-paid transaction presented in an MPP credential (genuine fresh challenge) → 409; one transfer", async () => {
    const buyer = await chain.newFunded(5_000_000n);
    const challenge = await post({ sku: "gao" });
    const client = new x402Client().register("solana:*", new ExactSvmScheme(buyer, { rpcUrl: chain.rpcUrl }));
    const header = encodePaymentSignatureHeader(
      await client.createPaymentPayload(decodePaymentRequiredHeader(challenge.headers.get("payment-required") ?? "")),
    );
    const paid = await post({ sku: "gao" }, { "PAYMENT-SIGNATURE": header });
    expect(paid.status, await paid.clone().text()).toBe(200);
    const landed = chain.landed();
    const fresh = Challenge.fromResponseList(await post({ sku: "gao" }))[0] as Challenge.Challenge;
    const transaction = JSON.parse(Buffer.from(header, "base64").toString()).payload.transaction as string;
    const credential = Credential.serialize({ challenge: fresh, payload: { type: "transaction", transaction } });
    const res = await post({ sku: "gao" }, { Authorization: credential });
    expect(res.status).toBe(409);
    expect((await jsonOf(res)).code).toBe("payment_already_redeemed");
    expect(chain.landed()).toBe(landed);
    expect(await chain.usdcBalance(buyer.address)).toBe(4_000_000n);
  });

  it("tampered: amount changed in the echo (mpp_challenge_invalid), a push-mode signature (mpp_payload_unsupported), a transaction for less than the price (402, nothing lands)", async () => {
    const buyer = await chain.newFunded(5_000_000n);
    const credential = await mppClient(buyer).createCredential(await post({ sku: "gao" }));
    const c = Credential.deserialize(credential) as {
      challenge: Challenge.Challenge;
      payload: Record<string, unknown>;
    };
    const landed = chain.landed();
    const send = async (cred: string, code: string) => {
      const res = await post({ sku: "gao" }, { Authorization: cred });
      const text = await res.text();
      expect(res.status, text).toBe(402);
      expect(JSON.parse(text).code).toBe(code);
      expect(res.headers.get("payment-required")).toBeTruthy();
      expect(Challenge.fromResponseList(res)[0]?.method).toBe("solana");
    };
    await send(
      Credential.serialize({ ...c, challenge: { ...c.challenge, request: { ...c.challenge.request, amount: "1" } } }),
      "mpp_challenge_invalid",
    );
    await send(
      Credential.serialize({ ...c, payload: { type: "signature", signature: "5".repeat(88) } }),
      "mpp_payload_unsupported",
    );
    // a genuine challenge for 1 USD, paid by a transaction the client built for 0.5 USD
    const cheap = await solana.buildChargeTransaction({
      signer: buyer,
      rpcUrl: chain.rpcUrl,
      request: { ...(c.challenge.request as Record<string, unknown>), amount: "500000" } as never,
    });
    await send(
      Credential.serialize({ ...c, payload: { type: "transaction", transaction: cheap } }),
      "invalid_exact_svm_payload_amount_mismatch",
    );
    expect(chain.landed()).toBe(landed);
    expect(await chain.usdcBalance(buyer.address)).toBe(5_000_000n);
  });
});
