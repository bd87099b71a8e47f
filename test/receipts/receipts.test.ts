import { generateKeyPairSync, randomBytes } from "node:crypto";
import { calculateJwkThumbprint, compactVerify, importJWK } from "jose";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, testConfig } from "../../src/config.js";
import type { OrderView } from "../../src/orders/service.js";
import type { OrderRow } from "../../src/orders/tables.js";
import { receiptFactsFromOrder, receiptFactsFromPurchase, SOLANA_MAINNET } from "../../src/receipts/facts.js";
import { canonicalJson, parseSigningKey, type ReceiptFacts, Receipts } from "../../src/receipts/service.js";
import { receiptsFor } from "../../src/receipts/setup.js";
import { verifyReceipt } from "../../src/receipts/verify.js";

const SEED = Buffer.alloc(32, 7).toString("base64url");
const BASE = "https://lab.example.com";
const USDC = {
  base: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
  solana: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
};

const facts: ReceiptFacts = {
  item: { kind: "product", ref: "zrw-pro", sku: "zrw-pro", name: "ZRW Pro" },
  amount: "249000000",
  decimals: 6,
  currency: "USDC",
  asset: USDC.base,
  network: "eip155:8453",
  rail: "x402_base_usdc",
  transaction: `0x${"ab".repeat(32)}`,
  orderId: "ord_0123456789",
  jobId: null,
  payer: "0x1111111111111111111111111111111111111111",
  resourceUrl: `${BASE}/api/x402-products?sku=zrw-pro`,
  issuedAt: "2026-11-27T12:00:00.123Z",
};

const b64json = (part: string) => JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
/** Re-encodes the payload with one claim changed, keeping the original signature. */
function tamper(jws: string, change: (claims: Record<string, unknown>) => void): string {
  const [h, p, s] = jws.split(".") as [string, string, string];
  const claims = b64json(p);
  change(claims);
  return `${h}.${Buffer.from(canonicalJson(claims)).toString("base64url")}.${s}`;
}

