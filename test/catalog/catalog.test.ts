import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Catalog, formatUsd } from "../../src/catalog/service.js";
import { type TestApp, testApp } from "../support/app.js";
import { BASE_SETTLEMENT } from "../support/rails.js";

const SPEC_SKUS: [string, number, string][] = [
  ["cddg-split", 19900, "license"],
  ["zrw-n00b", 7900, "license"],
  ["zrw-pro", 24900, "license"],
  ["zrw-l33t", 69900, "license"],
  ["blackjack", 19900, "license"],
  ["shard-zip", 19900, "license"],
  ["shard-tsdb", 19900, "license"],
  ["lab-phi", 19900, "license"],
  ["support-integration", 19900, "service"],
  ["consulting", 25000, "service"],
  ["sponsor", 2900, "support"],
  ["donate", 2999, "support"],
  ["gao-entry", 100, "olympiad"],
];

describe("catalog data", () => {
  it("formats cents without floating point", () => {
    expect(formatUsd(100)).toBe("1.00");
    expect(formatUsd(2999)).toBe("29.99");
    expect(formatUsd(5)).toBe("0.05");
    expect(() => formatUsd(1.5)).toThrow();
  });

  it("refuses non-integer or non-positive prices", () => {
    expect(() => new Catalog().withPrice("zrw-pro", 1.5)).toThrow(/integer/);
    expect(() => new Catalog().withPrice("zrw-pro", 0)).toThrow(/positive/);
  });

  it("resolves every alias of the spec", () => {
    const c = new Catalog();
    const table: Record<string, string[]> = {
      "cddg-split": ["residual", "residual-governance", "twin", "cddg", "split"],
      "zrw-n00b": ["zrw", "n00b", "noob", "starting", "zrw-starting-gate", "starting-gate"],
      "zrw-pro": ["pro", "zrw-pro-starter"],
      "zrw-l33t": ["l33t", "l33t-sauc3", "zrw-l33t-unlimited", "unlimited"],
      "support-integration": ["support", "integration"],
      donate: ["donation"],
      "gao-entry": ["gao", "olympiad", "olympiad-entry", "great-agentic-olympiad"],
    };
    for (const [sku, aliases] of Object.entries(table)) {
      for (const alias of aliases) expect(c.resolve(alias.toUpperCase()).sku).toBe(sku);
    }
    for (const retired of ["chip", "try-gate-chip-in", "try-gate"]) {
      expect(() => c.resolve(retired)).toThrow(expect.objectContaining({ status: 410, code: "sku_retired" }));
    }
  });
});

describe("GET /api/x402-products", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp("sqlite", {
      PAY_TO_BASE: "0x1111111111111111111111111111111111111111",
      ...BASE_SETTLEMENT,
      PAYMENT_LINK_ZRW_PRO: "https://buy.stripe.com/test_zrwpro",
    });
  });
  afterAll(() => t.close());

  it("lists the 13 products with exactly the spec's sku, price and kind", async () => {
    const res = await t.app.inject("/api/x402-products");
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.count).toBe(13);
    expect(
      body.products.map((p: { sku: string; amount_cents: number; kind: string }) => [p.sku, p.amount_cents, p.kind]),
    ).toEqual(SPEC_SKUS);
    for (const p of body.products) {
      expect(p.amount_usd).toBe(formatUsd(p.amount_cents));
      expect(p.agent_buy).toBe("POST /api/x402-products");
      expect(typeof p.name).toBe("string");
      expect(typeof p.blurb).toBe("string");
      const gao = p.sku === "gao-entry";
      expect("access" in p).toBe(gao);
      expect("sponsor" in p).toBe(gao);
      expect("olympiad" in p).toBe(gao);
      expect("human_stripe" in p).toBe(p.sku === "zrw-pro");
    }
    expect(body.protocol).toBe("x402");
    expect(body.rail).toBe("agent");
    expect(body.payment_header).toBe("X-PAYMENT");
    expect(body.configured).toBe(true);
    expect(body.payment).toEqual(body.payment_rails[0]);
    expect(body.payment_rails).toEqual([
      {
        scheme: "exact",
        network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
        asset: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
        payTo: null,
        decimals: 6,
        chain: "solana",
        configured: false,
        missing: ["PAY_TO_SOLANA", "SOLANA_RPC_URL", "X402_SVM_FEE_PAYER_KEY or X402_FACILITATOR_URL"],
      },
      {
        scheme: "exact",
        network: "eip155:8453",
        asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
        payTo: "0x1111111111111111111111111111111111111111",
        decimals: 6,
        chain: "base",
        configured: true,
        missing: [],
      },
    ]);
    expect(body.client_compat).toMatch(/exact/);
    expect(body.aliases.chip).toBe("try-gate");
  });

  it("answers one product by sku or alias, case-insensitive", async () => {
    for (const q of ["gao-entry", "GAO", "Olympiad-Entry"]) {
      const res = await t.app.inject(`/api/x402-products?sku=${q}`);
      expect(res.statusCode).toBe(200);
      expect(res.json().product.sku).toBe("gao-entry");
      expect(res.json().product.amount_usd).toBe("1.00");
    }
  });

  it("answers 410 for the retired try gate and 404 with the valid skus for an unknown one", async () => {
    const gone = await t.app.inject("/api/x402-products?sku=chip");
    expect(gone.statusCode).toBe(410);
    expect(gone.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(gone.json()).toMatchObject({ code: "sku_retired", status: 410 });
    expect(gone.json().detail).toMatch(/retired/);
    const missing = await t.app.inject("/api/x402-products?sku=nope");
    expect(missing.statusCode).toBe(404);
    expect(missing.json().code).toBe("unknown_sku");
    expect(missing.json().valid_skus).toEqual(SPEC_SKUS.map((s) => s[0]));
  });

  it("lets browser-based agents read it (CORS)", async () => {
    const res = await t.app.inject({ url: "/api/x402-products", headers: { origin: "https://agent.example" } });
    expect(res.headers["access-control-allow-origin"]).toBe("*");
    expect(String(res.headers["access-control-expose-headers"])).toContain("PAYMENT-RESPONSE");
    const server = await t.app.inject("/api/x402-products");
    expect(server.headers["access-control-allow-origin"]).toBeUndefined();
    const pre = await t.app.inject({
      method: "OPTIONS",
      url: "/api/x402-products",
      headers: {
        origin: "https://agent.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "x-payment",
      },
    });
    expect(pre.statusCode).toBe(204);
    expect(String(pre.headers["access-control-allow-headers"]).toLowerCase()).toContain("x-payment");
  });
});
