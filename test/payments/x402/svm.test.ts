import { address, generateKeyPairSigner, type Instruction, type KeyPairSigner } from "@solana/kit";
import { x402Client } from "@x402/core/client";
import { x402Facilitator } from "@x402/core/facilitator";
import { encodePaymentSignatureHeader } from "@x402/core/http";
import { toFacilitatorSvmSigner } from "@x402/svm";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { ExactSvmScheme as SvmFacilitatorScheme } from "@x402/svm/exact/facilitator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../../src/db/database.js";
import type { App } from "../../../src/http/types.js";
import { paymentIdentifierClientExtension } from "../../../src/payments/x402/buyer.js";
import { startHttpFacilitator } from "../../support/chains/facilitator.js";
import { type SvmChain, startLiteSvm } from "../../support/chains/svm.js";
import { buildSvmTx, type SvmTxOpts } from "../../support/chains/svm-tx.js";
import { ENGINES, freshDatabase } from "../../support/databases.js";
import {
  appOn,
  b64json,
  countRows,
  expectNoOrderData,
  paymentId,
  paymentRequired,
  paymentResponse,
  solanaKey,
} from "./helpers.js";

const SOL_CAIP2 = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";
const _MEMO = address("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr");

let chain: SvmChain;
let feePayer: { signer: KeyPairSigner; secret: string };
let seller: KeyPairSigner;

beforeAll(async () => {
  chain = await startLiteSvm();
  feePayer = await solanaKey();
  chain.svm.airdrop(feePayer.signer.address, 10_000_000_000n as never);
  seller = await generateKeyPairSigner();
  await chain.setUsdc(seller.address, 0n); // the seller's USDC ATA must exist beforehand
});
afterAll(async () => chain?.stop());

const env = (extra: Record<string, string> = {}) => ({
  PAY_TO_SOLANA: seller.address,
  SOLANA_RPC_URL: chain.rpcUrl,
  X402_SVM_FEE_PAYER_KEY: feePayer.secret,
  ...extra,
});

const post = (app: App, body: unknown, headers: Record<string, string> = {}) =>
  app.inject({ method: "POST", url: "/api/x402-products", headers, payload: body as object });

/** The official v2 SVM client, unchanged (with `id`: the payment-identifier extension registered). */
async function stockPayment(app: App, buyer: KeyPairSigner, body: unknown, id?: string): Promise<string> {
  const challenge = await post(app, body);
  expect(challenge.statusCode).toBe(402);
  const client = new x402Client().register("solana:*", new ExactSvmScheme(buyer, { rpcUrl: chain.rpcUrl }));
  if (id) client.registerExtension(paymentIdentifierClientExtension(id) as never);
  return encodePaymentSignatureHeader(await client.createPaymentPayload(paymentRequired(challenge.headers)));
}

/** A hand-built x402 exact transaction (for the negative cases and the fully signed path). */
const buildTx = (buyer: KeyPairSigner, o: SvmTxOpts = {}) => buildSvmTx(chain, buyer, seller.address, o);

const svmHeader = (transaction: string, amount = "1000000") =>
  b64json({
    x402Version: 2,
    accepted: {
      scheme: "exact",
      network: SOL_CAIP2,
      amount,
      asset: chain.mint,
      payTo: seller.address,
      maxTimeoutSeconds: 300,
      extra: { feePayer: feePayer.signer.address },
    },
    payload: { transaction },
  });

