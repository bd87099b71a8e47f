import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testConfig } from "../../../src/config.js";
import { manualRails } from "../../../src/payments/manual/rails.js";
import { type TestApp, testApp } from "../../support/app.js";
import { ENGINES } from "../../support/databases.js";
import { grantProduct } from "../../support/orders.js";

const ADMIN = "claims-admin-token-0123456789";
const PAY_TO_BASE = "0x1111111111111111111111111111111111111111";
const PAY_TO_SOLANA = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";
const ENV = { ADMIN_TOKEN: ADMIN, PAY_TO_BASE, PAY_TO_SOLANA, CONTACT_EMAIL: "ops@lab.test" };

const evmTx = () => `0x${randomBytes(32).toString("hex")}`;
const B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const solTx = () => Array.from(randomBytes(87), (b) => B58[b % 58]).join("");

describe("manualRails", () => {
  it("describes the manual rails from the configuration", () => {
    const none = manualRails(testConfig());
    expect(none.map((r) => [r.id, r.configured])).toEqual([
      ["crypto_manual_solana", false],
      ["crypto_manual_evm", false],
      ["crypto_manual_btc", false],
      ["wire_invoice_ach", false],
    ]);
    // configured means an operator can approve a claim: contact address and admin token, plus the pay-to address
    expect(none.find((r) => r.id === "wire_invoice_ach")?.missing).toEqual(["CONTACT_EMAIL", "ADMIN_TOKEN"]);
    const noOperator = manualRails(testConfig({ PAY_TO_BASE, CONTACT_EMAIL: "ops@lab.test" }));
    expect(noOperator.find((r) => r.id === "crypto_manual_evm")).toMatchObject({
      configured: false,
      missing: ["ADMIN_TOKEN"],
    });
    const rails = manualRails(testConfig(ENV));
    const evm = rails.find((r) => r.id === "crypto_manual_evm");
    expect(evm).toMatchObject({ configured: true, pay_to: PAY_TO_BASE, claim_endpoint: "POST /api/claims" });
    expect(evm?.claim).toMatch(/^mailto:ops@lab\.test\?subject=/);
    expect(rails.find((r) => r.id === "wire_invoice_ach")?.terms).toBe("net-15");
  });
});

