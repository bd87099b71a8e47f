import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Catalog } from "../../src/catalog/service.js";
import { SUITE_PRICE, usdOfUnits } from "../../src/jobs/pricing.js";
import { testApp } from "../support/app.js";
import { BASE_SETTLEMENT } from "../support/rails.js";

describe("the home page", () => {
  // a catalog with a changed price: the page must show it, not a price written into the page
  const catalog = new Catalog().withPrice("zrw-n00b", 6543);
  let t: Awaited<ReturnType<typeof testApp>>;
  beforeAll(async () => {
    // x402 on Base can settle here, so the page may show the 402 request (test/web/sale-ways.test.ts
    // covers a server where nothing can settle)
    t = await testApp(
      "sqlite",
      { PAY_TO_BASE: "0x3333333333333333333333333333333333333333", ...BASE_SETTLEMENT },
      { catalog },
    );
  });
  afterAll(async () => t.close());

  it("has two doors, the agents' one anchored at #agents with x402 in three lines and the discovery links", async () => {
    const r = await t.app.inject({ method: "GET", url: "/" });
    expect(r.statusCode).toBe(200);
    expect(r.headers["content-type"]).toContain("text/html");
    expect(r.headers["cache-control"]).toBe("no-cache");
    expect(r.body).toContain('id="humans"');
    expect(r.body).toContain('id="agents"');
    for (const href of ["/pay", "/web", "/jobs", "/olympiad"]) expect(r.body).toContain(`href="${href}"`);
    for (const href of ["/llms.txt", "/openapi.yaml", "/.well-known/agent-card.json", "/mcp-help", "/pricing.md"]) {
      expect(r.body).toContain(`href="${href}"`);
    }
    // a real curl of the cheapest product on this deployment's base URL
    const cheapest = catalog.list().reduce((a, p) => (p.amountCents < a.amountCents ? p : a));
    expect(r.body).toContain(
      `curl -i -X POST http://lab.test/api/x402-products -H &#39;Content-Type: application/json&#39; -d &#39;{&quot;sku&quot;:&quot;${cheapest.sku}&quot;}&#39;`,
    );
    expect(r.body).toContain("PAYMENT-SIGNATURE");
  });

  it("shows what the service sells with prices from the catalog and the suite pricing module", async () => {
    const r = await t.app.inject({ method: "GET", url: "/" });
    // the changed price is now the lowest licence price
    expect(r.body).toContain("from $65.43");
    expect(r.body).not.toContain("$79.00");
    for (const kind of ["license", "service", "support", "olympiad"]) expect(r.body).toContain(`/pay#kind-${kind}`);
    const services = catalog.list().filter((p) => p.kind === "service");
    const low = services.reduce((a, p) => (p.amountCents < a.amountCents ? p : a));
    expect(r.body).toContain(`<small>from</small> $${low.amountUsd}`);
    expect(r.body).toContain(`then $${usdOfUnits(SUITE_PRICE.unitsPerGbAfterFree)} per GB`);
    expect(r.body).toContain(
      `free up to ${SUITE_PRICE.freeCapGb} GB a calendar month (UTC) with a join-work identity, shared by its jobs; 1 GB a day (UTC) per address without one`,
    );
    expect(r.body).toMatch(/Great Agentic Olympiad \d{4}/);
    const entry = catalog.find("gao-entry");
    expect(r.body).toContain(`entry $${entry?.amountUsd}`);
  });
});
