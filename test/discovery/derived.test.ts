import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Catalog } from "../../src/catalog/service.js";
import { testConfig } from "../../src/config.js";
import { buildContext, type DiscoveryContext, dollarsToCents } from "../../src/discovery/context.js";
import { agentDocument, platformDocument } from "../../src/discovery/documents.js";
import { ideasDocument } from "../../src/discovery/ideas.js";
import { llmsTxt } from "../../src/discovery/text.js";
import { toysDocument } from "../../src/discovery/toys.js";
import type { RouteInfo } from "../../src/http/route-table.js";
import { type TestApp, testApp } from "../support/app.js";
import { ENGINES } from "../support/databases.js";
import { BASE_SETTLEMENT } from "../support/rails.js";

/** One price changed in the catalog shows up everywhere, because every document derives it. */
describe.each(ENGINES)("a changed price flows into every document (%s)", (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp(
      engine,
      { PAY_TO_BASE: "0x1111111111111111111111111111111111111111", ...BASE_SETTLEMENT },
      {
        catalog: new Catalog().withPrice("zrw-pro", 12345),
      },
    );
  });
  afterAll(async () => {
    await t.close();
  });

  it("catalog, payments matrix, agent document, agents.json, llms.txt and llms-full.txt agree", async () => {
    const get = (url: string) => t.app.inject({ method: "GET", url });

    const catalog = (await get("/api/x402-products?sku=zrw-pro")).json();
    expect(catalog.product).toMatchObject({ amount_cents: 12345, amount_usd: "123.45" });

    const matrix = (await get("/api/payments")).json();
    expect(matrix.products.find((p: { sku: string }) => p.sku === "zrw-pro")).toMatchObject({
      amount_cents: 12345,
      amount_usd: "123.45",
      max_amount_required: "123450000",
    });
    const one = (await get("/api/payments?sku=zrw-pro")).json();
    expect(one.rails.find((r: { id: string }) => r.id === "x402_base_usdc").how.join(" ")).toContain(
      "123450000 units = 123.45 USD",
    );

    const agent = (await get("/api/agent")).json();
    expect(agent.catalog.products.find((p: { sku: string }) => p.sku === "zrw-pro")).toMatchObject({
      amount_cents: 12345,
      amount_usd: "123.45",
      max_amount_required: "123450000",
    });

    const agentsJson = (await get("/agents.json")).json();
    const sku = agentsJson.skus.find((s: { sku: string }) => s.sku === "zrw-pro");
    expect(sku.amount_cents).toBe(12345);
    expect(sku.requirements.map((r: { maxAmountRequired: string }) => r.maxAmountRequired)).toEqual([
      "123450000",
      "123450000",
    ]);

    const llms = (await get("/llms.txt")).body;
    expect(llms).toContain("$123.45 (12345 cents; 123450000 USDC atomic units)");
    expect(llms).not.toContain("$249.00");
    expect((await get("/llms-full.txt")).body).toContain("$123.45 (12345 cents");
    expect((await get("/agents.txt")).body).toMatch(/^sku: zrw-pro usd=123\.45 cents=12345 units=123450000 /m);
  });

  it("pricing.md, the OpenAPI x-payment-info and the Markdown answers agree too", async () => {
    const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: "GET", url, headers });
    const pricing = (await get("/pricing.md")).body;
    expect(pricing).toMatch(/^\| zrw-pro \| [^|]+ \| license \| 123\.45 ¹ \| 12345 \| 123450000 \|$/m);
    expect(pricing).not.toContain("| 249.00");
    const openapi = (await get("/openapi.json")).json();
    const info = openapi.paths["/api/x402-products"].post["x-payment-info"];
    expect(info.items.find((i: { sku: string }) => i.sku === "zrw-pro")).toEqual({
      sku: "zrw-pro",
      amount_usd: "123.45",
      amount_units: "123450000",
    });
    expect(info.price.max).toBe("699.00");
    const agentMd = (await get("/api/agent", { accept: "text/markdown" })).body;
    expect(agentMd).toContain("**max_amount_required**: 123450000");
    const catalogMd = (await get("/api/x402-products?sku=zrw-pro", { accept: "text/markdown" })).body;
    expect(catalogMd).toContain("- **amount_usd**: 123.45");
  });

  it("a price under the default client cap is reported as within it", async () => {
    const cheap = await testApp(engine, {}, { catalog: new Catalog().withPrice("sponsor", 50) });
    try {
      const agent = (await cheap.app.inject({ method: "GET", url: "/api/agent" })).json();
      expect(agent.rails.agent.caps.skus_over_default_cap).not.toContain("sponsor");
      expect(agent.catalog.products.find((p: { sku: string }) => p.sku === "sponsor").over_default_client_cap).toBe(
        false,
      );
    } finally {
      await cheap.close();
    }
  });
});

