import { x402Client } from "@x402/core/client";
import { encodePaymentSignatureHeader } from "@x402/core/http";
import { toClientEvmSigner } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../src/db/database.js";
import type { App } from "../../src/http/types.js";
import { paymentIdentifierClientExtension } from "../../src/payments/x402/buyer.js";
import { appOn, expectNoOrderData, paymentId, paymentRequired } from "../payments/x402/helpers.js";
import { type BothChains, startBothChains } from "../support/chains/both.js";
import type { EvmChain } from "../support/chains/evm.js";
import type { SvmChain } from "../support/chains/svm.js";
import { ENGINES, freshDatabase } from "../support/databases.js";

/**
 * Suite jobs bought through the one payment core: a quote is the priced item; x402 (both chains)
 * pays exactly the quote's amount, exactly once, and only the payer gets the job.
 */

const GB = 1_000_000_000;
let chains: BothChains;
let evm: EvmChain;
let svm: SvmChain;

beforeAll(async () => {
  chains = await startBothChains();
  ({ evm, svm } = chains);
});
afterAll(async () => chains?.stop());

const env = (extra: Record<string, string> = {}) => chains.env(extra);

const suite = (app: App, body: unknown, headers: Record<string, string> = {}) =>
  app.inject({ method: "POST", url: "/api/x402-suite", headers, payload: body as object });

/**
 * 1 MB from an anonymous caller with no free allowance (SUITE_ANON_FREE_BYTES_PER_DAY=0 below): one
 * billable MB → the minimum paid amount, 0.05 USD. (Before issue #21 this was 100 GB + 1 MB: the
 * first 100 GB of every job were free; free volume now belongs to an identity, or an IP's day.)
 */
const MIN_PAID = { product: "auto", dataClass: "text", op: "compress", bytes: 1_000_000 };

/** A join-work identity's token: its 100 GB of the month are the free volume. */
async function identityToken(app: App): Promise<string> {
  const r = await app.inject({
    method: "POST",
    url: "/api/join-work",
    payload: { name: "Buyer", intent: "I want to compress my sensor logs.", seed: "correct horse battery staple 1234" },
  });
  expect(r.statusCode, r.body).toBe(201);
  return r.json().token as string;
}