describe.each(ENGINES)("x402 on Solana (LiteSVM, mainnet USDC mint) — %s", (engine) => {
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

  it("§7.8 the stock @x402/svm client pays → 200; the seller's USDC ATA rises by exactly the price", async () => {
    const buyer = await chain.newFunded(5_000_000n);
    const before = await chain.usdcBalance(seller.address);
    const header = await stockPayment(app, buyer, { sku: "gao-entry" });
    const res = await post(app, { sku: "gao-entry" }, { "PAYMENT-SIGNATURE": header });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ sku: "gao-entry", rail: "x402_solana_usdc", amount_usd: "1.00" });
    expect(await chain.usdcBalance(seller.address)).toBe(before + 1_000_000n);
    expect(await chain.usdcBalance(buyer.address)).toBe(4_000_000n);
    const pr = paymentResponse(res.headers);
    expect(pr.success).toBe(true);
    expect(pr.transaction).toBe(res.json().transaction);
    expect(pr.network).toBe(SOL_CAIP2);
    // the access page opens
    const access = await app.inject({ method: "GET", url: new URL(res.json().access_url).pathname });
    expect(access.statusCode).toBe(200);
  });

  it("§7.9/§7.10 replay with the payment identifier → same order, no second transfer; without → 409; another sku → 409", async () => {
    const buyer = await chain.newFunded(5_000_000n);
    const header = await stockPayment(app, buyer, { sku: "gao" }, paymentId());
    const first = await post(app, { sku: "gao" }, { "X-PAYMENT": header });
    expect(first.statusCode).toBe(200);
    const landed = chain.landed();
    const again = await post(app, { sku: "gao" }, { "PAYMENT-SIGNATURE": header });
    expect(again.json().order_id).toBe(first.json().order_id);
    const bare = JSON.parse(Buffer.from(header, "base64").toString());
    delete bare.extensions;
    const stranger = await post(app, { sku: "gao" }, { "PAYMENT-SIGNATURE": b64json(bare) });
    expect(stranger.statusCode).toBe(409);
    expect(stranger.json().code).toBe("payment_already_redeemed");
    expectNoOrderData(stranger.body);
    const other = await post(app, { sku: "sponsor" }, { "PAYMENT-SIGNATURE": header });
    expect(other.statusCode).toBe(409);
    expect(other.json().code).toBe("payment_proof_already_used");
    expect(chain.landed()).toBe(landed);
    expect(await chain.usdcBalance(buyer.address)).toBe(4_000_000n);
  });

  it("§7.11 20 concurrent requests with one proof → one order, one on-chain transfer", async () => {
    const buyer = await chain.newFunded(5_000_000n);
    const header = await stockPayment(app, buyer, { sku: "gao" }, paymentId());
    const landed = chain.landed();
    const orders = await countRows(app, "orders");
    const results = await Promise.all(
      Array.from({ length: 20 }, () => post(app, { sku: "gao" }, { "PAYMENT-SIGNATURE": header })),
    );
    const odd = results.filter((r) => r.statusCode !== 200 && r.statusCode !== 202);
    expect(odd.map((r) => `${r.statusCode} ${r.body.slice(0, 300)}`)).toEqual([]);
    expect(new Set(results.filter((r) => r.statusCode === 200).map((r) => r.json().order_id)).size).toBe(1);
    expect(await countRows(app, "orders")).toBe(orders + 1);
    expect(chain.landed()).toBe(landed + 1);
    expect(await chain.usdcBalance(buyer.address)).toBe(4_000_000n);
  });
});

