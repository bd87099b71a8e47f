import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Catalog } from "../../src/catalog/service.js";
import { A2A_PROTOCOL_VERSION } from "../../src/discovery/agent-card.js";
import { wantsMarkdown } from "../../src/discovery/markdown.js";
import { MCP_CARD_PATHS, MCP_RESOURCES, MCP_TOOLS } from "../../src/discovery/mcp-card.js";
import { MARKDOWN_DOCUMENTS } from "../../src/discovery/routes.js";
import { SUITE_PRICE, suitePricingRecord } from "../../src/jobs/pricing.js";
import { VERSIONS } from "../../src/versions.js";
import { paymentRequired } from "../payments/x402/helpers.js";
import { type TestApp, testApp } from "../support/app.js";
import { BASE_SETTLEMENT, SOLANA_SETTLEMENT } from "../support/rails.js";

const BASE = "http://lab.test";
const RAILS = {
  PAY_TO_BASE: "0x1111111111111111111111111111111111111111",
  ...BASE_SETTLEMENT,
  PAY_TO_SOLANA: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM",
  ...SOLANA_SETTLEMENT,
};
const TOOL_NAMES = [
  "catalog",
  "payments",
  "quote_suite",
  "buy",
  "compress",
  "decompress",
  "profile",
  "bench",
  "olympiad_register",
  "olympiad_vote",
  "olympiad_submit",
  "job_status",
  "buy_suite",
  "job_upload",
  "job_cancel",
  "job_download",
];