describe.each(ENGINES)("manual claims on %s", (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp(engine, ENV);
  });
  afterAll(async () => t.close());

  const claim = (payload: Record<string, unknown>) => t.app.inject({ method: "POST", url: "/api/claims", payload });
  const admin = (url: string, payload: object = {}) =>
    t.app.inject({
      method: "POST",
      url,
      payload,
      headers: { authorization: `Bearer ${ADMIN}`, "x-operator": "ops-alice" },
    });

  it("records a crypto claim and answers the claim id and next steps (mailto carries the claim id)", async () => {
    const tx = evmTx();
    const r = await claim({ sku: "zrw-pro", email: "c@example.com", rail: "crypto_manual_evm", tx });
    expect(r.statusCode).toBe(201);
    const body = r.json();
    expect(body).toMatchObject({ state: "submitted", sku: "zrw-pro", amount_cents: 24900, amount_usd: "249.00", tx });
    expect(body.claim_id).toMatch(/^clm_/);
    expect(body.pay_to).toBe(PAY_TO_BASE);
    expect(body.next_steps.length).toBeGreaterThan(1);
    expect(decodeURIComponent(body.mailto)).toContain(body.claim_id);
    expect(r.headers.location).toBe(`/api/claims/${body.claim_id}`);
    const status = await t.app.inject({ method: "GET", url: `/api/claims/${body.claim_id}` });
    expect(status.json()).toMatchObject({ state: "submitted", access_url: null });
  });

  it("lets several claims name one transfer (also concurrently): none blocks another; approving one closes the rest", async () => {
    const sig = solTx();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        claim({ sku: "donate", email: `r${i}@example.com`, rail: "crypto_manual_solana", tx: sig }),
      ),
    );
    expect(results.map((r) => r.statusCode)).toEqual(Array(8).fill(201));
    const ids = results.map((r) => r.json().claim_id as string);
    expect(new Set(ids).size).toBe(8);
    const approve = await t.app.inject({
      method: "POST",
      url: `/api/admin/claims/${ids[3]}/approve`,
      headers: { authorization: `Bearer ${ADMIN}` },
      payload: {},
    });
    expect(approve.statusCode, approve.body).toBe(200);
    const rows = await t.app.services.db.kysely.selectFrom("claims").selectAll().where("tx_ref", "=", sig).execute();
    expect(rows.filter((r) => r.state === "approved").map((r) => r.id)).toEqual([ids[3]]);
    expect(rows.filter((r) => r.state === "closed")).toHaveLength(7);
  });

  it("accepts a claim of a transaction that already paid an order on another rail, but never approves it", async () => {
    const tx = evmTx();
    await grantProduct(t.app.services.orders, {
      proofKey: `evm:8453:test:${tx}`,
      sku: "sponsor",
      rail: "x402_base_usdc",
      amountCents: 2900,
      transactionRef: tx,
      payment: { chain: "evm", tx },
    });
    const r = await claim({ sku: "sponsor", email: "a@example.com", rail: "crypto_manual_evm", tx });
    expect(r.statusCode).toBe(201);
    const approve = await t.app.inject({
      method: "POST",
      url: `/api/admin/claims/${r.json().claim_id}/approve`,
      headers: { authorization: `Bearer ${ADMIN}` },
      payload: {},
    });
    expect(approve.statusCode).toBe(409);
    expect(approve.json().code).toBe("tx_already_used");
  });

  it("answers 4xx problems for bad claims", async () => {
    const cases: [Record<string, unknown>, number, string][] = [
      [{ sku: "zrw-pro", email: "a@example.com", rail: "crypto_manual_evm" }, 400, "tx_required"],
      [{ sku: "zrw-pro", email: "a@example.com", rail: "crypto_manual_evm", tx: "0x1234" }, 400, "invalid_tx"],
      [{ sku: "zrw-pro", email: "a@example.com", rail: "crypto_manual_solana", tx: "0OIl" }, 400, "invalid_tx"],
      [{ sku: "zrw-pro", email: "a@example.com", rail: "stripe", tx: evmTx() }, 400, "unsupported_rail"],
      [
        { sku: "zrw-pro", email: "a@example.com", rail: "crypto_manual_btc", tx: "ab".repeat(32) },
        503,
        "rail_not_configured",
      ],
      [{ sku: "zrw-pro", email: "nope", rail: "crypto_manual_evm", tx: evmTx() }, 400, "invalid_email"],
      [{ sku: "nope", email: "a@example.com", rail: "crypto_manual_evm", tx: evmTx() }, 404, "unknown_sku"],
      [{ sku: "try-gate", email: "a@example.com", rail: "crypto_manual_evm", tx: evmTx() }, 410, "sku_retired"],
      [
        { sku: "zrw-pro", email: "a@example.com", rail: "wire_invoice_ach", billing_address: "1 Road" },
        400,
        "company_required",
      ],
      [
        { sku: "zrw-pro", email: "a@example.com", rail: "wire_invoice_ach", company: "ACME" },
        400,
        "billing_address_required",
      ],
      [
        {
          sku: "zrw-pro",
          email: "a@example.com",
          rail: "wire_invoice_ach",
          company: "ACME",
          billing_address: "1 Road",
          currency: "euro",
        },
        400,
        "invalid_currency",
      ],
      [{ email: "a@example.com", rail: "wire_invoice_ach" }, 400, "validation_failed"],
    ];
    for (const [payload, status, code] of cases) {
      const r = await claim(payload);
      expect(r.statusCode, JSON.stringify(payload)).toBe(status);
      expect(r.json().code).toBe(code);
    }
  });

  it("records a wire invoice request on net-15 terms", async () => {
    const r = await claim({
      sku: "consulting",
      email: "ap@acme.example",
      rail: "wire_invoice_ach",
      company: "ACME Corp.",
      billing_address: "1 Infinite Loop, Cupertino",
      currency: "EUR",
    });
    expect(r.statusCode).toBe(201);
    const body = r.json();
    expect(body).toMatchObject({ rail: "wire_invoice_ach", terms: "net-15", amount_cents: 25000, pay_to: null });
    expect(body.next_steps.join(" ")).toMatch(/net-15/);
    expect(body.next_steps.join(" ")).toMatch(/EUR/);
  });

  it("approves a claim into one order with an access URL, idempotently, and records who did it", async () => {
    const tx = evmTx();
    const id = (await claim({ sku: "zrw-pro", email: "approve@example.com", rail: "crypto_manual_evm", tx })).json()
      .claim_id as string;
    const results = await Promise.all(
      Array.from({ length: 5 }, () => admin(`/api/admin/claims/${id}/approve`, { note: "tx checked" })),
    );
    expect(results.every((r) => r.statusCode === 200)).toBe(true);
    const bodies = results.map((r) => r.json());
    expect(new Set(bodies.map((b) => b.order_id)).size).toBe(1);
    expect(bodies.filter((b) => b.created)).toHaveLength(1);
    const a = bodies[0];
    expect(a.order).toMatchObject({ sku: "zrw-pro", rail: "crypto_manual_evm", transaction: tx, status: "active" });
    expect(a.claim).toMatchObject({
      state: "approved",
      decided_by: expect.stringMatching(/^admin:[0-9a-f]{12}:ops-alice$/),
    });
    const orders = await t.app.services.db.kysely
      .selectFrom("orders")
      .selectAll()
      .where("proof_key", "=", `claim:${id}`)
      .execute();
    expect(orders).toHaveLength(1);
    const access = await t.app.inject({ method: "GET", url: new URL(a.access_url).pathname });
    expect(access.statusCode).toBe(200);
    const status = (await t.app.inject({ method: "GET", url: `/api/claims/${id}` })).json();
    expect(status).toMatchObject({ state: "approved", access_url: a.access_url, order_status: "active" });
    const audit = await t.app.services.db.kysely
      .selectFrom("audit_log")
      .selectAll()
      .where("subject", "=", id)
      .execute();
    expect(audit.map((x) => x.action).sort()).toEqual(["claim.approved", "claim.submitted"]);

    // revoke: the claim and the order's entitlement
    const revoked = await admin(`/api/admin/claims/${id}/revoke`, { reason: "chargeback" });
    expect(revoked.json()).toMatchObject({ state: "revoked", reason: "chargeback" });
    expect((await t.app.inject({ method: "GET", url: new URL(a.access_url).pathname })).statusCode).toBe(410);
    const lic = await t.app.inject({ method: "GET", url: `/api/licenses/${a.order.license_key}` });
    expect(lic.json()).toMatchObject({ valid: false, code: "revoked" });
  });

  it("rejects a claim; a rejected claim cannot be approved", async () => {
    const id = (
      await claim({ sku: "donate", email: "rej@example.com", rail: "crypto_manual_solana", tx: solTx() })
    ).json().claim_id as string;
    const r = await admin(`/api/admin/claims/${id}/reject`, { reason: "no such transfer" });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ state: "rejected", reason: "no such transfer" });
    const again = await admin(`/api/admin/claims/${id}/approve`);
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe("claim_not_pending");
    const status = (await t.app.inject({ method: "GET", url: `/api/claims/${id}` })).json();
    expect(status).toMatchObject({ state: "rejected", access_url: null, reason: "no such transfer" });
    const none = await t.app.services.db.kysely
      .selectFrom("orders")
      .selectAll()
      .where("proof_key", "=", `claim:${id}`)
      .execute();
    expect(none).toHaveLength(0);
    expect((await admin("/api/admin/claims/clm_unknown/approve")).statusCode).toBe(404);
    expect((await t.app.inject({ method: "GET", url: "/api/claims/not-a-claim" })).statusCode).toBe(400);
  });
});
