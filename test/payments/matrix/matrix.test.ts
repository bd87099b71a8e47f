import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Catalog } from "../../../src/catalog/service.js";
import { testConfig } from "../../../src/config.js";
import { suitePricingRecord } from "../../../src/jobs/pricing.js";
import { RAIL_IDS } from "../../../src/payments/matrix/schemas.js";
import { configuredFlags, type HasRoute, paymentsMatrix } from "../../../src/payments/matrix/service.js";
import { type TestApp, testApp } from "../../support/app.js";
import { BASE_SETTLEMENT, MANUAL_SETTLEMENT, SOLANA_SETTLEMENT } from "../../support/rails.js";

const suitePricing = suitePricingRecord();

const PAY_TO_BASE = "0x1111111111111111111111111111111111111111";
const PAY_TO_SOLANA = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";

/**
 * The spec's example deployment: every setting its table assumes (no BTC address, no redirect-link
 * provider), complete enough that each rail marked true can settle (placeholders, nothing funded).
 */
const SPEC_EXAMPLE = {
  STRIPE_SECRET_KEY: "sk_test_example",
  STRIPE_WEBHOOK_SECRET: "whsec_example",
  PAYMENT_LINK_ZRW_PRO: "https://buy.stripe.com/test_zrw_pro",
  PAYMENT_LINK_ID_ZRW_PRO: "plink_example",
  PAY_TO_BASE,
  ...BASE_SETTLEMENT,
  PAY_TO_SOLANA,
  ...SOLANA_SETTLEMENT,
  ...MANUAL_SETTLEMENT,
};

/** The spec's table "Payment rail record (payments matrix)", in its order. */
const SPEC_TABLE: [string, string[], boolean][] = [
  ["card_checkout", ["humans", "agents_via_browser"], true],
  ["card_payment_link", ["humans"], true],
  ["x402_solana_usdc", ["agents"], true],
  ["x402_base_usdc", ["agents"], true],
  ["crypto_manual_solana", ["humans", "agents"], true],
  ["crypto_manual_evm", ["humans", "agents"], true],
  ["crypto_manual_btc", ["humans"], false],
  ["redirect_link_checkout", ["humans"], false],
  ["wire_invoice_ach", ["humans", "enterprise"], true],
  ["suite_metered", ["humans", "agents"], true],
];

type Matrix = ReturnType<typeof paymentsMatrix>;

async function getMatrix(t: TestApp, query = ""): Promise<Matrix> {
  const res = await t.app.inject({ method: "GET", url: `/api/payments${query}` });
  expect(res.statusCode).toBe(200);
  return res.json() as Matrix;
}