describe("receipts", () => {
  const receipts = Receipts.fromSettings(SEED, BASE);

  it("signs and verifies: EdDSA compact JWS, kid = JWK thumbprint, the claims named in docs/receipts.md", async () => {
    const jws = receipts.sign(facts);
    const [h, p] = jws.split(".") as [string, string];
    expect(b64json(h)).toEqual({ alg: "EdDSA", kid: receipts.kid, typ: "labphi-receipt+jwt" });
    const jwk = receipts.jwks().keys[0];
    expect(receipts.kid).toBe(await calculateJwkThumbprint({ kty: "OKP", crv: "Ed25519", x: jwk?.x as string }));
    // jose itself verifies it
    const { payload } = await compactVerify(jws, await importJWK(jwk as never, "EdDSA"));
    expect(Buffer.from(payload).toString("base64url")).toBe(p);
    const claims = JSON.parse(Buffer.from(payload).toString("utf8"));
    expect(claims).toEqual({
      version: 1,
      iss: BASE,
      iat: 1795780800,
      issuedAt: 1795780800,
      resourceUrl: facts.resourceUrl,
      network: "eip155:8453",
      payer: facts.payer,
      transaction: facts.transaction,
      item: facts.item,
      amount: "249000000",
      decimals: 6,
      currency: "USDC",
      asset: USDC.base,
      rail: "x402_base_usdc",
      order_id: "ord_0123456789",
      job_id: null,
    });
    // canonical: keys sorted, no white space
    expect(Buffer.from(payload).toString("utf8")).toBe(canonicalJson(claims));
    const result = await verifyReceipt(jws, receipts.jwks());
    expect(result).toEqual({ ok: true, kid: receipts.kid, claims });
  });

  it("fits the x402 offer-receipt extension: its JWS verifier accepts it and reads its receipt fields", async () => {
    const { verifyReceiptSignatureJWS, extractReceiptPayload } = await import("@x402/extensions/offer-receipt");
    const jws = receipts.sign(facts);
    const jwk = receipts.jwks().keys[0] as never;
    const payload = await verifyReceiptSignatureJWS({ format: "jws", signature: jws }, jwk);
    expect(payload).toMatchObject({
      version: 1,
      network: "eip155:8453",
      resourceUrl: facts.resourceUrl,
      payer: facts.payer,
      issuedAt: 1795780800,
      transaction: facts.transaction,
    });
    expect(extractReceiptPayload({ format: "jws", signature: jws })).toMatchObject({ network: "eip155:8453" });
    const other = Receipts.fromSettings(randomBytes(32).toString("base64url"), BASE).jwks().keys[0] as never;
    await expect(verifyReceiptSignatureJWS({ format: "jws", signature: jws }, other)).rejects.toThrow();
  });

  it("the same facts give the same bytes (another instance of the same key too); other facts give other bytes", () => {
    const a = receipts.sign(facts);
    expect(receipts.sign({ ...facts })).toBe(a);
    expect(Receipts.fromSettings(SEED, BASE).sign(facts)).toBe(a);
    expect(receipts.sign({ ...facts, amount: "249000001" })).not.toBe(a);
  });

  it("a changed claim fails verification", async () => {
    const jws = receipts.sign(facts);
    for (const change of [
      (c: Record<string, unknown>) => {
        c.amount = "1";
      },
      (c: Record<string, unknown>) => {
        c.order_id = "ord_someoneelse";
      },
      (c: Record<string, unknown>) => {
        c.payer = "0x2222222222222222222222222222222222222222";
      },
    ]) {
      const bad = tamper(jws, change);
      expect(bad).not.toBe(jws);
      expect(await verifyReceipt(bad, receipts.jwks())).toMatchObject({ ok: false, reason: "signature" });
    }
    // a flipped signature byte
    const sig = Buffer.from(jws.split(".")[2] as string, "base64url");
    sig[0] = (sig[0] as number) ^ 1;
    const flipped = `${jws.split(".").slice(0, 2).join(".")}.${sig.toString("base64url")}`;
    expect(await verifyReceipt(flipped, receipts.jwks())).toMatchObject({ ok: false, reason: "signature" });
  });

  it("a receipt signed by another key fails: unknown kid, and a forged kid does not help", async () => {
    const other = Receipts.fromSettings(randomBytes(32).toString("base64url"), BASE);
    const forged = other.sign(facts);
    expect(await verifyReceipt(forged, receipts.jwks())).toMatchObject({ ok: false, reason: "kid_unknown" });
    // the attacker puts our kid in its header: the signature fails
    const [, p, s] = forged.split(".") as [string, string, string];
    const header = Buffer.from(JSON.stringify({ alg: "EdDSA", kid: receipts.kid, typ: "labphi-receipt+jwt" })).toString(
      "base64url",
    );
    expect(await verifyReceipt(`${header}.${p}.${s}`, receipts.jwks())).toMatchObject({
      ok: false,
      reason: "signature",
    });
  });

  it("refuses another alg, another typ, no kid, a private key in the JWKS, and garbage", async () => {
    const jws = receipts.sign(facts);
    const [, p, s] = jws.split(".") as [string, string, string];
    const withHeader = (h: object) => `${Buffer.from(JSON.stringify(h)).toString("base64url")}.${p}.${s}`;
    const keys = receipts.jwks();
    expect(
      await verifyReceipt(withHeader({ alg: "HS256", kid: receipts.kid, typ: "labphi-receipt+jwt" }), keys),
    ).toMatchObject({ ok: false, reason: "alg" });
    expect(
      await verifyReceipt(withHeader({ alg: "none", kid: receipts.kid, typ: "labphi-receipt+jwt" }), keys),
    ).toMatchObject({ ok: false, reason: "alg" });
    expect(await verifyReceipt(withHeader({ alg: "EdDSA", kid: receipts.kid, typ: "JWT" }), keys)).toMatchObject({
      ok: false,
      reason: "typ",
    });
    expect(await verifyReceipt(withHeader({ alg: "EdDSA", typ: "labphi-receipt+jwt" }), keys)).toMatchObject({
      ok: false,
      reason: "kid_missing",
    });
    expect(await verifyReceipt("not a receipt", keys)).toMatchObject({ ok: false, reason: "malformed" });
    const leaky = { keys: [{ ...keys.keys[0], d: SEED }] };
    expect(await verifyReceipt(jws, leaky as never)).toMatchObject({ ok: false, reason: "bad_key" });
  });

  it("publishes public keys only, retired keys after the current one", () => {
    const retired = Receipts.fromSettings(randomBytes(32).toString("base64url"), BASE).jwks().keys[0]?.x as string;
    const r = Receipts.fromSettings(SEED, BASE, [retired]);
    const keys = r.jwks().keys;
    expect(keys.map((k) => k.x)).toEqual([receipts.jwks().keys[0]?.x, retired]);
    for (const k of keys) {
      expect(Object.keys(k).sort()).toEqual(["alg", "crv", "kid", "kty", "use", "x"]);
      expect(JSON.stringify(k)).not.toContain(SEED);
    }
  });

  it("reads the key as a base64url seed or a PKCS#8 PEM, and refuses anything else without echoing it", () => {
    const { privateKey } = generateKeyPairSync("ed25519");
    const pem = privateKey.export({ format: "pem", type: "pkcs8" }).toString();
    const fromPem = Receipts.fromSettings(pem, BASE);
    const seed = (privateKey.export({ format: "jwk" }) as { d: string }).d;
    expect(Receipts.fromSettings(seed, BASE).sign(facts)).toBe(fromPem.sign(facts));
    const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey.export({ format: "pem", type: "pkcs8" });
    expect(() => parseSigningKey(rsa.toString())).toThrow(/not Ed25519/);
    const secret = "x".repeat(48);
    expect(() => parseSigningKey(secret)).toThrow(/base64url Ed25519 seed/);
    try {
      parseSigningKey(secret);
    } catch (err) {
      expect((err as Error).message).not.toContain(secret);
    }
  });
});