describe("x402 on Solana: refusals, fully signed transactions, timeouts", () => {
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

  async function refused(tx: string, reason: string) {
    const landed = chain.landed();
    const orders = await countRows(app, "orders");
    const res = await post(app, { sku: "gao" }, { "PAYMENT-SIGNATURE": svmHeader(tx) });
    expect(res.statusCode, res.body).toBe(402);
    expect(res.json().code).toBe(reason);
    expect(chain.landed()).toBe(landed);
    expect(await countRows(app, "orders")).toBe(orders);
  }

  it("§7.16 amount ≠ price, wrong mint, destination ≠ ATA(payTo), extra instruction, compute price > 5 lamports/CU, foreign fee payer → 402", async () => {
    const buyer = await chain.newFunded(5_000_000n);
    const fp = feePayer.signer.address;
    await refused(
      await buildTx(buyer, { feePayer: fp, amount: 999_999n }),
      "invalid_exact_svm_payload_amount_mismatch",
    );
    await refused(
      await buildTx(buyer, { feePayer: fp, amount: 1_000_001n }),
      "invalid_exact_svm_payload_amount_mismatch",
    );
    const otherMint = (await generateKeyPairSigner()).address;
    await refused(await buildTx(buyer, { feePayer: fp, mint: otherMint }), "invalid_exact_svm_payload_mint_mismatch");
    const stranger = await generateKeyPairSigner();
    await refused(
      await buildTx(buyer, { feePayer: fp, destination: await chain.ata(stranger.address) }),
      "invalid_exact_svm_payload_recipient_mismatch",
    );
    await refused(
      await buildTx(buyer, { feePayer: fp, destination: await chain.ata(buyer.address) }),
      "invalid_exact_svm_payload_recipient_mismatch",
    );
    const extra: Instruction = {
      programAddress: address("11111111111111111111111111111111"),
      accounts: [],
      data: new Uint8Array([2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]),
    };
    await refused(
      await buildTx(buyer, { feePayer: fp, extra: [extra] }),
      "invalid_exact_svm_payload_unknown_optional_instruction",
    );
    await refused(
      await buildTx(buyer, { feePayer: fp, microLamports: 5_000_001n }),
      "invalid_exact_svm_payload_transaction_instructions_compute_price_instruction_too_high",
    );
    const foreign = (await generateKeyPairSigner()).address;
    await refused(await buildTx(buyer, { feePayer: foreign }), "invalid_exact_svm_fee_payer_mismatch");
    expect(await chain.usdcBalance(buyer.address)).toBe(5_000_000n);
  });

  it("a hand-built partially signed transaction for our fee payer is settled (fee payer signs)", async () => {
    const buyer = await chain.newFunded(5_000_000n);
    const res = await post(
      app,
      { sku: "gao" },
      { "X-PAYMENT": svmHeader(await buildTx(buyer, { feePayer: feePayer.signer.address })) },
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(await chain.usdcBalance(buyer.address)).toBe(4_000_000n);
  });

  it("a transaction fully signed by the payer is broadcast by us and confirmed by polling", async () => {
    const buyer = await chain.newFunded(5_000_000n);
    const tx = await buildTx(buyer);
    const v1 = b64json({
      x402Version: 1,
      scheme: "exact",
      network: "solana-mainnet-beta",
      payload: { transaction: tx },
    });
    const key = { "Idempotency-Key": paymentId() };
    const res = await post(app, { sku: "gao" }, { "X-PAYMENT": v1, ...key });
    expect(res.statusCode, res.body).toBe(200);
    expect(await chain.usdcBalance(buyer.address)).toBe(4_000_000n);
    const replay = await post(app, { sku: "gao" }, { "X-PAYMENT": v1, ...key });
    expect(replay.json().order_id).toBe(res.json().order_id);
  });

  it("without a fee payer the Solana rail is not offered: 503 naming the missing setting, nothing charged", async () => {
    const { db: d2 } = await freshDatabase("sqlite");
    const plain = await appOn(d2, { PAY_TO_SOLANA: seller.address, SOLANA_RPC_URL: chain.rpcUrl });
    try {
      const challenge = await post(plain, { sku: "gao" });
      expect(challenge.statusCode).toBe(503);
      expect(challenge.json().code).toBe("x402_not_configured");
      expect(challenge.json().missing.x402_solana_usdc.join(" ")).toContain("X402_SVM_FEE_PAYER_KEY");
      const buyer = await chain.newFunded(5_000_000n);
      // a malformed proof still gets its 400 (local checks come first)
      const garbage = await post(plain, { sku: "gao" }, { "X-PAYMENT": "not base64!" });
      expect(garbage.statusCode).toBe(400);
      const full = await post(plain, { sku: "gao" }, { "X-PAYMENT": svmHeader(await buildTx(buyer)) });
      expect(full.statusCode, full.body).toBe(503);
      expect(await chain.usdcBalance(buyer.address)).toBe(5_000_000n);
    } finally {
      await plain.close();
      await d2.close();
    }
  });

  it("through a hosted facilitator: extra.feePayer comes from its /supported and it co-signs and settles", async () => {
    const hostedFeePayer = await generateKeyPairSigner();
    chain.svm.airdrop(hostedFeePayer.address, 5_000_000_000n as never);
    const hosted = await startHttpFacilitator(
      new x402Facilitator().register(
        SOL_CAIP2 as never,
        new SvmFacilitatorScheme(toFacilitatorSvmSigner(hostedFeePayer, { defaultRpcUrl: chain.rpcUrl })),
      ),
    );
    const { db: d2 } = await freshDatabase("sqlite");
    const viaHosted = await appOn(d2, {
      PAY_TO_SOLANA: seller.address,
      SOLANA_RPC_URL: chain.rpcUrl,
      X402_FACILITATOR_URL: hosted.url,
    });
    try {
      const challenge = (await post(viaHosted, { sku: "gao" })).json();
      expect(challenge.accepts[0].extra).toEqual({ feePayer: hostedFeePayer.address });
      const buyer = await chain.newFunded(5_000_000n);
      const header = await stockPayment(viaHosted, buyer, { sku: "gao" });
      const res = await post(viaHosted, { sku: "gao" }, { "PAYMENT-SIGNATURE": header });
      expect(res.statusCode, res.body).toBe(200);
      expect(hosted.calls.settle).toBe(1);
      expect(await chain.usdcBalance(buyer.address)).toBe(4_000_000n);
    } finally {
      await viaHosted.close();
      await d2.close();
      await hosted.stop();
    }
  });

  it("a crash between settlement and order creation is recovered at start-up (known signature) into one order", async () => {
    const { db: crashDb } = await freshDatabase("sqlite");
    const first = await appOn(crashDb, env());
    const buyer = await chain.newFunded(5_000_000n);
    const header = await stockPayment(first, buyer, { sku: "gao" }, paymentId());
    first.services.x402.hooks.afterSettle = async () => {
      throw new Error("simulated crash after settlement");
    };
    expect((await post(first, { sku: "gao" }, { "PAYMENT-SIGNATURE": header })).statusCode).toBe(500);
    expect(await chain.usdcBalance(buyer.address)).toBe(4_000_000n);
    expect(await countRows(first, "orders")).toBe(0);
    await first.close();
    const landed = chain.landed();
    const restarted = await appOn(crashDb, env());
    try {
      expect(await countRows(restarted, "orders")).toBe(1);
      const retry = await post(restarted, { sku: "gao" }, { "PAYMENT-SIGNATURE": header });
      expect(retry.statusCode).toBe(200);
      expect(chain.landed()).toBe(landed);
      expect(await countRows(restarted, "orders")).toBe(1);
    } finally {
      await restarted.close();
      await crashDb.close();
    }
  });

  it("an unconfirmed settlement → 202 + Retry-After; once it lands the same proof gets its one order", async () => {
    const slow = await appOn(db, env({ X402_SETTLE_TIMEOUT_SECONDS: "1" }));
    try {
      const buyer = await chain.newFunded(5_000_000n);
      const header = await stockPayment(slow, buyer, { sku: "gao" }, paymentId());
      chain.hold(true);
      try {
        const res = await post(slow, { sku: "gao" }, { "PAYMENT-SIGNATURE": header });
        expect(res.statusCode, res.body).toBe(202);
        expect(res.headers["retry-after"]).toBeTruthy();
      } finally {
        chain.hold(false);
      }
      chain.release();
      const landed = chain.landed();
      const retry = await post(slow, { sku: "gao" }, { "PAYMENT-SIGNATURE": header });
      expect(retry.statusCode, retry.body).toBe(200);
      expect(chain.landed()).toBe(landed);
      expect(await chain.usdcBalance(buyer.address)).toBe(4_000_000n);
    } finally {
      await slow.close();
    }
  });
});