describe.each(ENGINES)("suite jobs through the payment core — %s", (engine) => {
  let app: App;
  let db: Db;
  beforeAll(async () => {
    db = (await freshDatabase(engine)).db;
    // anonymous callers get nothing free here: every anonymous request below is a paid one
    app = await appOn(db, env({ SUITE_ANON_FREE_BYTES_PER_DAY: "0" }));
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it("within the free cap: 200 with the job, its token and where to upload, at once", async () => {
    const token = await identityToken(app);
    const res = await suite(
      app,
      { product: "auto", dataClass: "zeros", op: "compress", bytes: 50 * GB },
      { "x-identity-token": token },
    );
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.job_id).toMatch(/^job_/);
    expect(body.job_token).toMatch(/^jt_/);
    expect(body.amount_units).toBe("0");
    expect(body.upload_url).toBe(`http://lab.test/api/jobs/${body.job_id}/input`);
    const job = await db.kysely.selectFrom("jobs").selectAll().where("id", "=", body.job_id).executeTakeFirstOrThrow();
    expect(job).toMatchObject({ state: "awaiting_input", paid_by: "free", op: "compress" });
    expect(job.token_hash).not.toContain(body.job_token);
  });

  it("above it: 402 built from the persisted quote (150 GB → 2,500,000 units), never from the client", async () => {
    const token = await identityToken(app);
    const res = await suite(
      app,
      { product: "auto", dataClass: "text", op: "compress", bytes: 150 * GB },
      { "x-identity-token": token },
    );
    expect(res.statusCode).toBe(402);
    const body = res.json();
    expect(body.quote.amount_units).toBe("2500000");
    expect(body.accepts.map((a: { maxAmountRequired: string }) => a.maxAmountRequired)).toEqual(["2500000", "2500000"]);
    expect(body.accepts[0].resource).toBe("http://lab.test/api/x402-suite");
    const required = paymentRequired(res.headers);
    expect(required.resource.url).toBe("http://lab.test/api/x402-suite");
    expect(required.accepts.map((a) => a.amount)).toEqual(["2500000", "2500000"]);
    const row = await db.kysely
      .selectFrom("quotes")
      .selectAll()
      .where("id", "=", body.quote.quote_id)
      .executeTakeFirstOrThrow();
    expect(row.state).toBe("open");
  });

  it("Base: a stock client pays the quote once; the payer's retry gets the same job; a stranger gets nothing", async () => {
    const buyer = await evm.newBuyer(1_000_000n);
    const challenge = await suite(app, MIN_PAID);
    expect(challenge.json().quote.amount_units).toBe("50000");
    const client = new x402Client().register(
      "eip155:*",
      new ExactEvmScheme(toClientEvmSigner(privateKeyToAccount(buyer.key), evm.publicClient as never)),
    );
    client.registerExtension(paymentIdentifierClientExtension(paymentId()) as never);
    const header = encodePaymentSignatureHeader(await client.createPaymentPayload(paymentRequired(challenge.headers)));
    const paid = await suite(app, MIN_PAID, { "PAYMENT-SIGNATURE": header });
    expect(paid.statusCode, paid.body).toBe(200);
    const body = paid.json();
    expect(body).toMatchObject({
      quote_id: challenge.json().quote.quote_id,
      amount_units: "50000",
      rail: "x402_base_usdc",
    });
    expect(await evm.balanceOf(buyer.address)).toBe(950_000n);
    const again = await suite(app, MIN_PAID, { "PAYMENT-SIGNATURE": header });
    expect(again.json()).toMatchObject({ job_id: body.job_id, job_token: body.job_token });
    const bare = JSON.parse(Buffer.from(header, "base64").toString());
    delete bare.extensions;
    const stranger = await suite(app, MIN_PAID, {
      "PAYMENT-SIGNATURE": Buffer.from(JSON.stringify(bare)).toString("base64"),
    });
    expect(stranger.statusCode).toBe(409);
    expect(stranger.body).not.toContain(body.job_token);
    expectNoOrderData(stranger.body);
    const job = await db.kysely.selectFrom("jobs").selectAll().where("id", "=", body.job_id).executeTakeFirstOrThrow();
    expect(job.paid_by).toBe("x402_base_usdc");
    const quote = await db.kysely
      .selectFrom("quotes")
      .selectAll()
      .where("id", "=", body.quote_id)
      .executeTakeFirstOrThrow();
    expect(quote).toMatchObject({ state: "used", job_id: body.job_id });
    const ref = await db.kysely
      .selectFrom("payment_references")
      .selectAll()
      .where("tx", "=", body.transaction.toLowerCase())
      .executeTakeFirstOrThrow();
    expect(ref.job_id).toBe(body.job_id);
    expect(ref.order_id).toBeNull();
    // the same payment cannot also buy a product
    const product = await app.inject({
      method: "POST",
      url: "/api/x402-products",
      headers: { "PAYMENT-SIGNATURE": header },
      payload: { sku: "gao" },
    });
    expect(product.statusCode).toBe(409);
  });

  it("Solana: the same flow on the other chain", async () => {
    const buyer = await svm.newFunded(1_000_000n);
    const challenge = await suite(app, MIN_PAID);
    const client = new x402Client().register("solana:*", new ExactSvmScheme(buyer, { rpcUrl: svm.rpcUrl }));
    client.registerExtension(paymentIdentifierClientExtension(paymentId()) as never);
    const header = encodePaymentSignatureHeader(await client.createPaymentPayload(paymentRequired(challenge.headers)));
    const paid = await suite(app, MIN_PAID, { "PAYMENT-SIGNATURE": header });
    expect(paid.statusCode, paid.body).toBe(200);
    expect(paid.json().rail).toBe("x402_solana_usdc");
    expect(await svm.usdcBalance(buyer.address)).toBe(950_000n);
  });

  it("a paid retry must match its quote: other bytes → 409 quote_mismatch; an unknown quote → 404", async () => {
    const challenge = await suite(app, MIN_PAID);
    const quoteId = challenge.json().quote.quote_id;
    const buyer = await evm.newBuyer(1_000_000n);
    const client = new x402Client().register(
      "eip155:*",
      new ExactEvmScheme(toClientEvmSigner(privateKeyToAccount(buyer.key), evm.publicClient as never)),
    );
    const header = encodePaymentSignatureHeader(await client.createPaymentPayload(paymentRequired(challenge.headers)));
    const other = await suite(
      app,
      { ...MIN_PAID, bytes: MIN_PAID.bytes + 5, quote_id: quoteId },
      { "X-PAYMENT": header },
    );
    expect(other.statusCode).toBe(409);
    expect(other.json().code).toBe("quote_mismatch");
    const unknown = await suite(app, { ...MIN_PAID, quote_id: "qt_unknown_quote_id_000" }, { "X-PAYMENT": header });
    expect(unknown.statusCode).toBe(404);
    expect(await evm.balanceOf(buyer.address)).toBe(1_000_000n);
  });
});
