import { compileErrors, validate } from "@readme/openapi-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { VERSIONS } from "../../src/versions.js";
import { type TestApp, testApp } from "../support/app.js";
import { BASE_SETTLEMENT } from "../support/rails.js";

type OpenApi = {
  openapi: string;
  info: { version: string; description?: string };
  paths: Record<string, Record<string, Record<string, unknown>>>;
  "x-discovery"?: Record<string, string>;
};

const HTTP_METHODS = new Set(["get", "put", "post", "delete", "options", "head", "patch", "trace"]);

/** Fastify `/access/:token` → OpenAPI `/access/{token}`. */
function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
}

describe("OpenAPI description", () => {
  let t: TestApp;
  let yamlBody: string;
  let doc: OpenApi;

  beforeAll(async () => {
    t = await testApp("sqlite", { PAY_TO_BASE: "0x1111111111111111111111111111111111111111", ...BASE_SETTLEMENT });
    const res = await t.app.inject({ method: "GET", url: "/openapi.yaml" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^application\/yaml/);
    yamlBody = res.body;
    doc = parse(yamlBody) as OpenApi;
  });
  afterAll(async () => {
    await t.close();
  });

  it("is a valid OpenAPI 3.1 document (standard validator)", async () => {
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info.version).toBe(VERSIONS.api);
    const result = await validate(structuredClone(doc) as never);
    if (!result.valid) throw new Error(compileErrors(result));
    expect(result.specification).toBe("OpenAPI");
  });

  it("the validator does reject a broken copy (so the check above can fail)", async () => {
    const broken = structuredClone(doc) as unknown as Record<string, unknown>;
    const paths = broken.paths as Record<string, Record<string, Record<string, unknown>>>;
    const op = paths["/api/payments"]?.get;
    if (!op) throw new Error("GET /api/payments is not documented");
    op.parameters = [{ name: "sku", in: "nowhere" }];
    const result = await validate(broken as never);
    expect(result.valid).toBe(false);
  });

  it("documents exactly the registered public routes (paths and methods)", () => {
    const documented = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of Object.keys(item)) {
        if (HTTP_METHODS.has(method)) documented.add(`${method.toUpperCase()} ${path}`);
      }
    }
    const registered = new Set(t.app.services.routes.public().map((r) => `${r.method} ${openApiPath(r.url)}`));
    expect([...documented].sort()).toEqual([...registered].sort());
    // the discovery routes themselves are part of it
    for (const p of ["/openapi.yaml", "/openapi.json", "/llms.txt", "/api/payments", "/api/agent", "/toys.json"]) {
      expect(registered.has(`GET ${p}`)).toBe(true);
    }
  });

  it("every operation has a summary, tags and at least one response", () => {
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        if (!HTTP_METHODS.has(method)) continue;
        expect(op.summary, `${method} ${path}`).toEqual(expect.any(String));
        expect(op.tags, `${method} ${path}`).toEqual(expect.any(Array));
        expect(Object.keys(op.responses as object).length, `${method} ${path}`).toBeGreaterThan(0);
      }
    }
  });

  it("the JSON twin is the same document, and both link the other discovery documents", async () => {
    const res = await t.app.inject({ method: "GET", url: "/openapi.json" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(res.json()).toEqual(doc);
    expect(doc["x-discovery"]).toMatchObject({
      llmsTxtUrl: "http://lab.test/llms.txt",
      agentsJsonUrl: "http://lab.test/agents.json",
      agentUrl: "http://lab.test/api/agent",
    });
  });

  it("its description states both rails, the header names, atomic units and the default client cap", () => {
    const text = doc.info.description ?? "";
    for (const word of [
      "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
      "eip155:8453",
      "X-PAYMENT",
      "PAYMENT-SIGNATURE",
      "PAYMENT-REQUIRED",
    ]) {
      expect(text).toContain(word);
    }
    expect(text).toContain("1 cent = 10,000 units");
    expect(text).toContain("cap a payment at $1.00");
  });

  it("describes the text documents with their media types", () => {
    const llms = doc.paths["/llms.txt"]?.get as { responses: Record<string, { content: Record<string, unknown> }> };
    expect(Object.keys(llms.responses["200"]?.content ?? {})).toEqual(["text/markdown"]);
    const yaml = doc.paths["/openapi.yaml"]?.get as { responses: Record<string, { content: Record<string, unknown> }> };
    expect(Object.keys(yaml.responses["200"]?.content ?? {})).toEqual(["application/yaml"]);
  });

  it("paid operations that are served carry x-payment-info, both rails, the headers and a 402", () => {
    const buy = doc.paths["/api/x402-products"]?.post;
    if (!t.app.services.routes.allowedMethods("/api/x402-products").includes("POST")) {
      expect(buy).toBeUndefined();
      return;
    }
    expect(buy?.["x-payment-info"]).toMatchObject({
      protocols: [{ x402: { version: 2, scheme: "exact" } }],
      price: { mode: "range", currency: "USD", min: "1.00", max: "699.00" },
    });
    const x402 = buy?.["x-x402"] as { rails: { network: string }[]; headers: { payment: string[] } };
    expect(x402.rails.map((r) => r.network)).toEqual(["solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", "eip155:8453"]);
    expect(x402.headers.payment).toEqual(["X-PAYMENT", "PAYMENT-SIGNATURE"]);
    expect(Object.keys(buy?.responses as object)).toContain("402");
  });

  it("x-payment-info is on every served paid operation, with the x402 facts per rail, and nowhere else", () => {
    const paid = new Set(
      ["POST /api/x402-products", "POST /api/x402-suite"].filter((op) => {
        const [method = "", path = ""] = op.split(" ");
        return t.app.services.routes.allowedMethods(path).includes(method);
      }),
    );
    expect(paid.size).toBe(2);
    const carrying = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        if (HTTP_METHODS.has(method) && op["x-payment-info"] !== undefined)
          carrying.add(`${method.toUpperCase()} ${path}`);
      }
    }
    expect([...carrying].sort()).toEqual([...paid].sort());

    type Info = {
      protocol: string;
      x402Version: number;
      scheme: string;
      networks: string[];
      rails: { network: string; asset: string; payTo: string | null; scheme: string; price: Record<string, unknown> }[];
      items?: { sku: string; amount_usd: string; amount_units: string }[];
      metered?: Record<string, unknown>;
    };
    const products = doc.paths["/api/x402-products"]?.post?.["x-payment-info"] as Info;
    expect(products).toMatchObject({ protocol: "x402", x402Version: 2, scheme: "exact" });
    expect(products.networks).toEqual(["solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", "eip155:8453"]);
    expect(products.rails.map((r) => [r.network, r.asset, r.payTo, r.scheme])).toEqual([
      ["solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", null, "exact"],
      [
        "eip155:8453",
        "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
        "0x1111111111111111111111111111111111111111",
        "exact",
      ],
    ]);
    for (const r of products.rails) {
      expect(r.price).toEqual({
        currency: "USD",
        min_usd: "1.00",
        max_usd: "699.00",
        min_units: "1000000",
        max_units: "699000000",
      });
    }
    expect(products.items?.find((i) => i.sku === "zrw-pro")).toEqual({
      sku: "zrw-pro",
      amount_usd: "249.00",
      amount_units: "249000000",
    });

    const suite = doc.paths["/api/x402-suite"]?.post?.["x-payment-info"] as Info & { price: Record<string, unknown> };
    expect(suite).toMatchObject({ protocol: "x402", x402Version: 2, scheme: "exact" });
    expect(suite.price).toEqual({ mode: "quote", currency: "USD", min: "0.05" });
    expect(suite.rails.map((r) => r.price)).toEqual([
      { currency: "USD", min_usd: "0.05", max_usd: null, min_units: "50000", max_units: null },
      { currency: "USD", min_usd: "0.05", max_usd: null, min_units: "50000", max_units: null },
    ]);
    expect(suite.metered).toMatchObject({ units_per_gb: "50000", units_per_gb_bulk: "40000", min_paid_units: "50000" });
    expect(suite.items).toBeUndefined();
  });

  it("lists the new discovery documents in x-discovery's neighbours: agent card, MCP card, pricing.md", () => {
    for (const p of [
      "/.well-known/agent-card.json",
      "/.well-known/mcp.json",
      "/.well-known/mcp/server-card.json",
      "/pricing.md",
    ]) {
      expect(doc.paths[p]?.get, p).toBeDefined();
    }
    const pricing = doc.paths["/pricing.md"]?.get as {
      responses: Record<string, { content: Record<string, unknown> }>;
    };
    expect(Object.keys(pricing.responses["200"]?.content ?? {})).toEqual(["text/markdown"]);
  });
});
