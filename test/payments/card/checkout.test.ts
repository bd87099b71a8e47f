import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testConfig } from "../../../src/config.js";
import { cardRailsConfigured, checkoutPaymentMethods } from "../../../src/payments/card/rails.js";
import { testApp } from "../../support/app.js";
import { ENGINES } from "../../support/databases.js";
import { type CardHarness, cardHarness } from "../../support/stripe/harness.js";

describe("POST /api/checkout through the stripe SDK against the local stand-in", () => {
  let h: CardHarness;
  beforeAll(async () => {
    h = await cardHarness("sqlite");
  });
  afterAll(async () => h.close());

  it("creates a payment-mode session at the catalog price with URLs under BASE_URL, metadata and an idempotency key", async () => {
    const r = await h.checkout("zrw-pro", "ada@example.com");
    expect(r.status).toBe(200);
    const id = r.body.session_id as string;
    expect(id).toMatch(/^cs_test_/);
    expect(r.body.url).toBe(`${h.stripe.base}/c/pay/${id}`);
    const call = h.stripe.requests.find((q) => q.method === "POST" && q.path === "/v1/checkout/sessions");
    expect(call).toBeDefined();
    expect(call?.body).toMatchObject({
      mode: "payment",
      line_items: [{ quantity: "1", price_data: { currency: "usd", unit_amount: "24900" } }],
      success_url: "http://lab.test/pay/success?session_id={CHECKOUT_SESSION_ID}",
      cancel_url: "http://lab.test/pay/cancel?sku=zrw-pro",
      metadata: { sku: "zrw-pro", email: "ada@example.com" },
      customer_email: "ada@example.com",
    });
    // stripe 23: dynamic payment methods by default; never the removed payment_method_types
    expect(call?.body.payment_method_types).toBeUndefined();
    expect(call?.body.allowed_payment_method_types).toBeUndefined();
    expect(call?.idempotencyKey).toMatch(/^labphi:[0-9a-f]{64}$/);
    expect(call?.authorization).toBe(`Bearer ${h.stripe.secretKey}`);
  });

  it("resolves aliases and answers the same session for a retried request (same sku and e-mail)", async () => {
    const before = h.stripe.sessions.size;
    const a = await h.checkout("pro", "retry@example.com");
    const b = await h.checkout("zrw-pro", "RETRY@example.com");
    expect(a.status).toBe(200);
    expect(b.body.session_id).toBe(a.body.session_id);
    expect(b.body.reused).toBe(true);
    expect(h.stripe.sessions.size).toBe(before + 1);
    const other = await h.checkout("zrw-pro", "someone-else@example.com");
    expect(other.body.session_id).not.toBe(a.body.session_id);
  });

  it("answers 404, 410 and 400 problems for bad input, without calling Stripe", async () => {
    const calls = h.stripe.requests.length;
    const cases: [Record<string, unknown>, number, string][] = [
      [{ sku: "nope", email: "a@example.com" }, 404, "unknown_sku"],
      [{ sku: "try-gate", email: "a@example.com" }, 410, "sku_retired"],
      [{ sku: "chip", email: "a@example.com" }, 410, "sku_retired"],
      [{ sku: "zrw-pro", email: "a@example.com", rail: "crypto_manual_evm" }, 400, "unsupported_rail"],
      [{ sku: "zrw-pro", email: "not-an-email" }, 400, "invalid_email"],
      [{ sku: "zrw-pro" }, 400, "validation_failed"],
    ];
    for (const [payload, status, code] of cases) {
      const r = await h.app.inject({ method: "POST", url: "/api/checkout", payload });
      expect(r.statusCode, JSON.stringify(payload)).toBe(status);
      expect(r.headers["content-type"]).toContain("application/problem+json");
      expect(r.json().code).toBe(code);
    }
    expect(h.stripe.requests.length).toBe(calls);
  });

  it("bounds Stripe reads from the public status route (unknown ids: one read per 30 s)", async () => {
    const reads = () => h.stripe.requests.filter((q) => q.path === "/v1/checkout/sessions/cs_test_nobody").length;
    for (let i = 0; i < 5; i++) {
      const r = await h.app.inject({ method: "GET", url: "/api/checkout/cs_test_nobody" });
      expect(r.statusCode).toBe(404);
      expect(r.json().code).toBe("session_not_found");
    }
    expect(reads()).toBe(1);
    const bad = await h.app.inject({ method: "GET", url: "/api/checkout/not-a-session" });
    expect(bad.statusCode).toBe(400);
  });

  it("answers 502 when Stripe fails, and 200 once it recovers", async () => {
    h.stripe.failNext(400);
    const r = await h.checkout("sponsor", "fail@example.com");
    expect(r.status).toBe(502);
    expect(r.body.code).toBe("stripe_error");
    const ok = await h.checkout("sponsor", "fail@example.com");
    expect(ok.status).toBe(200);
  });
});

