import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Catalog } from "../../src/catalog/service.js";
import { VERSIONS } from "../../src/versions.js";
import { type TestApp, testApp } from "../support/app.js";
import { ENGINES } from "../support/databases.js";
import { BASE_SETTLEMENT, MANUAL_SETTLEMENT, SOLANA_SETTLEMENT } from "../support/rails.js";

const BASE = "http://lab.test";
/** Every rail complete enough to settle (placeholders: nothing is funded, the RPC URLs go nowhere). */
const FULL = {
  STRIPE_SECRET_KEY: "sk_test_example",
  STRIPE_WEBHOOK_SECRET: "whsec_example",
  PAYMENT_LINK_ZRW_PRO: "https://buy.stripe.com/test_zrw_pro",
  PAYMENT_LINK_ID_ZRW_PRO: "plink_example",
  PAY_TO_BASE: "0x1111111111111111111111111111111111111111",
  ...BASE_SETTLEMENT,
  PAY_TO_SOLANA: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM",
  ...SOLANA_SETTLEMENT,
  ...MANUAL_SETTLEMENT,
};

const JSON_DOCS = ["/api/welcome", "/api/agent", "/platform.json", "/agents.json", "/toys.json", "/ideas.json"];
const TEXT_DOCS: [string, RegExp][] = [
  ["/llms.txt", /^text\/markdown; charset=utf-8/],
  ["/llms-full.txt", /^text\/markdown; charset=utf-8/],
  ["/agents.txt", /^text\/plain; charset=utf-8/],
  ["/openapi.yaml", /^application\/yaml; charset=utf-8/],
];