describe("receiptFactsFromOrder", () => {
  const ctx = { baseUrl: BASE, usdc: USDC };
  const row = (over: Partial<OrderRow>): OrderRow => ({
    id: "ord_1",
    proof_key: "k",
    sku: "zrw-pro",
    amount_cents: 24900,
    currency: "usd",
    rail: "card_checkout",
    transaction_ref: "pi_123",
    email: "a@example.com",
    agent_id: null,
    status: "active",
    access_token_hash: "h",
    license_key: null,
    meta: "{}",
    created_at: "2026-11-27T12:00:00.000Z",
    updated_at: "2026-11-27T12:00:00.000Z",
    revoked_at: null,
    revoke_reason: null,
    ...over,
  });
  const view = { name: "ZRW Pro" } as OrderView;

  it("card: USD cents, no network, no payer (the e-mail is not put in a receipt)", () => {
    expect(receiptFactsFromOrder(row({}), view, ctx)).toEqual({
      item: { kind: "product", ref: "zrw-pro", sku: "zrw-pro", name: "ZRW Pro" },
      amount: "24900",
      decimals: 2,
      currency: "USD",
      asset: "USD",
      network: null,
      rail: "card_checkout",
      transaction: "pi_123",
      orderId: "ord_1",
      jobId: null,
      payer: null,
      resourceUrl: `${BASE}/api/x402-products?sku=zrw-pro`,
      issuedAt: "2026-11-27T12:00:00.000Z",
    });
  });

  it("x402: USDC units, CAIP-2 network, the chain's USDC, the payer from meta", () => {
    const sol = receiptFactsFromOrder(
      row({
        rail: "x402_solana_usdc",
        transaction_ref: "5sig",
        meta: JSON.stringify({ network: "solana-mainnet-beta", payer: "Payer111", amount_units: "249000000" }),
      }),
      view,
      ctx,
    );
    expect(sol).toMatchObject({
      amount: "249000000",
      decimals: 6,
      currency: "USDC",
      asset: USDC.solana,
      network: SOLANA_MAINNET,
      payer: "Payer111",
    });
    const base = receiptFactsFromOrder(
      row({
        rail: "x402_base_usdc",
        meta: JSON.stringify({ network: "eip155:84532", payer: "0xab", amount_units: "5" }),
      }),
      view,
      ctx,
    );
    expect(base).toMatchObject({ amount: "5", asset: USDC.base, network: "eip155:84532", payer: "0xab" });
  });

  it("a rail's purchase facts: a product gives the order's facts (same receipt as the access page); a quote names its job", () => {
    const meta = { network: "eip155:8453", payer: "0xab", amount_units: "249000000", proof_kind: "evm_eip3009" };
    const order = row({ rail: "x402_base_usdc", transaction_ref: "0xtx", meta: JSON.stringify(meta) });
    const product = {
      kind: "product",
      ref: "zrw-pro",
      sku: "zrw-pro",
      name: "ZRW Pro",
      amountCents: 24900,
      resource: `${BASE}/api/x402-products/buy`,
    };
    const payment = { rail: "x402_base_usdc", transactionRef: "0xtx", meta };
    expect(receiptFactsFromPurchase(product, payment, { kind: "product", id: "ord_1" }, order.created_at, ctx)).toEqual(
      receiptFactsFromOrder(order, view, ctx),
    );
    const quote = {
      kind: "quote",
      ref: "q_1",
      sku: "suite",
      name: "Suite job q_1",
      amountCents: 3,
      resource: `${BASE}/api/suite/buy`,
    };
    const job = receiptFactsFromPurchase(
      quote,
      {
        rail: "x402_base_usdc",
        transactionRef: "0xtx",
        meta: { network: "eip155:8453", payer: "0xab", amount_units: "25001" },
      },
      { kind: "quote", id: "job_9" },
      "2026-11-27T13:00:00.000Z",
      ctx,
    );
    expect(job).toMatchObject({
      orderId: null,
      jobId: "job_9",
      amount: "25001",
      resourceUrl: quote.resource,
      item: { kind: "quote", ref: "q_1" },
    });
    expect(() => Receipts.fromSettings(SEED, BASE).sign(job)).not.toThrow();
    const card = receiptFactsFromPurchase(
      quote,
      { rail: "card_checkout", transactionRef: "pi_1" },
      { kind: "quote", id: "job_9" },
      "2026-11-27T13:00:00.000Z",
      ctx,
    );
    expect(card).toMatchObject({ amount: "3", decimals: 2, currency: "USD", network: null, jobId: "job_9" });
  });

  it("manual claims: USD priced, the chain when the rail fixes it", () => {
    expect(receiptFactsFromOrder(row({ rail: "crypto_manual_solana" }), view, ctx).network).toBe(SOLANA_MAINNET);
    expect(receiptFactsFromOrder(row({ rail: "crypto_manual_evm" }), view, ctx).network).toBeNull();
    expect(receiptFactsFromOrder(row({ rail: "wire_invoice_ach", transaction_ref: null }), view, ctx)).toMatchObject({
      currency: "USD",
      transaction: null,
      network: null,
    });
  });
});