/** Pure derivation: documents change as routes land, without any edit to the documents. */
describe("documents follow the route table", () => {
  const route = (method: string, url: string, tag: string): RouteInfo => ({
    method,
    url,
    tags: [tag],
    summary: `${method} ${url}`,
    hidden: false,
  });
  function context(routes: RouteInfo[]): DiscoveryContext {
    const set = new Set(routes.map((r) => `${r.method} ${r.url}`));
    return buildContext({
      config: testConfig({ BASE_URL: "http://lab.test" }),
      catalog: new Catalog(),
      routes: () => routes,
      hasRoute: (m, p) => set.has(`${m.toUpperCase()} ${p}`),
    });
  }
  const base = [
    route("GET", "/api/x402-products", "catalog"),
    route("GET", "/api/agent", "discovery"),
    route("GET", "/llms.txt", "discovery"),
  ];

  it("toys are parked until the endpoints they need are served, then live", () => {
    const before = toysDocument(context(base)).toys.find((t) => t.id === "gao-board");
    expect(before).toMatchObject({ status: "parked", waiting_for: ["GET /api/olympiad"], links: [] });
    const after = toysDocument(context([...base, route("GET", "/api/olympiad", "olympiad")])).toys.find(
      (t) => t.id === "gao-board",
    );
    expect(after).toMatchObject({
      status: "live",
      waiting_for: [],
      links: [{ label: "olympiad", href: "http://lab.test/api/olympiad" }],
    });
    expect(toysDocument(context([])).toys.find((t) => t.id === "notes-app-ledger")?.status).toBe("story");
  });

  it("ideas move from proposed to partial to shipped", () => {
    const status = (routes: RouteInfo[]) =>
      ideasDocument(context(routes)).ideas.find((i) => i.id === "olympiad-ledger");
    expect(status(base)?.status).toBe("proposed");
    expect(status([...base, route("GET", "/api/olympiad", "olympiad")])).toMatchObject({
      status: "partial",
      served: ["GET /api/olympiad"],
      links: ["http://lab.test/api/olympiad"],
    });
    const all = ["GET /api/olympiad", "POST /api/olympiad", "GET /olympiad.json", "GET /olympiad-records.json"].map(
      (e) => route(e.split(" ")[0] ?? "", e.split(" ")[1] ?? "", "olympiad"),
    );
    expect(status([...base, ...all])?.status).toBe("shipped");
    expect(ideasDocument(context(base)).ideas.find((i) => i.id === "payment-identifier")?.status).toBe("open");
  });

  it("agent document, platform map and llms.txt mention only served routes", () => {
    const ctx = context(base);
    const agent = agentDocument(ctx);
    expect(agent.discovery).toEqual({
      agent: "http://lab.test/api/agent",
      catalog: "http://lab.test/api/x402-products",
      llms_txt: "http://lab.test/llms.txt",
    });
    expect(agent.platform.map).toBeNull();
    expect(agent.olympiad?.links).toEqual({ catalog_entry: "http://lab.test/api/x402-products?sku=gao-entry" });
    expect(agent.buy_examples.map((e) => e.rail)).toEqual(["x402"]); // only the GET requirements example
    expect(agent.paid_operations.every((op) => !op.served)).toBe(true);
    expect(platformDocument(ctx).modules.map((m) => [m.id, m.routes.length])).toEqual([
      ["catalog", 1],
      ["discovery", 2],
    ]);
    const llms = llmsTxt(ctx);
    expect(llms).not.toContain("/api/payments");
    expect(llms).not.toContain("/openapi.yaml");
    const withBuy = agentDocument(context([...base, route("POST", "/api/x402-products", "x402")]));
    expect(withBuy.buy_examples.map((e) => e.title)).toEqual([
      "Read the requirements for gao-entry",
      "Ask to buy gao-entry (no payment yet)",
      "Pay and retry for gao-entry",
    ]);
    expect(withBuy.paid_operations.find((op) => op.path === "/api/x402-products")?.served).toBe(true);
  });

  it("reads the default client cap from @x402/core", () => {
    expect(dollarsToCents("$1")).toBe(100);
    expect(dollarsToCents("$0.1")).toBe(10);
    expect(dollarsToCents("2.50")).toBe(250);
    expect(() => dollarsToCents("one dollar")).toThrow();
    expect(context(base).clientCapCents).toBe(100);
  });
});