describe("checkout configuration", () => {
  it("passes STRIPE_PAYMENT_METHODS as allowed_payment_method_types", async () => {
    const h = await cardHarness("sqlite", { STRIPE_PAYMENT_METHODS: "card,link,us_bank_account" });
    try {
      const r = await h.checkout("consulting");
      expect(r.status).toBe(200);
      const body = h.stripe.requests.at(-1)?.body as Record<string, unknown>;
      expect(body.allowed_payment_method_types).toEqual(["card", "link", "us_bank_account"]);
      expect(body.payment_method_types).toBeUndefined();
    } finally {
      await h.close();
    }
  });

  it("without STRIPE_SECRET_KEY the card rails are not configured and checkout answers 503", async () => {
    const cfg = testConfig();
    expect(cardRailsConfigured(cfg)).toEqual({ checkout: false, paymentLinks: false });
    expect(checkoutPaymentMethods(cfg)).toEqual({ mode: "dynamic", methods: [] });
    const t = await testApp("sqlite");
    try {
      const r = await t.app.inject({
        method: "POST",
        url: "/api/checkout",
        payload: { sku: "zrw-pro", email: "a@example.com", rail: "stripe" },
      });
      expect(r.statusCode).toBe(503);
      expect(r.json()).toMatchObject({ code: "card_rails_not_configured", configured: false });
      const w = await t.app.inject({ method: "POST", url: "/api/stripe/webhook", payload: "{}" });
      expect(w.statusCode).toBe(503);
      expect(w.json().code).toBe("stripe_webhook_not_configured");
    } finally {
      await t.close();
    }
  });

  it("without STRIPE_WEBHOOK_SECRET checkout is not configured (no webhook: nothing settles once the buyer leaves) and answers 503 naming it", async () => {
    expect(cardRailsConfigured(testConfig({ STRIPE_SECRET_KEY: "sk_test_abc" }))).toEqual({
      checkout: false,
      paymentLinks: false,
    });
    const t = await testApp("sqlite", { STRIPE_SECRET_KEY: "sk_test_abc", STRIPE_API_BASE: "http://127.0.0.1:9" });
    try {
      const r = await t.app.inject({
        method: "POST",
        url: "/api/checkout",
        payload: { sku: "zrw-pro", email: "a@example.com" },
      });
      expect(r.statusCode).toBe(503);
      expect(r.json()).toMatchObject({
        code: "card_rails_not_configured",
        configured: false,
        missing: { card_checkout: ["STRIPE_WEBHOOK_SECRET"] },
      });
      // local checks first: a bad request is still a 4xx
      const bad = await t.app.inject({
        method: "POST",
        url: "/api/checkout",
        payload: { sku: "nope", email: "a@example.com" },
      });
      expect(bad.statusCode).toBe(404);
    } finally {
      await t.close();
    }
  });

  it("reports payment links configured only with a key, a webhook secret and at least one link with its id", () => {
    const base = { STRIPE_SECRET_KEY: "sk_test_abc", STRIPE_WEBHOOK_SECRET: "whsec_abc" };
    expect(cardRailsConfigured(testConfig(base))).toEqual({ checkout: true, paymentLinks: false });
    expect(cardRailsConfigured(testConfig({ ...base, PAYMENT_LINK_ZRW_PRO: "https://buy.stripe.com/test_1" }))).toEqual(
      { checkout: true, paymentLinks: false },
    );
    const linked = testConfig({
      ...base,
      PAYMENT_LINK_ZRW_PRO: "https://buy.stripe.com/test_1",
      PAYMENT_LINK_ID_ZRW_PRO: "plink_1",
    });
    expect(cardRailsConfigured(linked)).toEqual({ checkout: true, paymentLinks: true });
    expect(linked.paymentLinks).toEqual({ "zrw-pro": "https://buy.stripe.com/test_1" });
    expect(linked.paymentLinkIds).toEqual({ "zrw-pro": "plink_1" });
    expect(() => testConfig({ PAYMENT_LINK_ID_ZRW_PRO: "https://x" })).toThrow(/PAYMENT_LINK_ID_ZRW_PRO/);
    expect(() => testConfig({ STRIPE_SECRET_KEY: "pk_test_1" })).toThrow(/STRIPE_SECRET_KEY/);
    expect(() => testConfig({ STRIPE_WEBHOOK_SECRET: "secret" })).toThrow(/STRIPE_WEBHOOK_SECRET/);
  });
});

