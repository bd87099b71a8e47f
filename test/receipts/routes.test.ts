import { randomBytes } from "node:crypto";
import path from "node:path";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../src/db/database.js";
import type { App } from "../../src/http/types.js";
import { productItem } from "../../src/orders/priced-item.js";
import { verifyReceipt } from "../../src/receipts/verify.js";
import { readSecretsFile, SECRETS_FILE } from "../../src/secrets.js";
import { appOn } from "../support/app.js";
import { dataDirOf, freshDatabase } from "../support/databases.js";

const ADMIN = "receipts-admin-token-0123456789";
const ENV = {
  ADMIN_TOKEN: ADMIN,
  PAY_TO_BASE: "0x1111111111111111111111111111111111111111",
  PAY_TO_SOLANA: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
  CONTACT_EMAIL: "ops@lab.test",
};

describe("receipts over HTTP (sqlite)", () => {
  let db: Db;
  let app: App;
  beforeAll(async () => {
    ({ db } = await freshDatabase("sqlite"));
    app = await appOn(db, ENV);
  });
  afterAll(async () => {
    await app.close();
    await db.close();
  });

  const admin = (url: string, payload: object = {}) =>
    app.inject({ method: "POST", url, payload, headers: { authorization: `Bearer ${ADMIN}`, "x-operator": "ops-r" } });

  /** An order granted through the real path: a claim filed, then approved by the operator. */
  async function approvedOrder(): Promise<{ tx: string; accessPath: string; orderId: string }> {
    const tx = `0x${randomBytes(32).toString("hex")}`;
    const filed = await app.inject({
      method: "POST",
      url: "/api/claims",
      payload: { sku: "zrw-pro", email: "buyer@example.com", rail: "crypto_manual_evm", tx },
    });
    expect(filed.statusCode).toBe(201);
    const approved = await admin(`/api/admin/claims/${filed.json().claim_id}/approve`, { note: "checked" });
    expect(approved.statusCode).toBe(200);
    return { tx, accessPath: new URL(approved.json().access_url).pathname, orderId: approved.json().order_id };
  }

  it("serves the public key set with cache headers, never the private key; it is in the OpenAPI", async () => {
    const r = await app.inject({ method: "GET", url: "/.well-known/jwks.json" });
    expect(r.statusCode).toBe(200);
    expect(r.headers["cache-control"]).toBe("public, max-age=300");
    const jwks = r.json();
    expect(jwks.keys).toHaveLength(1);
    expect(Object.keys(jwks.keys[0]).sort()).toEqual(["alg", "crv", "kid", "kty", "use", "x"]);
    expect(jwks.keys[0]).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig" });
    const secrets = readSecretsFile(path.join(dataDirOf(db) as string, SECRETS_FILE));
    const seed = secrets?.receipt_signing_key as string;
    expect(seed).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(r.body).not.toContain(seed);
    expect(r.body).not.toContain('"d"');
    const openapi = await app.inject({ method: "GET", url: "/openapi.json" });
    expect(Object.keys(openapi.json().paths)).toEqual(
      expect.arrayContaining(["/.well-known/jwks.json", "/access/{token}/receipt.jws"]),
    );
  });

  it("an approved claim's order carries a receipt that verifies and names the purchase; two reads, same bytes", async () => {
    const { tx, accessPath, orderId } = await approvedOrder();
    const first = await app.inject({ method: "GET", url: accessPath, headers: { accept: "application/json" } });
    expect(first.statusCode).toBe(200);
    const receipt = first.json().receipt as string;
    expect(receipt).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    const jwks = (await app.inject({ method: "GET", url: "/.well-known/jwks.json" })).json();
    const result = await verifyReceipt(receipt, jwks);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const order = await app.services.orders.get(orderId);
    expect(result.claims).toEqual({
      version: 1,
      iss: "http://lab.test",
      iat: Math.floor(Date.parse(order.created_at) / 1000),
      issuedAt: Math.floor(Date.parse(order.created_at) / 1000),
      resourceUrl: "http://lab.test/api/x402-products?sku=zrw-pro",
      network: null,
      payer: null,
      transaction: tx,
      item: { kind: "product", ref: "zrw-pro", sku: "zrw-pro", name: first.json().product.name },
      amount: "24900",
      decimals: 2,
      currency: "USD",
      asset: "USD",
      rail: "crypto_manual_evm",
      order_id: orderId,
      job_id: null,
    });
    expect(JSON.stringify(result.claims)).not.toContain("buyer@example.com");
    const second = await app.inject({ method: "GET", url: accessPath, headers: { accept: "application/json" } });
    expect(second.json().receipt).toBe(receipt);
    // the download: the same bytes, as a file
    const file = await app.inject({ method: "GET", url: `${accessPath}/receipt.jws` });
    expect(file.statusCode).toBe(200);
    expect(file.headers["content-type"]).toBe("application/jose");
    expect(file.headers["content-disposition"]).toBe(`attachment; filename="receipt-${orderId}.jws"`);
    expect(file.headers["cache-control"]).toBe("private, no-store");
    expect(file.body).toBe(`${receipt}\n`);
    // the access page shows it in a copyable block with the download link
    const page = await app.inject({ method: "GET", url: accessPath, headers: { accept: "text/html" } });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`<textarea id="receipt" class="mono" readonly`);
    expect(page.body).toContain(`>${receipt}</textarea>`);
    expect(page.body).toContain(`href="${accessPath}/receipt.jws" download`);
  });

  it("after a restart on the same data the receipt is the same bytes (nothing stored; the key is kept)", async () => {
    const { accessPath } = await approvedOrder();
    const before = (await app.inject({ method: "GET", url: `${accessPath}/receipt.jws` })).body;
    const again = await appOn(db, ENV);
    try {
      expect((await again.inject({ method: "GET", url: `${accessPath}/receipt.jws` })).body).toBe(before);
    } finally {
      await again.close();
    }
  });

  it("an x402 order (granted as the x402 rail grants it): a USDC receipt naming network, asset and payer; wallet recovery returns the same receipt", async () => {
    const account = privateKeyToAccount(`0x${randomBytes(32).toString("hex")}`);
    const payer = account.address.toLowerCase();
    const tx = `0x${randomBytes(32).toString("hex")}`;
    const services = app.services;
    const item = productItem(services.catalog.resolve("zrw-pro"), "http://lab.test/api/x402-products");
    const granted = await services.orders.grant(item, {
      proofKey: `evm:8453:test:${payer}:${randomBytes(8).toString("hex")}`,
      rail: "x402_base_usdc",
      amountCents: item.amountCents,
      currency: "usd",
      transactionRef: tx,
      meta: { network: "eip155:8453", payer, amount_units: item.amountUnits, proof_kind: "evm_eip3009", note: null },
      onChain: { chain: "evm", tx, payer },
    });
    const order = await services.orders.get(granted.id);
    const receipt = services.orderReceipt(order);
    const result = await verifyReceipt(receipt, services.receipts.jwks());
    expect(result).toMatchObject({
      ok: true,
      claims: {
        amount: item.amountUnits,
        decimals: 6,
        currency: "USDC",
        asset: services.config.usdc.base,
        network: "eip155:8453",
        payer,
        transaction: tx,
        rail: "x402_base_usdc",
        order_id: granted.id,
      },
    });
    // the access page (JSON) and wallet recovery carry the same bytes
    const accessPath = new URL(services.orders.accessUrl(granted.id)).pathname;
    const access = await app.inject({ method: "GET", url: accessPath, headers: { accept: "application/json" } });
    expect(access.json().receipt).toBe(receipt);
    const c = await app.inject({
      method: "POST",
      url: "/api/orders/recover/challenge",
      payload: { chain: "base", address: account.address },
    });
    expect(c.statusCode, c.body).toBe(201);
    const signature = await account.signMessage({ message: c.json().message });
    const rec = await app.inject({
      method: "POST",
      url: "/api/orders/recover",
      payload: { nonce: c.json().nonce, signature },
    });
    expect(rec.statusCode, rec.body).toBe(200);
    expect(rec.json().orders).toEqual([expect.objectContaining({ order_id: granted.id, receipt })]);
  });

  it("a revoked order has no receipt to download (410), an unknown token 404", async () => {
    const { accessPath, orderId } = await approvedOrder();
    expect((await admin(`/api/admin/orders/${orderId}/revoke`, { reason: "test" })).statusCode).toBe(200);
    expect((await app.inject({ method: "GET", url: `${accessPath}/receipt.jws` })).statusCode).toBe(410);
    const unknown = await app.inject({ method: "GET", url: `/access/${"x".repeat(43)}/receipt.jws` });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().code).toBe("access_not_found");
  });

  it("RECEIPT_SIGNING_KEY wins over the file: the JWKS publishes its key and the retired ones", async () => {
    const seed = randomBytes(32).toString("base64url");
    const retired = app.services.receipts.jwks().keys[0]?.x as string;
    const other = await appOn(db, { ...ENV, RECEIPT_SIGNING_KEY: seed, RECEIPT_RETIRED_KEYS: retired });
    try {
      const keys = (await other.inject({ method: "GET", url: "/.well-known/jwks.json" })).json().keys;
      expect(keys.map((k: { x: string }) => k.x)).toEqual([
        (await import("../../src/receipts/service.js")).Receipts.fromSettings(seed, "x").jwks().keys[0]?.x,
        retired,
      ]);
    } finally {
      await other.close();
    }
  });
});