/** Every `[METHOD ]http://lab.test/path` mentioned anywhere in a document. */
function mentionedUrls(text: string): { method: string; path: string }[] {
  const out: { method: string; path: string }[] = [];
  const re = /(?:\b(GET|POST|PUT|PATCH|DELETE)\s+)?http:\/\/lab\.test(\/[^\s"'`)\]<>]*)?/g;
  for (const m of text.matchAll(re)) {
    if (m[2] === undefined) continue; // the base URL itself (base_url, site, servers)
    const path = ((m[2] ?? "/").split("?")[0] ?? "/").replace(/[.,;:]+$/, ""); // sentence punctuation
    out.push({ method: m[1] ?? "GET", path });
  }
  return out;
}

async function get(t: TestApp, url: string) {
  return t.app.inject({ method: "GET", url });
}

describe.each(ENGINES)("discovery documents (%s)", (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp(engine, FULL);
  });
  afterAll(async () => {
    await t.close();
  });

  it("serves every document with its media type, Cache-Control and an ETag; 304 on a match", async () => {
    for (const path of JSON_DOCS) {
      const res = await get(t, path);
      expect(res.statusCode, path).toBe(200);
      expect(res.headers["content-type"], path).toMatch(/^application\/json/);
      expect(res.headers["cache-control"], path).toBe("public, max-age=300");
      expect(res.headers.etag, path).toMatch(/^"[A-Za-z0-9_-]{32}"$/);
      expect(res.headers.link, path).toBe(
        `<${BASE}/openapi.yaml>; rel="service-desc", <${BASE}/api/agent>; rel="service-doc", <${BASE}/platform.json>; rel="describedby", <${BASE}/.well-known/api-catalog>; rel="api-catalog"`,
      );
      const again = await t.app.inject({
        method: "GET",
        url: path,
        headers: { "if-none-match": String(res.headers.etag) },
      });
      expect(again.statusCode, path).toBe(304);
      expect(again.body).toBe("");
      const stale = await t.app.inject({ method: "GET", url: path, headers: { "if-none-match": '"other"' } });
      expect(stale.statusCode, path).toBe(200);
      expect(stale.body).toBe(res.body);
    }
    for (const [path, type] of TEXT_DOCS) {
      const res = await get(t, path);
      expect(res.statusCode, path).toBe(200);
      expect(res.headers["content-type"], path).toMatch(type);
      expect(res.headers["cache-control"], path).toBe("public, max-age=300");
      expect(res.body.length, path).toBeGreaterThan(200);
    }
  });

  it("lets browser-based agents read them (CORS *)", async () => {
    for (const path of [...JSON_DOCS, "/llms.txt", "/openapi.yaml", "/api/payments", "/api/x402-products"]) {
      const res = await t.app.inject({ method: "GET", url: path, headers: { origin: "https://agent.example" } });
      expect(res.headers["access-control-allow-origin"], path).toBe("*");
    }
    const pre = await t.app.inject({
      method: "OPTIONS",
      url: "/api/agent",
      headers: { origin: "https://agent.example", "access-control-request-method": "GET" },
    });
    expect(pre.statusCode).toBe(204);
    expect(pre.headers["access-control-allow-origin"]).toBe("*");
  });

  it("links only to routes this deployment serves, with the right method", async () => {
    const routes = t.app.services.routes;
    let checked = 0;
    const all = [
      ...JSON_DOCS,
      ...TEXT_DOCS.map(([p]) => p),
      "/openapi.json",
      "/api/payments",
      "/.well-known/api-catalog",
    ];
    for (const path of all) {
      const body = (await get(t, path)).body;
      for (const u of mentionedUrls(body)) {
        expect(routes.allowedMethods(u.path), `${path} mentions ${u.method} ${u.path}`).toContain(u.method);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(50);
  });

  it("uses the spec's version strings", async () => {
    for (const path of ["/api/welcome", "/api/agent", "/platform.json", "/agents.json", "/toys.json", "/ideas.json"]) {
      expect((await get(t, path)).json().version, path).toBe(VERSIONS.discovery);
    }
    const agent = (await get(t, "/api/agent")).json();
    expect(agent).toMatchObject({ version: "1.10.0", api_version: "1.5.0", source_of_truth: true });
    expect((await get(t, "/platform.json")).json().versions).toEqual({ ...VERSIONS });
    expect((await get(t, "/agents.txt")).body).toContain("version: 1.10.0");
  });

  it("/api/agent: platform map, rails, catalog pointers and buy examples", async () => {
    const a = (await get(t, "/api/agent")).json();
    expect(a.platform.map).toBe(`${BASE}/platform.json`);
    expect(a.catalog.url).toBe(`${BASE}/api/x402-products`);
    expect(a.catalog.products.map((p: { sku: string }) => p.sku)).toEqual(new Catalog().skus());
    expect(a.rails.agent).toMatchObject({ protocol: "x402", payment_header: "X-PAYMENT", configured: true });
    expect(a.rails.agent.headers).toEqual({
      payment: ["X-PAYMENT", "PAYMENT-SIGNATURE"],
      required: "PAYMENT-REQUIRED",
      response: ["PAYMENT-RESPONSE", "X-PAYMENT-RESPONSE"],
      note: expect.any(String),
    });
    expect(a.rails.agent.rails.map((r: { network: string }) => r.network)).toEqual([
      "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
      "eip155:8453",
    ]);
    expect(a.rails.agent.caps).toMatchObject({ default_client_cap_usd: "1.00", default_client_cap_units: "1000000" });
    expect(a.rails.agent.caps.skus_over_default_cap).not.toContain("gao-entry");
    expect(a.rails.universal.preferred).toEqual({
      human: "card_checkout",
      agent: "x402_base_usdc",
      enterprise: "wire_invoice_ach",
    });
    expect(a.olympiad).toMatchObject({ entry_sku: "gao-entry", entry_usd: "1.00", entry_cents: 100 });
    // buy examples exist exactly for the purchase routes that are served
    const routes = t.app.services.routes;
    const rails = a.buy_examples.map((e: { rail: string }) => e.rail);
    expect(rails.includes("card_checkout")).toBe(routes.allowedMethods("/api/checkout").includes("POST"));
    expect(
      a.buy_examples.some((e: { curl: string }) => e.curl.includes("-X POST http://lab.test/api/x402-products")),
    ).toBe(routes.allowedMethods("/api/x402-products").includes("POST"));
    for (const e of a.buy_examples) expect(e.curl).toMatch(/^curl /);
    for (const op of a.paid_operations) {
      expect(op.served, op.path).toBe(routes.allowedMethods(op.path).includes(op.method));
    }
  });

  it("/agents.json: every SKU with both rails' requirements in atomic units, headers, flows and caps", async () => {
    const j = (await get(t, "/agents.json")).json();
    const catalog = new Catalog();
    expect(j.format).toBe("labphi-agents/1");
    expect(j.units).toMatchObject({ decimals: 6, units_per_cent: "10000" });
    expect(j.skus.map((s: { sku: string }) => s.sku)).toEqual(catalog.skus());
    for (const s of j.skus) {
      const p = catalog.resolve(s.sku);
      expect(s.requirements.map((r: { network: string }) => r.network)).toEqual([
        "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
        "eip155:8453",
      ]);
      for (const r of s.requirements) {
        expect(r.maxAmountRequired).toBe((BigInt(p.amountCents) * 10_000n).toString());
        expect(r.amount).toBe(r.maxAmountRequired);
        expect(r).toMatchObject({ scheme: "exact", decimals: 6, configured: true });
      }
      expect(s.over_default_client_cap).toBe(p.amountCents > 100);
      expect(s.buy).toEqual({ method: "POST", path: "/api/x402-products", body: { sku: s.sku } });
    }
    expect(j.flows.x402_product.length).toBeGreaterThanOrEqual(3);
    expect(j.flows.card_checkout.length).toBeGreaterThanOrEqual(2);
    expect(j.flows.manual_claim.join(" ")).toContain("pay@lab.test");
    const txt = (await get(t, "/agents.txt")).body;
    for (const s of catalog.skus()) expect(txt).toMatch(new RegExp(`^sku: ${s} `, "m"));
    expect(txt).toContain("payment_headers: X-PAYMENT, PAYMENT-SIGNATURE");
  });

  it("/llms.txt follows llmstxt.org and explains rails, headers, units and the client cap", async () => {
    const body = (await get(t, "/llms.txt")).body;
    const lines = body.split("\n");
    expect(lines[0]).toBe("# Lab Phi");
    expect(lines.find((l) => l.startsWith("> "))).toBeDefined();
    expect(lines.filter((l) => l.startsWith("# "))).toHaveLength(1);
    const h2 = lines.filter((l) => l.startsWith("## "));
    expect(h2).toEqual(["## Discovery", "## Products", "## Buy", "## MCP", "## Codec", "## Suite jobs", "## Optional"]);
    // every entry in an H2 section is a list item; links are [title](url)
    let section = "";
    for (const l of lines) {
      if (l.startsWith("## ")) section = l;
      else if (section && l.trim() !== "") expect(l, l).toMatch(/^- (\[[^\]]+\]\(http:\/\/lab\.test\/[^)]*\): |[^[])/);
    }
    for (const word of [
      "X-PAYMENT",
      "PAYMENT-SIGNATURE",
      "PAYMENT-REQUIRED",
      "PAYMENT-RESPONSE",
      "X-PAYMENT-RESPONSE",
    ]) {
      expect(body).toContain(word);
    }
    expect(body).toContain("1 cent = 10,000 units");
    expect(body).toMatch(/cap a payment at \$1\.00 \(1000000 units\)/);
    expect(body).toContain("solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp");
    expect(body).not.toContain("solana-mainnet-beta");
    expect(body).toContain("eip155:8453");
    expect(body).toContain(`[agents.json](${BASE}/agents.json)`);
    for (const p of new Catalog().list())
      expect(body).toContain(`(${p.sku})](${BASE}/api/x402-products?sku=${p.sku}): $${p.amountUsd}`);
  });

  it("/llms-full.txt carries every product, price, flow and public route", async () => {
    const body = (await get(t, "/llms-full.txt")).body;
    for (const p of new Catalog().list()) {
      expect(body).toContain(`### ${p.name} (${p.sku})`);
      expect(body).toContain(`$${p.amountUsd} (${p.amountCents} cents; ${p.amountCents * 10_000} USDC atomic units)`);
    }
    for (const r of t.app.services.routes.public()) expect(body).toContain(`- ${r.method} ${r.url}`);
    expect(body).toContain("payment link https://buy.stripe.com/test_zrw_pro");
    expect(body).toContain("| suite_metered | humans, agents | true |");
    expect(body).toContain("freemium_suite_v4_undercut");
  });

  it("/platform.json: two surfaces, modules covering every public route once, discovery URLs", async () => {
    const p = (await get(t, "/platform.json")).json();
    expect(p.surfaces.humans).toMatchObject({ commerce: "stripe", entry: `${BASE}/api/payments` });
    expect(p.surfaces.agents).toMatchObject({
      commerce: "x402",
      entry: `${BASE}/api/agent`,
      payment_header: "X-PAYMENT",
    });
    const listed = p.modules.flatMap((m: { routes: { method: string; path: string }[] }) =>
      m.routes.map((r) => `${r.method} ${r.path}`),
    );
    const registered = t.app.services.routes.public().map((r) => `${r.method} ${r.url}`);
    expect(listed.sort()).toEqual(registered.sort());
    expect(p.discovery).toMatchObject({
      agent: `${BASE}/api/agent`,
      llms_txt: `${BASE}/llms.txt`,
      openapi_yaml: `${BASE}/openapi.yaml`,
      toys: `${BASE}/toys.json`,
    });
  });

  it("/.well-known/api-catalog is an RFC 9727 linkset to the descriptions", async () => {
    const res = await get(t, "/.well-known/api-catalog");
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe(
      'application/linkset+json; profile="https://www.rfc-editor.org/info/rfc9727"; charset=utf-8',
    );
    expect(res.headers["cache-control"]).toBe("public, max-age=300");
    const { linkset } = res.json();
    expect(linkset[0]).toEqual({
      anchor: `${BASE}/.well-known/api-catalog`,
      item: [{ href: `${BASE}/api/agent`, type: "application/json" }],
    });
    expect(linkset[1].anchor).toBe(`${BASE}/api/agent`);
    expect(linkset[1]["service-desc"]).toEqual([
      { href: `${BASE}/openapi.yaml`, type: "application/yaml" },
      { href: `${BASE}/openapi.json`, type: "application/json" },
    ]);
    expect(linkset[1]["service-doc"].map((l: { href: string }) => l.href)).toContain(`${BASE}/llms.txt`);
    expect(linkset[1].status).toEqual([{ href: `${BASE}/readyz`, type: "application/json" }]);
  });

  it("/api/welcome orients both surfaces", async () => {
    const w = (await get(t, "/api/welcome")).json();
    expect(w.if_you_are_agent).toMatchObject({
      payment_header: "X-PAYMENT",
      networks: ["solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", "eip155:8453"],
    });
    expect(w.if_you_are_agent.links.start_here).toBe(`${BASE}/api/agent`);
    expect(w.if_you_are_human.links.payments).toBe(`${BASE}/api/payments`);
    expect(w.if_you_are_human.links.pay_page).toBe(
      t.app.services.routes.allowedMethods("/pay").includes("GET") ? `${BASE}/pay` : undefined,
    );
    expect(w.toy_store.aisles).toEqual(["fun", "theory", "artifact", "history"]);
    expect(w.suite_pricing.free_cap_gb).toBe(100);
    expect(w.contact).toBe("pay@lab.test");
  });

  it("/toys.json: four aisles of free toys that are not commercial SKUs", async () => {
    const toys = (await get(t, "/toys.json")).json();
    expect(Object.keys(toys.aisles)).toEqual(["fun", "theory", "artifact", "history"]);
    expect(toys.count).toBe(toys.toys.length);
    const catalog = new Catalog();
    const names = new Set([...catalog.skus(), ...Object.keys(catalog.aliasTable())]);
    for (const aisle of Object.keys(toys.aisles)) {
      expect(toys.toys.filter((x: { aisle: string }) => x.aisle === aisle).length, aisle).toBe(
        toys.aisles[aisle].count,
      );
      expect(toys.aisles[aisle].count, aisle).toBeGreaterThan(0);
    }
    const routes = t.app.services.routes;
    for (const toy of toys.toys) {
      expect(toy).toMatchObject({ price: "free / not for sale", commercial_sku: false });
      expect(names.has(toy.id), toy.id).toBe(false);
      if (toy.status === "story") expect(toy.waiting_for).toEqual([]);
      else expect(toy.status, toy.id).toBe(toy.waiting_for.length === 0 ? "live" : "parked");
      for (const e of toy.waiting_for) {
        const [method = "", path = ""] = e.split(" ");
        expect(routes.allowedMethods(path), e).not.toContain(method);
      }
    }
    expect(toys.toys.find((x: { id: string }) => x.id === "alias-roulette").status).toBe("live");
  });

  it("/ideas.json: statuses follow the route table", async () => {
    const ideas = (await get(t, "/ideas.json")).json();
    const routes = t.app.services.routes;
    expect(ideas.count).toBe(ideas.ideas.length);
    for (const idea of ideas.ideas) {
      const served = idea.lands_as.filter((e: string) => {
        const [method = "", path = ""] = e.split(" ");
        return routes.allowedMethods(path).includes(method);
      });
      expect(idea.served, idea.id).toEqual(served);
      const expected =
        idea.lands_as.length === 0
          ? "open"
          : served.length === idea.lands_as.length
            ? "shipped"
            : served.length > 0
              ? "partial"
              : "proposed";
      expect(idea.status, idea.id).toBe(expected);
      expect(Object.keys(ideas.buckets)).toContain(idea.bucket);
    }
    expect(ideas.ideas.find((i: { id: string }) => i.id === "one-price-everywhere").status).toBe(
      routes.allowedMethods("/api/x402-products").includes("GET") ? "shipped" : "partial",
    );
  });
});

describe("discovery documents without payment settings", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp("sqlite", {});
  });
  afterAll(async () => {
    await t.close();
  });

  it("say the agent rails are not configured and carry no pay-to address or contact", async () => {
    const a = (await get(t, "/api/agent")).json();
    expect(a.rails.agent.configured).toBe(false);
    for (const r of a.rails.agent.rails) expect(r).toMatchObject({ configured: false, payTo: null });
    expect(a.rails.agent.rails.map((r: { missing: string[] }) => r.missing)).toEqual([
      ["PAY_TO_SOLANA", "SOLANA_RPC_URL", "X402_SVM_FEE_PAYER_KEY or X402_FACILITATOR_URL"],
      ["PAY_TO_BASE", "BASE_RPC_URL", "X402_EVM_FACILITATOR_KEY or X402_FACILITATOR_URL"],
    ]);
    for (const r of [...a.rails.human.rails, ...a.platform.surfaces.agents]) {
      expect(r.configured, r.id).toBe(false);
      expect(r.missing.length, r.id).toBeGreaterThan(0);
    }
    expect(a.contact).toBeNull();
    const j = (await get(t, "/agents.json")).json();
    expect(
      j.skus[0].requirements.every((r: { configured: boolean; payTo: null }) => !r.configured && r.payTo === null),
    ).toBe(true);
    expect((await get(t, "/llms.txt")).body).toContain(
      "x402_base_usdc (eip155:8453, USDC 0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913, not configured: needs PAY_TO_BASE, BASE_RPC_URL, X402_EVM_FACILITATOR_KEY or X402_FACILITATOR_URL)",
    );
    expect((await get(t, "/llms-full.txt")).body).toContain("No contact address is configured.");
  });
});