describe.each(ENGINES)("checkout retries on %s", (engine) => {
  let h: CardHarness;
  beforeAll(async () => {
    h = await cardHarness(engine);
  });
  afterAll(async () => h.close());

  it("concurrent retries of one request answer one session", async () => {
    const results = await Promise.all(Array.from({ length: 6 }, () => h.checkout("blackjack", "same@example.com")));
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(new Set(results.map((r) => r.body.session_id)).size).toBe(1);
    const rows = await h.app.services.db.kysely
      .selectFrom("card_sessions")
      .selectAll()
      .where("email", "=", "same@example.com")
      .execute();
    expect(rows).toHaveLength(1);
  });

  it("a retry after losing our record (crash after Stripe answered) gets the same session from Stripe", async () => {
    const first = await h.checkout("shard-tsdb", "crash@example.com");
    await h.app.services.db.kysely
      .deleteFrom("card_sessions")
      .where("id", "=", first.body.session_id as string)
      .execute();
    const retry = await h.checkout("shard-tsdb", "crash@example.com");
    expect(retry.body.session_id).toBe(first.body.session_id);
    const keys = h.stripe.requests.filter((q) => q.method === "POST").map((q) => q.idempotencyKey);
    expect(keys.at(-1)).toBe(keys.at(-2));
    expect([...h.stripe.sessions.values()].filter((s) => s.customer_email === "crash@example.com")).toHaveLength(1);
  });
});

describe("POST /api/stripe/webhook verifies the signature before anything else", () => {
  const secret = "whsec_signonly";
  const payload = JSON.stringify({ id: "evt_1", object: "event", type: "checkout.session.completed", data: {} });
  const signed = (body: string, key = secret) =>
    Stripe.webhooks.generateTestHeaderString({ payload: body, secret: key });

  it("with the webhook secret but no API key: a bad or missing signature is 400, only a signed event gets 503", async () => {
    const t = await testApp("sqlite", { STRIPE_WEBHOOK_SECRET: secret });
    try {
      const post = (body: string, headers: Record<string, string>) =>
        t.app.inject({
          method: "POST",
          url: "/api/stripe/webhook",
          headers: { "content-type": "application/json", ...headers },
          payload: body,
        });
      const missing = await post(payload, {});
      expect(missing.statusCode).toBe(400);
      expect(missing.json().code).toBe("missing_signature");
      const wrongSecret = await post(payload, { "stripe-signature": signed(payload, "whsec_other") });
      expect(wrongSecret.statusCode).toBe(400);
      expect(wrongSecret.json().code).toBe("bad_signature");
      const tampered = await post(payload.replace("evt_1", "evt_2"), { "stripe-signature": signed(payload) });
      expect(tampered.statusCode).toBe(400);
      expect(tampered.json().code).toBe("bad_signature");
      const good = await post(payload, { "stripe-signature": signed(payload) });
      expect(good.statusCode).toBe(503);
      expect(good.json()).toMatchObject({
        code: "stripe_webhook_not_configured",
        missing: { stripe_webhook: ["STRIPE_SECRET_KEY"] },
      });
      // nothing was recorded for any of them
      const events = await t.app.services.db.kysely.selectFrom("webhook_events").selectAll().execute();
      expect(events).toHaveLength(0);
    } finally {
      await t.close();
    }
  });

  it("without the webhook secret nothing can be verified: 503 naming it", async () => {
    const t = await testApp("sqlite", { STRIPE_SECRET_KEY: "sk_test_abc", STRIPE_API_BASE: "http://127.0.0.1:9" });
    try {
      const r = await t.app.inject({
        method: "POST",
        url: "/api/stripe/webhook",
        headers: { "content-type": "application/json", "stripe-signature": signed(payload) },
        payload,
      });
      expect(r.statusCode).toBe(503);
      expect(r.json()).toMatchObject({
        code: "stripe_webhook_not_configured",
        missing: { stripe_webhook: ["STRIPE_WEBHOOK_SECRET"] },
      });
    } finally {
      await t.close();
    }
  });
});
