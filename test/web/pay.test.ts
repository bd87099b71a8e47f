import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testApp } from "../support/app.js";
import { type CardHarness, cardHarness } from "../support/stripe/harness.js";

const form = (data: Record<string, string>) => ({
  payload: new URLSearchParams(data).toString(),
  headers: { "content-type": "application/x-www-form-urlencoded" },
});

describe("human purchase pages", () => {
  let h: CardHarness;
  beforeAll(async () => {
    h = await cardHarness("sqlite", {
      PAYMENT_LINK_ZRW_PRO: "https://buy.stripe.com/test_zrwpro",
      PAYMENT_LINK_ID_ZRW_PRO: "plink_zrwpro",
      PAY_TO_BASE: "0x3333333333333333333333333333333333333333",
      CONTACT_EMAIL: "ops@lab.test",
    });
  });
  afterAll(async () => h.close());

  it("/pay?sku= shows the product, price and the checkout form; /pay lists products", async () => {
    const r = await h.app.inject({ method: "GET", url: "/pay?sku=pro" });
    expect(r.statusCode).toBe(200);
    expect(r.headers["content-type"]).toContain("text/html");
    expect(r.body).toContain("ZRW Pro licence");
    expect(r.body).toContain("$249.00");
    expect(r.body).toContain('action="/pay"');
    expect(r.body).toContain("https://buy.stripe.com/test_zrwpro");
    const list = await h.app.inject({ method: "GET", url: "/pay" });
    expect(list.body).toContain('href="/pay?sku=gao-entry"');
  });

  it("answers unknown and retired skus with problem+json, like every route", async () => {
    const unknown = await h.app.inject({ method: "GET", url: "/pay?sku=nope", headers: { accept: "text/html" } });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers["content-type"]).toContain("application/problem+json");
    expect(unknown.json().code).toBe("unknown_sku");
    const retired = await h.app.inject({ method: "GET", url: "/pay?sku=try-gate" });
    expect(retired.statusCode).toBe(410);
    const xss = await h.app.inject({ method: "GET", url: "/pay/cancel?sku=%3Cscript%3Ealert(1)%3C/script%3E" });
    expect(xss.statusCode).toBe(404);
    expect(xss.headers["content-type"]).toContain("application/problem+json");
  });

  it("the form starts the hosted checkout (303 to Stripe); a bad e-mail stays on our page", async () => {
    const r = await h.app.inject({
      method: "POST",
      url: "/pay",
      ...form({ sku: "zrw-pro", email: "web@example.com" }),
    });
    expect(r.statusCode).toBe(303);
    expect(r.headers.location).toMatch(new RegExp(`^${h.stripe.base}/c/pay/cs_test_`));
    const bad = await h.app.inject({ method: "POST", url: "/pay", ...form({ sku: "zrw-pro", email: "nope" }) });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe("invalid_email");
  });

  it("the success page confirms, explains a pending bank debit, then shows the order and access URL", async () => {
    const started = await h.checkout("consulting", "debit@example.com");
    const id = started.body.session_id as string;
    const open = await h.app.inject({ method: "GET", url: `/pay/success?session_id=${id}` });
    expect(open.body).toContain("Confirming your payment");
    h.stripe.completeUnpaid(id);
    await h.deliver(h.stripe.sessionEvent("checkout.session.completed", id));
    const pending = await h.app.inject({ method: "GET", url: `/pay/success?session_id=${id}` });
    expect(pending.body).toContain("Payment pending");
    expect(pending.body).toContain("bank debit");
    expect(pending.body).not.toContain("/access/");
    h.stripe.settle(id);
    await h.deliver(h.stripe.sessionEvent("checkout.session.async_payment_succeeded", id));
    const paid = await h.app.inject({ method: "GET", url: `/pay/success?session_id=${id}` });
    expect(paid.body).toContain("payment received");
    const [order] = await h.app.services.db.kysely
      .selectFrom("orders")
      .selectAll()
      .where("proof_key", "=", `stripe:session:${id}`)
      .execute();
    expect(paid.body).toContain(order?.id);
    expect(paid.body).toContain(h.app.services.orders.accessUrl(order?.id ?? ""));
    const missing = await h.app.inject({ method: "GET", url: "/pay/success" });
    expect(missing.statusCode).toBe(400);
    const unknown = await h.app.inject({ method: "GET", url: "/pay/success?session_id=cs_test_unknown" });
    expect(unknown.statusCode).toBe(404);
  });

  it("the cancel page offers the other rails and records a claim from its form", async () => {
    const r = await h.app.inject({ method: "GET", url: "/pay/cancel?sku=zrw-pro" });
    expect(r.statusCode).toBe(200);
    expect(r.body).toContain("nothing was charged");
    expect(r.body).toContain('href="/pay?sku=zrw-pro"');
    expect(r.body).toContain("https://buy.stripe.com/test_zrwpro");
    expect(r.body).toContain('id="rail-crypto_manual_evm"');
    expect(r.body).toContain('id="rail-wire_invoice_ach"');
    expect(r.body).not.toContain('id="rail-crypto_manual_solana"');
    expect(r.body).toContain("POST /api/x402-products");
    const claim = await h.app.inject({
      method: "POST",
      url: "/pay/claim",
      ...form({
        sku: "zrw-pro",
        email: "w@example.com",
        rail: "wire_invoice_ach",
        company: "ACME",
        billing_address: "1 Road",
        currency: "USD",
      }),
    });
    expect(claim.statusCode).toBe(201);
    expect(claim.body).toMatch(/clm_[A-Za-z0-9_-]+/);
    expect(claim.body).toContain("net-15");
    expect(claim.body).toContain("mailto:ops@lab.test");
    const bad = await h.app.inject({
      method: "POST",
      url: "/pay/claim",
      ...form({ sku: "zrw-pro", email: "w@example.com", rail: "crypto_manual_evm" }),
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe("tx_required");
  });

  it("says card checkout is not configured when there is no Stripe key", async () => {
    const t = await testApp("sqlite");
    try {
      const r = await t.app.inject({ method: "GET", url: "/pay?sku=donate" });
      expect(r.statusCode).toBe(200);
      expect(r.body).toContain("Card checkout is not configured");
      const post = await t.app.inject({
        method: "POST",
        url: "/pay",
        ...form({ sku: "donate", email: "a@example.com" }),
      });
      expect(post.statusCode).toBe(503);
      expect(post.json().code).toBe("card_rails_not_configured");
    } finally {
      await t.close();
    }
  });
});