describe("GET /api/payments with the spec's example configuration", () => {
  let t: TestApp;
  let m: Matrix;
  beforeAll(async () => {
    t = await testApp("sqlite", SPEC_EXAMPLE);
    m = await getMatrix(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it("reproduces the spec's rail table exactly: ids, order, audiences, configured flags", () => {
    expect(m.rails.map((r) => [r.id, r.audience, r.configured])).toEqual(SPEC_TABLE);
    expect(m.configured_rails).toEqual(SPEC_TABLE.filter(([, , c]) => c).map(([id]) => id));
    expect(m.missing_or_optional).toEqual(["crypto_manual_btc", "redirect_link_checkout"]);
  });

  it("gives every rail the settings it still misses (none for a configured rail)", () => {
    for (const r of m.rails) expect(r.missing.length === 0, r.id).toBe(r.configured);
    expect(m.rails.find((r) => r.id === "crypto_manual_btc")?.missing).toEqual(["PAY_TO_BTC"]);
  });

  it("gives every rail id, name, audience, configured, note and how", () => {
    for (const r of m.rails) {
      expect(r.name.length, r.id).toBeGreaterThan(0);
      expect(r.note.length, r.id).toBeGreaterThan(0);
      expect(r.how.length, r.id).toBeGreaterThan(0);
      expect(typeof r.configured).toBe("boolean");
    }
  });

  it("gives every crypto rail network, asset, payTo, header, asset_hint, chains and a claim mail link", () => {
    const crypto = m.rails.filter((r) => r.kind === "x402" || r.kind === "crypto_manual");
    expect(crypto.map((r) => r.id)).toEqual([
      "x402_solana_usdc",
      "x402_base_usdc",
      "crypto_manual_solana",
      "crypto_manual_evm",
      "crypto_manual_btc",
    ]);
    for (const r of crypto) {
      for (const key of ["network", "asset", "payTo", "header", "asset_hint", "chains", "claim"]) {
        expect(r, `${r.id}.${key}`).toHaveProperty(key);
      }
      expect(r.claim).toMatch(/^mailto:pay@lab\.test\?subject=/);
      const claimsServed = t.app.services.routes.allowedMethods("/api/claims").includes("POST");
      expect(decodeURIComponent(r.claim ?? "").includes("POST http://lab.test/api/claims"), r.id).toBe(claimsServed);
    }
    const byId = Object.fromEntries(m.rails.map((r) => [r.id, r]));
    expect(byId.x402_base_usdc).toMatchObject({
      network: "eip155:8453",
      asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
      payTo: PAY_TO_BASE,
      header: "X-PAYMENT",
      chains: ["base"],
    });
    expect(byId.x402_solana_usdc).toMatchObject({
      network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
      asset: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
      payTo: PAY_TO_SOLANA,
      header: "X-PAYMENT",
      chains: ["solana"],
    });
    expect(byId.crypto_manual_solana?.payTo).toBe(PAY_TO_SOLANA);
    expect(byId.crypto_manual_evm?.payTo).toBe(PAY_TO_BASE);
    expect(byId.crypto_manual_btc?.payTo).toBeNull();
    expect(byId.wire_invoice_ach?.terms).toBe("net-15");
  });

  it("lists the hosted-checkout payment method ids, offered when eligible", () => {
    expect(m.payment_methods.mode).toBe("dynamic");
    expect(m.payment_methods.methods).toEqual([
      "card",
      "link",
      "cashapp",
      "amazon_pay",
      "us_bank_account",
      "affirm",
      "klarna",
    ]);
    expect(m.payment_methods.note).toMatch(/when eligible/);
    expect(m.rails.find((r) => r.id === "card_checkout")?.payment_methods).toEqual(m.payment_methods.methods);
  });

  it("has preferred rails as the spec says", () => {
    expect(m.preferred).toEqual({ human: "card_checkout", agent: "x402_base_usdc", enterprise: "wire_invoice_ach" });
  });

  it("lists every product with checkout, agent_x402 and human_payment_link, priced from the catalog", () => {
    const catalog = new Catalog();
    expect(m.products.map((p) => p.sku)).toEqual(catalog.skus());
    for (const p of m.products) {
      const c = catalog.resolve(p.sku);
      expect(p.amount_cents).toBe(c.amountCents);
      expect(p.amount_usd).toBe(c.amountUsd);
      expect(p.max_amount_required).toBe(String(c.amountCents * 10_000));
      expect(p.checkout).toBe(`POST /api/checkout { "sku": "${p.sku}" }`);
      expect(p.agent_x402).toBe(`POST /api/x402-products { "sku": "${p.sku}" }`);
      expect(p.human_payment_link).toBe(p.sku === "zrw-pro" ? "https://buy.stripe.com/test_zrw_pro" : null);
      expect(decodeURIComponent(p.claim ?? "")).toContain(`SKU: ${p.sku}`);
    }
  });

  it("publishes the suite pricing record with the spec's values", () => {
    expect(m.suite_pricing).toMatchObject({
      free_cap_gb: 100,
      usd_per_gb_after_free: 0.05,
      usd_per_gb_bulk: 0.04,
      min_paid_usd: 0.05,
      first_paid_egress_ref_usd: 0.09,
      model: "freemium_suite_v4_undercut",
      try_gate: "retired",
      cents_per_gb_after_free: 5,
      cents_per_gb_bulk: 4,
      min_paid_cents: 5,
      first_paid_egress_ref_cents_per_gb: 9,
    });
    expect(m.rails.find((r) => r.id === "suite_metered")?.pricing).toEqual(m.suite_pricing);
  });

  it("carries the payments version, settlement and manual rules, and a cache header", async () => {
    expect(m.version).toBe("1.0.0");
    expect(m.settlement).toEqual({ card: "Card payments settle in USD.", crypto: "Crypto rails settle on chain." });
    expect(m.manual_crypto).toMatch(/exact USD-equivalent.*signature or hash plus the SKU/);
    expect(m.wire_invoice).toMatch(/company legal name, billing address and preferred currency.*net-15/);
    const res = await t.app.inject({ method: "GET", url: "/api/payments" });
    expect(res.headers["cache-control"]).toBe("public, max-age=60");
    const cors = await t.app.inject({
      method: "GET",
      url: "/api/payments",
      headers: { origin: "https://agent.example" },
    });
    expect(cors.headers["access-control-allow-origin"]).toBe("*");
  });

  it("lists only endpoints the route table has", () => {
    const routes = t.app.services.routes;
    const all = [...m.rails.flatMap((r) => r.endpoints), ...Object.values(m.endpoints)];
    expect(all.length).toBeGreaterThan(0);
    for (const e of all) {
      const [method, where] = e.includes(" ") ? (e.split(" ") as [string, string]) : ["GET", e];
      const path = where.replace("http://lab.test", "");
      expect(routes.allowedMethods(path), e).toContain(method);
    }
  });

  it("narrows to one product with ?sku= (sku or alias, any case), claims carrying the sku", async () => {
    const one = await getMatrix(t, "?sku=PRO");
    expect(one.sku).toBe("zrw-pro");
    expect(one.products).toHaveLength(1);
    expect(one.product).toEqual(one.products[0]);
    expect(one.product?.amount_cents).toBe(24900);
    expect(one.rails.map((r) => r.id)).toEqual(SPEC_TABLE.map(([id]) => id));
    for (const r of one.rails.filter((r) => r.claim)) {
      const claim = decodeURIComponent(r.claim ?? "");
      expect(claim, r.id).toContain("zrw-pro");
    }
    const solana = one.rails.find((r) => r.id === "x402_solana_usdc");
    expect(solana?.how.join(" ")).toContain("249000000 units = 249.00 USD");
  });

  it("answers problems for unknown, retired and empty skus", async () => {
    const unknown = await t.app.inject({ method: "GET", url: "/api/payments?sku=nope" });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(unknown.json()).toMatchObject({ code: "unknown_sku", valid_skus: new Catalog().skus() });
    const retired = await t.app.inject({ method: "GET", url: "/api/payments?sku=chip" });
    expect(retired.statusCode).toBe(410);
    expect(retired.json()).toMatchObject({ code: "sku_retired" });
    const empty = await t.app.inject({ method: "GET", url: "/api/payments?sku=" });
    expect(empty.statusCode).toBe(400);
    expect(empty.json()).toMatchObject({ code: "validation_failed" });
    const post = await t.app.inject({ method: "POST", url: "/api/payments", payload: {} });
    expect(post.statusCode).toBe(405);
    expect(post.headers.allow).toContain("GET");
  });
});

describe("GET /api/payments with an empty configuration", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp("sqlite", {});
  });
  afterAll(async () => {
    await t.close();
  });

  it("marks every rail unconfigured, each with the settings it misses", async () => {
    const m = await getMatrix(t);
    expect(Object.fromEntries(m.rails.map((r) => [r.id, r.configured]))).toEqual(
      Object.fromEntries(RAIL_IDS.map((id) => [id, false])),
    );
    expect(m.configured_rails).toEqual([]);
    expect(m.rails.every((r) => r.missing.length > 0)).toBe(true);
    expect(m.rails.find((r) => r.id === "wire_invoice_ach")?.missing).toEqual(["CONTACT_EMAIL", "ADMIN_TOKEN"]);
    for (const r of m.rails) {
      if (r.kind === "x402" || r.kind === "crypto_manual") {
        expect(r.payTo, r.id).toBeNull();
        expect(r.claim, r.id).toBeNull();
      }
    }
    expect(m.contact).toBeNull();
    expect(m.products.every((p) => p.human_payment_link === null && p.claim === null)).toBe(true);
  });
});