describe("receipt settings", () => {
  const refused = (env: Record<string, string>) => {
    try {
      loadConfig(env);
    } catch (err) {
      return err as ConfigError;
    }
    throw new Error("accepted");
  };

  it("RECEIPT_SIGNING_KEY must be an Ed25519 key; the refusal names the setting, never the value", () => {
    const secret = "s".repeat(48);
    const err = refused({ RECEIPT_SIGNING_KEY: secret });
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.setting).toBe("RECEIPT_SIGNING_KEY");
    expect(err.message).toMatch(/^invalid setting RECEIPT_SIGNING_KEY: must be a base64url Ed25519 seed/);
    expect(err.message).not.toContain(secret);
    expect(loadConfig({ RECEIPT_SIGNING_KEY: SEED }).receipts.signingKey).toBe(SEED);
  });

  it("RECEIPT_RETIRED_KEYS: comma-separated public keys, each checked", () => {
    const x = Receipts.fromSettings(SEED, BASE).jwks().keys[0]?.x as string;
    expect(loadConfig({ RECEIPT_RETIRED_KEYS: ` ${x} , ${x}` }).receipts.retiredKeys).toEqual([x, x]);
    expect(loadConfig({}).receipts.retiredKeys).toEqual([]);
    const err = refused({ RECEIPT_RETIRED_KEYS: `${x},nope` });
    expect(err.setting).toBe("RECEIPT_RETIRED_KEYS");
    expect(err.message).toMatch(/key 2 must be a base64url Ed25519 public key/);
  });

  it("a secrets-file key that is not a seed stops start-up naming the file's field", () => {
    const err = (() => {
      try {
        receiptsFor("z".repeat(40), testConfig());
      } catch (e) {
        return e as ConfigError;
      }
      throw new Error("accepted");
    })();
    expect(err.setting).toBe("DATA_DIR");
    expect(err.message).toMatch(/secrets\.json field receipt_signing_key must be a base64url Ed25519 seed/);
  });
});