describe("agent surfaces: A2A card, MCP card, pricing.md, Markdown answers, empty-body probes", () => {
  let t: TestApp;
  const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: "GET", url, headers });
  const served = (method: string, path: string) => t.app.services.routes.allowedMethods(path).includes(method);

  beforeAll(async () => {
    t = await testApp("sqlite", RAILS);
  });
  afterAll(async () => {
    await t.close();
  });

  it("MCP_TOOLS is the issue's tool list, each with a one-line description", () => {
    expect(MCP_TOOLS.map((x) => x.name)).toEqual(TOOL_NAMES);
    for (const tool of MCP_TOOLS) {
      expect(tool.description, tool.name).toMatch(/^\S.{10,120}$/);
      expect(tool.description, tool.name).not.toContain("\n");
    }
    expect(MCP_TOOLS.filter((x) => x.paid).map((x) => x.name)).toEqual(["buy", "buy_suite"]);
  });

  it("the MCP server serves exactly the tools and resources the cards advertise", async () => {
    const server = await import("../../src/mcp/server.js");
    expect([...server.TOOL_NAMES]).toEqual(MCP_TOOLS.map((x) => x.name));
    expect(server.MCP_SERVER_NAME).toBe("labphi");
    const resources = await import("../../src/mcp/resources.js");
    expect(Object.values(resources.RESOURCES).sort()).toEqual(MCP_RESOURCES.map((r) => r.uri).sort());
  });

  it("/.well-known/agent-card.json is an A2A agent card whose skills are the MCP tools", async () => {
    const res = await get("/.well-known/agent-card.json");
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(res.headers.etag).toMatch(/^"/);
    const card = res.json();
    expect(card).toMatchObject({
      protocolVersion: A2A_PROTOCOL_VERSION,
      name: "Lab Phi",
      url: BASE,
      version: VERSIONS.discovery,
      provider: { organization: "Lab Phi", url: BASE },
      documentationUrl: `${BASE}/llms.txt`,
      capabilities: { streaming: false, pushNotifications: false },
      defaultInputModes: ["application/json"],
      defaultOutputModes: ["application/json", "text/markdown"],
      securitySchemes: { x402Payment: { type: "apiKey", in: "header", name: "X-PAYMENT" } },
    });
    expect(card.description).toContain("x402");
    expect(card.skills.map((s: { id: string }) => s.id)).toEqual(TOOL_NAMES);
    for (const skill of card.skills) {
      expect(skill.name, skill.id).toEqual(expect.any(String));
      expect(skill.description.length, skill.id).toBeGreaterThan(10);
      expect(skill.tags.length, skill.id).toBeGreaterThan(1);
      expect(skill.examples.length, skill.id).toBeGreaterThan(0);
    }
    const buy = card.skills.find((s: { id: string }) => s.id === "buy");
    expect(buy.security).toEqual([{ x402Payment: [] }]);
    expect(buy.tags).toContain("paid");
    expect(card.skills.find((s: { id: string }) => s.id === "catalog").security).toBeUndefined();
    expect(card.capabilities.extensions[0].description).toContain("eip155:8453");
    const interfaces = card.additionalInterfaces.map(
      (i: { url: string; transport: string }) => `${i.transport} ${i.url}`,
    );
    expect(interfaces).toContain(`HTTP+JSON ${BASE}/openapi.json`);
    expect(interfaces.includes(`MCP ${BASE}/mcp`)).toBe(served("POST", "/mcp"));
  });

  it("the MCP server card is served at both proposed paths, identical, with transports, tools and resources", async () => {
    const [a, b] = await Promise.all(MCP_CARD_PATHS.map((p) => get(p)));
    expect(a?.statusCode).toBe(200);
    expect(b?.statusCode).toBe(200);
    expect(a?.body).toBe(b?.body);
    const card = a?.json();
    expect(card).toMatchObject({
      name: "labphi",
      serverInfo: { name: "labphi", title: "Lab Phi", version: VERSIONS.api },
      stdio: { command: "labphi", args: ["mcp"] },
      capabilities: { tools: {}, resources: {} },
      payments: {
        protocol: "x402",
        x402Version: 2,
        request_meta: "x402/payment",
        response_meta: "x402/payment-response",
        networks: ["solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", "eip155:8453"],
        paid_tools: ["buy", "buy_suite"],
      },
    });
    expect(card.description).toContain("codec");
    expect(card.tools).toEqual(MCP_TOOLS.map((x) => ({ ...x })));
    expect(card.resources.map((r: { uri: string }) => r.uri)).toEqual(MCP_RESOURCES.map((r) => r.uri));
    if (served("POST", "/mcp")) {
      expect(card.transport).toEqual({ type: "streamable-http", url: `${BASE}/mcp` });
      expect(card.remotes).toEqual([{ type: "streamable-http", url: `${BASE}/mcp` }]);
    } else {
      expect(card.transport).toBeNull();
      expect(card.remotes).toEqual([]);
    }
  });

  it("/pricing.md states every catalog price and the suite pricing record", async () => {
    const res = await get("/pricing.md");
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^text\/markdown; charset=utf-8/);
    const md = res.body;
    expect(md.split("\n")[0]).toBe("# Lab Phi pricing");
    for (const p of new Catalog().list()) {
      expect(md, p.sku).toMatch(
        new RegExp(
          `^\\| ${p.sku} \\| [^|]+ \\| ${p.kind} \\| ${p.amountUsd.replace(".", "\\.")}( ¹)? \\| ${p.amountCents} \\| ${p.amountCents * 10_000} \\|$`,
          "m",
        ),
      );
    }
    expect(md).toMatch(/^\| gao-entry .* \| 1\.00 \| 100 \| 1000000 \|$/m); // within the default client cap: no ¹
    const s = suitePricingRecord();
    // free volume belongs to a caller (issue #21): per identity and month, per address and day
    expect(md).toContain(
      `| Free | ${s.free_cap_gb} GB a calendar month (UTC) with a join-work identity, shared by its jobs; 1 GB a day (UTC) per address without one |`,
    );
    expect(md).toContain(`| Standard | 0.05 USD per GB (${SUITE_PRICE.unitsPerGbAfterFree} units)`);
    expect(md).toContain(`| Bulk | 0.04 USD per GB (${SUITE_PRICE.unitsPerGbBulk} units)`);
    expect(md).toContain(`| Minimum | 0.05 USD (${SUITE_PRICE.minPaidUnits} units) per paid job |`);
    expect(md).toContain("- 150 GB: 2.50 USD (2500000 units) with an identity; 6.96 USD (6960000 units) without");
    expect(md).toContain(`Model \`${s.model}\``);
    expect(md).not.toContain("try-gate"); // aliases of retired skus are not prices
    // listed by the other documents
    expect((await get("/api/agent")).json().discovery.pricing_md).toBe(`${BASE}/pricing.md`);
    expect((await get("/llms.txt")).body).toContain(`[Pricing](${BASE}/pricing.md)`);
    const linkset = (await get("/.well-known/api-catalog")).json().linkset[1];
    expect(linkset["service-doc"]).toContainEqual({ href: `${BASE}/pricing.md`, type: "text/markdown" });
    expect(linkset["service-meta"]).toContainEqual({
      href: `${BASE}/.well-known/agent-card.json`,
      type: "application/json",
    });
    expect(linkset["service-meta"]).toContainEqual({ href: `${BASE}/.well-known/mcp.json`, type: "application/json" });
  });

  it("/api/agent and /agents.json list the MCP endpoint and tools and the codec and suite endpoints", async () => {
    for (const path of ["/api/agent", "/agents.json"]) {
      const doc = (await get(path)).json();
      expect(doc.mcp, path).toMatchObject({
        endpoint: served("POST", "/mcp") ? `${BASE}/mcp` : null,
        transport: "streamable-http",
        stdio: "labphi mcp",
        server_card: `${BASE}/.well-known/mcp.json`,
      });
      expect(
        doc.mcp.tools.map((x: { name: string }) => x.name),
        path,
      ).toEqual(TOOL_NAMES);
      const codec = doc.endpoints.codec.map((r: { method: string; path: string }) => `${r.method} ${r.path}`);
      const suite = doc.endpoints.suite.map((r: { method: string; path: string }) => `${r.method} ${r.path}`);
      for (const e of ["POST /api/compress", "POST /api/decompress"]) expect(codec, path).toContain(e);
      for (const e of ["POST /api/x402-suite", "POST /api/ppp-quote", "GET /api/jobs/:id"])
        expect(suite, path).toContain(e);
      // every listed endpoint is served, with that method
      for (const r of [...doc.endpoints.codec, ...doc.endpoints.suite]) {
        expect(
          t.app.services.routes.public().some((x) => x.method === r.method && x.url === r.path),
          r.path,
        ).toBe(true);
      }
    }
  });

  it("/llms.txt has an MCP section (endpoint, stdio command, every tool) and the codec and suite endpoints", async () => {
    const body = (await get("/llms.txt")).body;
    const section = (title: string) => body.split(`## ${title}\n`)[1]?.split("\n## ")[0] ?? "";
    const mcp = section("MCP");
    if (served("POST", "/mcp")) expect(mcp).toContain(`[MCP endpoint (streamable HTTP)](${BASE}/mcp)`);
    expect(mcp).toContain("`labphi mcp`");
    expect(mcp).toContain(`[MCP server card](${BASE}/.well-known/mcp.json)`);
    for (const tool of MCP_TOOLS)
      expect(mcp).toContain(`- \`${tool.name}\`${tool.paid ? " (paid, x402)" : ""}: ${tool.description}`);
    expect(section("Codec")).toContain("- POST /api/compress: ");
    expect(section("Suite jobs")).toContain("- POST /api/x402-suite: ");
    expect((await get("/agents.txt")).body).toMatch(/^mcp\.tool: buy paid=true /m);
  });

  it("wantsMarkdown follows the Accept header's preferences", () => {
    expect(wantsMarkdown(undefined)).toBe(false);
    expect(wantsMarkdown("text/markdown")).toBe(true);
    expect(wantsMarkdown("text/markdown, application/json")).toBe(true);
    expect(wantsMarkdown("text/markdown, */*;q=0.1")).toBe(true);
    expect(wantsMarkdown("text/*")).toBe(true);
    expect(wantsMarkdown("application/json, text/markdown")).toBe(false);
    expect(wantsMarkdown("application/json;q=0.5, text/markdown")).toBe(true);
    expect(wantsMarkdown("text/markdown;q=0.5, application/json")).toBe(false);
    expect(wantsMarkdown("text/markdown;q=0")).toBe(false);
    expect(wantsMarkdown("*/*")).toBe(false);
    expect(wantsMarkdown("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")).toBe(false);
  });

  it("Accept: text/markdown turns every listed discovery document into Markdown; JSON stays the default", async () => {
    expect(Object.keys(MARKDOWN_DOCUMENTS).sort()).toEqual(
      [
        "/api/agent",
        "/api/welcome",
        "/platform.json",
        "/agents.json",
        "/toys.json",
        "/ideas.json",
        "/api/x402-products",
        "/api/payments",
        "/.well-known/x402",
        "/.well-known/agent-card.json",
        "/.well-known/mcp.json",
        "/.well-known/mcp/server-card.json",
      ].sort(),
    );
    for (const path of Object.keys(MARKDOWN_DOCUMENTS)) {
      const json = await get(path, { origin: "https://agent.example" });
      expect(json.statusCode, path).toBe(200);
      expect(json.headers["content-type"], path).toMatch(/^application\/json/);
      expect(String(json.headers.vary), path).toMatch(/\bAccept\b/);
      const md = await get(path, { accept: "text/markdown", origin: "https://agent.example" });
      expect(md.statusCode, path).toBe(200);
      expect(md.headers["content-type"], path).toBe("text/markdown; charset=utf-8");
      expect(md.body, path).toMatch(/^# \S/);
      expect(md.body, path).not.toMatch(/^\s*[{[]/);
      expect(String(md.headers.vary), path).toMatch(/\bOrigin\b/);
      expect(String(md.headers.vary), path).toMatch(/\bAccept\b/);
      expect(md.headers["access-control-allow-origin"], path).toBe("*");
      const browser = await get(path, { accept: "text/html,application/xhtml+xml,*/*;q=0.8" });
      expect(browser.headers["content-type"], path).toMatch(/^application\/json/);
    }
  });

  it("the Markdown says the same facts as the JSON, and caches apart from it", async () => {
    const agentMd = (await get("/api/agent", { accept: "text/markdown" })).body;
    expect(agentMd).toContain("# Agent discovery");
    expect(agentMd).toContain("**sku**: zrw-pro");
    expect(agentMd).toContain("**max_amount_required**: 249000000");
    expect(agentMd).toContain("**name**: job_status");
    const catalogMd = (await get("/api/x402-products?sku=gao", { accept: "text/markdown" })).body;
    expect(catalogMd).toContain("- **sku**: gao-entry");
    expect(catalogMd).toContain("- **amount_cents**: 100");
    const x402Md = (await get("/.well-known/x402", { accept: "text/markdown" })).body;
    expect(x402Md.split("\n")[0]).toBe("# Paying Lab Phi with x402");
    expect(x402Md).toContain(`## Resources\n\n- ${BASE}/api/x402-products\n- ${BASE}/api/x402-suite\n`);
    const cardMd = (await get("/.well-known/mcp.json", { accept: "text/markdown" })).body;
    for (const tool of TOOL_NAMES) expect(cardMd).toContain(`**name**: ${tool}`);

    const json = await get("/api/agent");
    const md = await get("/api/agent", { accept: "text/markdown" });
    expect(md.headers.etag).not.toBe(json.headers.etag);
    const cross = await get("/api/agent", { accept: "text/markdown", "if-none-match": String(json.headers.etag) });
    expect(cross.statusCode).toBe(200);
    const same = await get("/api/agent", { accept: "text/markdown", "if-none-match": String(md.headers.etag) });
    expect(same.statusCode).toBe(304);
    // errors stay problem+json whatever the Accept header says
    const unknown = await get("/api/x402-products?sku=nope", { accept: "text/markdown" });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers["content-type"]).toMatch(/^application\/problem\+json/);
  });

  describe("an unpaid probe with an empty body gets the 402 on every paid route", () => {
    const EMPTY: [string, { payload?: string; headers?: Record<string, string> }][] = [
      ["no body, no content type", {}],
      ["empty JSON body", { payload: "", headers: { "content-type": "application/json" } }],
      ["{}", { payload: "{}", headers: { "content-type": "application/json" } }],
      ["null", { payload: "null", headers: { "content-type": "application/json" } }],
      ["empty text body", { payload: "", headers: { "content-type": "text/plain" } }],
    ];
    const post = (url: string, o: { payload?: string; headers?: Record<string, string> }) =>
      t.app.inject({
        method: "POST",
        url,
        ...(o.payload !== undefined ? { payload: o.payload } : {}),
        headers: o.headers ?? {},
      });

    it.each(EMPTY)("POST /api/x402-products, %s → 402 listing every product on both rails", async (_name, o) => {
      const res = await post("/api/x402-products", o);
      expect(res.statusCode, res.body).toBe(402);
      const body = res.json();
      expect(body.accepts).toHaveLength(new Catalog().list().length * 2);
      expect(paymentRequired(res.headers).accepts.map((a) => a.amount)).toEqual(["1000000", "1000000"]);
    });

    it.each(EMPTY.filter(([name]) => name !== "{}"))(
      "POST /api/x402-suite, %s → 402 with the minimum paid job and the pricing record",
      async (_name, o) => {
        const db = t.app.services.db.kysely;
        const before = await db.selectFrom("quotes").select(db.fn.countAll().as("n")).executeTakeFirstOrThrow();
        const res = await post("/api/x402-suite", o);
        expect(res.statusCode, res.body).toBe(402);
        const body = res.json();
        expect(body.code).toBe("payment_required");
        // x402 v1 body: v1 network names (the PAYMENT-REQUIRED header carries the CAIP-2 ids)
        expect(body.accepts.map((a: { network: string }) => a.network)).toEqual(["solana", "base"]);
        for (const a of body.accepts) {
          expect(a).toMatchObject({ scheme: "exact", maxAmountRequired: "50000", resource: `${BASE}/api/x402-suite` });
        }
        expect(body.suite_pricing).toEqual(suitePricingRecord());
        expect(body.request).toMatchObject({ method: "POST", path: "/api/x402-suite" });
        const pr = paymentRequired(res.headers);
        expect(pr.accepts.map((a) => a.amount)).toEqual(["50000", "50000"]);
        expect(pr.resource.url).toBe(`${BASE}/api/x402-suite`);
        // a probe writes nothing
        const after = await db.selectFrom("quotes").select(db.fn.countAll().as("n")).executeTakeFirstOrThrow();
        expect(Number(after.n)).toBe(Number(before.n));
      },
    );

    it("POST /api/x402-suite {} is a request, not a probe: 400 validation_failed naming the missing fields", async () => {
      const res = await post("/api/x402-suite", { payload: "{}", headers: { "content-type": "application/json" } });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().code).toBe("validation_failed");
      const paths = (res.json().errors as { path: string }[]).map((e) => e.path).join(" ");
      for (const field of ["product", "dataClass", "op", "bytes"]) expect(paths).toContain(field);
    });

    it("a non-empty but invalid suite body is still a 400; a real one still gets its own quote", async () => {
      const bad = await post("/api/x402-suite", {
        payload: JSON.stringify({ bytes: "many" }),
        headers: { "content-type": "application/json" },
      });
      expect(bad.statusCode).toBe(400);
      const broken = await post("/api/x402-suite", { payload: "{", headers: { "content-type": "application/json" } });
      expect(broken.statusCode).toBe(400);
      const real = await post("/api/x402-suite", {
        payload: JSON.stringify({ product: "auto", dataClass: "zeros", op: "compress", bytes: 150_000_000_000 }),
        headers: { "content-type": "application/json" },
      });
      expect(real.statusCode).toBe(402);
      // anonymous: 1 GB of the IP's daily allowance is free; 149 GB billable = 100 × 0.05 + 49 × 0.04 USD
      expect(real.json().accepts[0].maxAmountRequired).toBe("6960000");
      expect(real.json().quote.quote_id).toEqual(expect.any(String));
    });

    it("an empty body WITH a payment header is not a probe: 400, nothing settled", async () => {
      const res = await post("/api/x402-suite", { headers: { "x-payment": "e30=" } });
      expect(res.statusCode).toBe(400);
      expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
    });
  });
});

describe("empty-body probes on a deployment without x402 rails", () => {
  it("answer 503 (nothing to pay with), not 400; an invalid body is a 400 before any rail check", async () => {
    const t = await testApp("sqlite", {});
    try {
      const invalid = await t.app.inject({
        method: "POST",
        url: "/api/x402-suite",
        payload: "{}",
        headers: { "content-type": "application/json" },
      });
      expect(invalid.statusCode).toBe(400);
      expect(invalid.json().code).toBe("validation_failed");
      for (const url of ["/api/x402-products", "/api/x402-suite"]) {
        const res = await t.app.inject({ method: "POST", url });
        expect(res.statusCode, url).toBe(503);
        expect(res.json().code, url).toEqual(expect.any(String));
      }
    } finally {
      await t.close();
    }
  });
});