describe("configuredFlags follows each setting", () => {
  const none: HasRoute = () => false;
  const withClaims: HasRoute = (method, path) => method === "POST" && path === "/api/claims";
  const on = (env: Record<string, string>, hasRoute: HasRoute = withClaims) =>
    Object.entries(configuredFlags(testConfig(env), hasRoute))
      .filter(([, v]) => v)
      .map(([k]) => k)
      .sort();

  it("maps settings to rails: a rail is on only when it can settle", () => {
    expect(on({})).toEqual([]);
    expect(on({}, none)).toEqual([]);
    // a pay-to address alone configures nothing
    expect(on({ PAY_TO_BASE })).toEqual([]);
    expect(on({ PAY_TO_SOLANA })).toEqual([]);
    expect(on({ PAY_TO_BASE, ...BASE_SETTLEMENT })).toEqual(["suite_metered", "x402_base_usdc"]);
    expect(on({ PAY_TO_SOLANA, ...SOLANA_SETTLEMENT })).toEqual(["suite_metered", "x402_solana_usdc"]);
    expect(on(MANUAL_SETTLEMENT)).toEqual(["wire_invoice_ach"]);
    expect(on({ PAY_TO_BASE, ...MANUAL_SETTLEMENT })).toEqual(["crypto_manual_evm", "wire_invoice_ach"]);
    expect(on({ PAY_TO_BTC: "bc1qexampleaddress", ...MANUAL_SETTLEMENT })).toEqual([
      "crypto_manual_btc",
      "wire_invoice_ach",
    ]);
    expect(on({ STRIPE_SECRET_KEY: "sk_test_x" })).toEqual([]);
    expect(on({ STRIPE_SECRET_KEY: "sk_test_x", STRIPE_WEBHOOK_SECRET: "whsec_x" })).toEqual([
      "card_checkout",
      "suite_metered",
    ]);
    expect(
      on({
        STRIPE_SECRET_KEY: "sk_test_x",
        STRIPE_WEBHOOK_SECRET: "whsec_x",
        PAYMENT_LINK_DONATE: "https://buy.stripe.com/d",
        PAYMENT_LINK_ID_DONATE: "plink_d",
      }),
    ).toEqual(["card_checkout", "card_payment_link", "suite_metered"]);
  });

  it("needs a contact address and an operator before manual rails count, whatever routes are served", () => {
    expect(on({ PAY_TO_SOLANA, CONTACT_EMAIL: "pay@lab.test" })).toEqual([]);
    expect(on({ PAY_TO_SOLANA, ...MANUAL_SETTLEMENT }, none)).toEqual(["crypto_manual_solana", "wire_invoice_ach"]);
  });

  it("never configures the redirect-link rail", () => {
    const all: Record<string, string> = { ...SPEC_EXAMPLE, PAY_TO_BTC: "bc1qexampleaddress" };
    expect(configuredFlags(testConfig(all), withClaims).redirect_link_checkout).toBe(false);
    expect(on(all)).toEqual([...RAIL_IDS].filter((id) => id !== "redirect_link_checkout").sort());
  });

  it("describes suite steps only for the suite endpoints that are served", () => {
    const suite = (hasRoute: HasRoute) =>
      paymentsMatrix({
        config: testConfig({ PAY_TO_BASE }),
        catalog: new Catalog(),
        hasRoute,
        suitePricing,
      }).rails.find((r) => r.id === "suite_metered");
    expect(suite(none)?.how).toEqual([
      "The suite job endpoints are not served by this deployment yet; the pricing below is what they charge.",
    ]);
    expect(suite(none)?.endpoints).toEqual([]);
    const agentSuite: HasRoute = (m, p) => m === "POST" && p === "/api/x402-suite";
    expect(suite(agentSuite)?.how).toHaveLength(1);
    expect(suite(agentSuite)?.how[0]).toMatch(/^Agents: POST \/api\/x402-suite /);
    expect(suite(agentSuite)?.endpoints).toEqual(["POST /api/x402-suite"]);
  });

  it("switches the hosted checkout to an allow-list with STRIPE_PAYMENT_METHODS", () => {
    const m = paymentsMatrix({
      config: testConfig({ STRIPE_SECRET_KEY: "sk_test_x", STRIPE_PAYMENT_METHODS: "card,us_bank_account" }),
      catalog: new Catalog(),
      hasRoute: none,
      suitePricing,
    });
    expect(m.payment_methods).toMatchObject({ mode: "allow_list", methods: ["card", "us_bank_account"] });
    expect(m.rails[0]?.payment_methods).toEqual(["card", "us_bank_account"]);
    expect(m.endpoints).toEqual({});
    expect(m.rails.every((r) => r.endpoints.length === 0)).toBe(true);
    expect(m.rails.every((r) => (r.claim_api ?? null) === null)).toBe(true);
    const withContact = paymentsMatrix({
      config: testConfig({ PAY_TO_BASE, ...MANUAL_SETTLEMENT }),
      catalog: new Catalog(),
      hasRoute: none,
      suitePricing,
    });
    const evm = withContact.rails.find((r) => r.id === "crypto_manual_evm");
    expect(evm?.configured).toBe(true);
    expect(decodeURIComponent(evm?.claim ?? "")).not.toContain("/api/claims");
    expect(evm?.how.join(" ")).not.toContain("/api/claims");
  });
});
