import { DEFAULT_MAX_AMOUNT_PER_PAYMENT } from "@x402/core/client";
import type { Catalog, Product } from "../catalog/service.js";
import type { Config } from "../config.js";
import type { RouteInfo } from "../http/route-table.js";
import { suitePricingRecord } from "../jobs/pricing.js";
import type { PaymentsMatrix } from "../payments/matrix/schemas.js";
import { type HasRoute, paymentsMatrix } from "../payments/matrix/service.js";
import { type X402Discovery, x402Discovery } from "../payments/x402/discovery.js";

/**
 * Everything a discovery document may say, gathered from the three sources of truth:
 * the catalog (products, prices), the route table (what this deployment really serves)
 * and the configuration (base URL, rails). Documents are pure functions of this context.
 */
export interface DiscoveryContext {
  config: Config;
  catalog: Catalog;
  baseUrl: string;
  /** Public routes (hidden ones excluded), in registration order. */
  routes: RouteInfo[];
  hasRoute: HasRoute;
  x402: X402Discovery;
  matrix: PaymentsMatrix;
  /** The default per-payment cap of stock x402 v2 clients, in cents (from @x402/core). */
  clientCapCents: number;
}

export interface ContextSources {
  config: Config;
  catalog: Catalog;
  routes: () => RouteInfo[];
  hasRoute: HasRoute;
}

/** "$1" / "$0.10" → cents. */
export function dollarsToCents(text: string): number {
  const m = /^\$?(\d+)(?:\.(\d{1,2}))?$/.exec(text.trim());
  if (!m) throw new Error(`not a dollar amount: ${text}`);
  return Number(m[1]) * 100 + Number((m[2] ?? "0").padEnd(2, "0"));
}

export function buildContext(sources: ContextSources): DiscoveryContext {
  const { config, catalog, hasRoute } = sources;
  return {
    config,
    catalog,
    baseUrl: config.baseUrl,
    routes: sources.routes(),
    hasRoute,
    x402: x402Discovery(config, catalog, hasRoute),
    matrix: paymentsMatrix({ config, catalog, hasRoute, suitePricing: suitePricingRecord() }),
    clientCapCents: dollarsToCents(String(DEFAULT_MAX_AMOUNT_PER_PAYMENT)),
  };
}

/** Absolute URL of a path on this deployment. */
export function abs(ctx: DiscoveryContext, path: string): string {
  return `${ctx.baseUrl}${path}`;
}

/** `METHOD url` when this deployment serves it, else undefined (documents only list what exists). */
export function endpoint(ctx: DiscoveryContext, method: string, path: string): string | undefined {
  if (!ctx.hasRoute(method, path.split("?")[0] ?? path)) return undefined;
  return method === "GET" ? abs(ctx, path) : `${method} ${abs(ctx, path)}`;
}

/** Absolute URL of a GET path when served, else undefined. */
export function link(ctx: DiscoveryContext, path: string): string | undefined {
  return ctx.hasRoute("GET", path.split("?")[0] ?? path) ? abs(ctx, path) : undefined;
}

/** Drops undefined values so absent routes leave no key behind. */
export function compact<T extends Record<string, unknown>>(obj: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}

/**
 * The discovery documents and other well-known entry points, in the order they are listed.
 * Only the ones in the route table appear in any document.
 */
export const DISCOVERY_DOCUMENTS: readonly { key: string; path: string; title: string; note: string }[] = [
  { key: "agent", path: "/api/agent", title: "Agent discovery", note: "source of truth for agents (JSON)" },
  { key: "welcome", path: "/api/welcome", title: "Welcome", note: "orientation for humans and agents (JSON)" },
  { key: "platform", path: "/platform.json", title: "Platform map", note: "surfaces, modules and discovery URLs" },
  {
    key: "catalog",
    path: "/api/x402-products",
    title: "Product catalog",
    note: "products, prices, aliases, x402 requirements",
  },
  { key: "payments", path: "/api/payments", title: "Payments matrix", note: "every rail and how to pay each product" },
  {
    key: "agents_json",
    path: "/agents.json",
    title: "agents.json",
    note: "SKUs with both rails' requirements, headers, flows, caps",
  },
  { key: "agents_txt", path: "/agents.txt", title: "agents.txt", note: "plain-text twin of agents.json" },
  { key: "llms_txt", path: "/llms.txt", title: "llms.txt", note: "short index for language models" },
  {
    key: "llms_full_txt",
    path: "/llms-full.txt",
    title: "llms-full.txt",
    note: "every product, price and flow in one text",
  },
  {
    key: "openapi_yaml",
    path: "/openapi.yaml",
    title: "OpenAPI (YAML)",
    note: "OpenAPI 3.1 generated from the route schemas",
  },
  { key: "openapi_json", path: "/openapi.json", title: "OpenAPI (JSON)", note: "the same OpenAPI document as JSON" },
  {
    key: "well_known_x402",
    path: "/.well-known/x402",
    title: "/.well-known/x402",
    note: "x402 resource list for indexers",
  },
  {
    key: "agent_card",
    path: "/.well-known/agent-card.json",
    title: "A2A agent card",
    note: "A2A agent card: skills (the MCP tools), interfaces, x402 security scheme",
  },
  {
    key: "mcp_card",
    path: "/.well-known/mcp.json",
    title: "MCP server card",
    note: "MCP server card: streamable HTTP endpoint, stdio command, tools and resources",
  },
  {
    key: "mcp_server_card",
    path: "/.well-known/mcp/server-card.json",
    title: "MCP server card (alternate path)",
    note: "the same MCP server card at the other proposed path",
  },
  {
    key: "pricing_md",
    path: "/pricing.md",
    title: "Pricing",
    note: "every price in Markdown: products and suite jobs",
  },
  {
    key: "api_catalog",
    path: "/.well-known/api-catalog",
    title: "API catalog",
    note: "RFC 9727 linkset of the descriptions and documentation",
  },
  { key: "toys", path: "/toys.json", title: "Toy store", note: "free toys in four aisles; not commercial SKUs" },
  { key: "ideas", path: "/ideas.json", title: "Idea lab", note: "ideas and whether they have shipped" },
  { key: "olympiad", path: "/api/olympiad", title: "Olympiad", note: "the Great Agentic Olympiad" },
  { key: "olympiad_json", path: "/olympiad.json", title: "olympiad.json", note: "full machine map of the olympiad" },
  { key: "olympiad_records", path: "/olympiad-records.json", title: "Olympiad records", note: "records" },
  { key: "standings", path: "/standings.json", title: "Standings", note: "public standings with proof" },
  { key: "metrics", path: "/api/lab/metrics", title: "Metrics", note: "service metrics (JSON)" },
];

/** key → absolute URL of every served discovery document. */
export function discoveryLinks(ctx: DiscoveryContext): Record<string, string> {
  const out: Record<string, string> = {};
  for (const doc of DISCOVERY_DOCUMENTS) {
    const url = link(ctx, doc.path);
    if (url) out[doc.key] = url;
  }
  return out;
}

/** The olympiad entry product (kind `olympiad`), if the catalog has one. */
export function olympiadEntry(ctx: DiscoveryContext): Product | undefined {
  return ctx.catalog.list().find((p) => p.kind === "olympiad");
}

export function overClientCap(ctx: DiscoveryContext, product: Product): boolean {
  return product.amountCents > ctx.clientCapCents;
}
