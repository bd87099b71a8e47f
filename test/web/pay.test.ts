import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testApp } from "../support/app.js";
import { BASE_SETTLEMENT } from "../support/rails.js";
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
      ...BASE_SETTLEMENT,
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

  it("answers an unknown sku with the HTML error page in a browser and problem+json to JSON clients", async () => {
    const browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
    const unknown = await h.app.inject({ method: "GET", url: "/pay?sku=nope", headers: { accept: browser } });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers["content-type"]).toContain("text/html");
    expect(unknown.body).toContain('No product has the sku or alias "nope".'.replace(/"/g, "&quot;"));
    expect(unknown.body).toMatch(/<code id="problem-code">unknown_sku<\/code>/);
    expect(unknown.body).not.toContain('"type":');
    const json = await h.app.inject({
      method: "GET",
      url: "/pay?sku=nope",
      headers: { accept: "application/json" },
    });
    expect(json.statusCode).toBe(404);
    expect(json.headers["content-type"]).toContain("application/problem+json");
    expect(json.json().code).toBe("unknown_sku");
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

  it("card and claim forms that fail in a browser answer HTML with the problem's words, never JSON", async () => {
    const browser = { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" };
    const post = (url: string, data: Record<string, string>) => {
      const f = form(data);
      return h.app.inject({ method: "POST", url, payload: f.payload, headers: { ...f.headers, ...browser } });
    };
    // a bad e-mail: the product page again, the message inline, the typed value kept
    const bad = await post("/pay", { sku: "zrw-pro", email: "nope" });
    expect(bad.statusCode).toBe(400);
    expect(bad.headers["content-type"]).toContain("text/html");
    expect(bad.body).toContain('id="checkout-error"');
    expect(bad.body).toContain("email must be a valid e-mail address.");
    expect(bad.body).toContain("<code>invalid_email</code>");
    expect(bad.body).toContain('value="nope"');
    expect(bad.body).toContain('action="/pay"');
    // an unknown sku: the HTML problem page
    const unknown = await post("/pay", { sku: "nope", email: "a@example.com" });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers["content-type"]).toContain("text/html");
    expect(unknown.body).toMatch(/<code id="problem-code">unknown_sku<\/code>/);
    // Stripe failing: the product page with Stripe's trouble in words
    h.stripe.failNext(500, 2);
    const down = await post("/pay", { sku: "zrw-pro", email: "a@example.com" });
    expect(down.statusCode).toBe(502);
    expect(down.headers["content-type"]).toContain("text/html");
    expect(down.body).toContain("Stripe answered 500 while creating the checkout session.");
    expect(down.body).toContain("<code>stripe_error</code>");
    // a claim without its transaction: the claim form again, with the message
    const claim = await post("/pay/claim", { sku: "zrw-pro", email: "w@example.com", rail: "crypto_manual_evm" });
    expect(claim.statusCode).toBe(400);
    expect(claim.headers["content-type"]).toContain("text/html");
    expect(claim.body).toContain('id="claim-error"');
    expect(claim.body).toContain("<code>tx_required</code>");
    expect(claim.body).toContain('value="w@example.com"');
    // a field the form schema refuses (control character): the HTML problem page
    const ctl = await post("/pay", { sku: "zrw-pro", email: "a\u0007@example.com" });
    expect(ctl.statusCode).toBe(400);
    expect(ctl.headers["content-type"]).toContain("text/html");
    expect(ctl.body).toContain('id="problem-code"');
    // JSON clients still get problem+json
    const f = form({ sku: "zrw-pro", email: "nope" });
    const json = await h.app.inject({
      method: "POST",
      url: "/pay",
      payload: f.payload,
      headers: { ...f.headers, accept: "application/json" },
    });
    expect(json.headers["content-type"]).toContain("application/problem+json");
    expect(json.json().code).toBe("invalid_email");
  });

  it("the catalog shows every product by kind with its price, buy button and payment link", async () => {
    const r = await h.app.inject({ method: "GET", url: "/pay" });
    expect(r.statusCode).toBe(200);
    expect(r.headers["cache-control"]).toBe("no-cache");
    for (const p of h.app.services.catalog.list()) {
      expect(r.body).toContain(`id="product-${p.sku}"`);
      expect(r.body).toContain(`<p class="price" data-sku="${p.sku}">$${p.amountUsd} `);
    }
    for (const kind of ["license", "service", "support", "olympiad"]) expect(r.body).toContain(`id="kind-${kind}"`);
    expect(r.body).toContain('href="/pay?sku=zrw-pro">Buy');
    expect(r.body).toContain('href="https://buy.stripe.com/test_zrwpro"');
    expect(r.body).toContain('id="agents-pay"');
    expect(r.body).toContain("PAYMENT-SIGNATURE");
    expect(r.body).toContain("eip155:8453");
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

  it("a paid suite quote's success address leads to the jobs page; its cancel page back to suite jobs", async () => {
    const q = await h.app.inject({
      method: "POST",
      url: "/api/ppp-quote",
      payload: { product: "auto", dataClass: "text", op: "compress", bytes: 150_000_000_000 },
    });
    expect(q.statusCode, q.body).toBe(200);
    const c = await h.app.inject({
      method: "POST",
      url: "/api/ppp-checkout",
      payload: { quote_id: q.json().quote_id, email: "jobs@example.com" },
    });
    expect(c.statusCode, c.body).toBe(200);
    const id = c.json().session_id as string;
    h.stripe.pay(id);
    await h.deliver(h.stripe.sessionEvent("checkout.session.completed", id));
    const r = await h.app.inject({ method: "GET", url: `/pay/success?session_id=${id}` });
    expect(r.statusCode).toBe(303);
    expect(r.headers.location).toBe(`/jobs/paid?session_id=${id}`);
    expect(r.body).not.toContain("jt_");
    const cancel = await h.app.inject({ method: "GET", url: `/pay/cancel?quote=${q.json().quote_id}` });
    expect(cancel.statusCode).toBe(200);
    expect(cancel.body).toContain("checkout of your suite job was cancelled; nothing was charged");
    expect(cancel.body).toContain('href="/jobs"');
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

  it("offers no card checkout when there is no Stripe key: one notice with the settings, and the form answers 503", async () => {
    const t = await testApp("sqlite");
    try {
      const r = await t.app.inject({ method: "GET", url: "/pay?sku=donate" });
      expect(r.statusCode).toBe(200);
      expect(r.body).not.toContain('action="/pay"');
      expect(r.body.match(/id="no-rails"/g)).toHaveLength(1);
      expect(r.body).toContain(
        "Card checkout (Stripe): <code>STRIPE_SECRET_KEY</code>, <code>STRIPE_WEBHOOK_SECRET</code>",
      );
      const post = await t.app.inject({
        method: "POST",
        url: "/pay",
        ...form({ sku: "donate", email: "a@example.com" }),
      });
      expect(post.statusCode).toBe(503);
      expect(post.json().code).toBe("card_rails_not_configured");
      const f = form({ sku: "donate", email: "a@example.com" });
      const page = await t.app.inject({
        method: "POST",
        url: "/pay",
        payload: f.payload,
        headers: { ...f.headers, accept: "text/html,*/*;q=0.8" },
      });
      expect(page.statusCode).toBe(503);
      expect(page.headers["content-type"]).toContain("text/html");
      expect(page.body).toContain("Card checkout is not configured on this server (missing");
      expect(page.body).toContain("<code>card_rails_not_configured</code>");
      const list = await t.app.inject({ method: "GET", url: "/pay" });
      expect(list.body).toContain('href="/pay?sku=donate">Details');
      expect(list.body).not.toContain('">Buy<span');
    } finally {
      await t.close();
    }
  });
});
