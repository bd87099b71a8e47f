import { operationIdOf } from "../http/operation-ids.js";
import { VERSIONS } from "../versions.js";
import { compact, type DiscoveryContext, discoveryLinks, endpoint, link, olympiadEntry } from "./context.js";
import {
  buyExamples,
  caps,
  cardFlow,
  manualFlow,
  paidOperations,
  productBrief,
  railFlags,
  serviceEndpoints,
  unitsFacts,
  x402Headers,
  x402RailsFacts,
} from "./facts.js";
import { mcpFacts } from "./mcp-card.js";
import type { AgentDocument, AgentsJson, Platform, Welcome } from "./schemas.js";
import { AISLES } from "./schemas.js";

export const SERVICE_NAME = "Lab Phi";
export const SUMMARY =
  "Lab Phi sells licences, services and an olympiad entry to AI agents (x402, USDC on Base and Solana) and to humans (hosted card checkout, payment links, manual crypto, wire invoices) side by side, from one catalog.";

/** What each route tag stands for in the platform map; unknown tags get a generic entry. */
export const MODULE_INFO: Record<string, { title: string; description: string }> = {
  catalog: { title: "Catalog", description: "Products, prices in cents, aliases and x402 payment requirements." },
  payments: { title: "Payments", description: "The payments matrix and the purchase rails." },
  x402: { title: "Agent payments (x402)", description: "USDC on Base and Solana, paid with the x402 protocol." },
  card: { title: "Card payments", description: "Hosted checkout, payment links and signed webhooks." },
  claims: { title: "Manual claims", description: "Manual crypto transfers and wire invoices, decided by an operator." },
  orders: { title: "Orders and access", description: "Entitlements opened with the access URL of a paid order." },
  discovery: { title: "Discovery", description: "Machine-readable documents for agents and crawlers." },
  olympiad: { title: "Olympiad", description: "The Great Agentic Olympiad: entry, teams, governance, records." },
  codec: { title: "Codec", description: "The lossless compression engine and its web demo face." },
  suite: { title: "Suite jobs", description: "Metered compression suite jobs: free up to the cap, then per GB." },
  ops: { title: "Operations", description: "Health, readiness and metrics." },
  admin: { title: "Administration", description: "Operator endpoints (bearer token)." },
  web: { title: "Web pages", description: "HTML pages for humans: paying, claiming, opening access." },
  engine: { title: "Codec engine", description: "The engine's HTTP face: profile, route, compress, bench, barrel." },
};

function modules(ctx: DiscoveryContext): Platform["modules"] {
  const byTag = new Map<string, Platform["modules"][number]>();
  for (const r of ctx.routes) {
    const tag = r.tags?.[0] ?? "other";
    let mod = byTag.get(tag);
    if (!mod) {
      const info = MODULE_INFO[tag] ?? { title: tag, description: `Routes tagged ${tag}.` };
      mod = { id: tag, ...info, routes: [] };
      byTag.set(tag, mod);
    }
    mod.routes.push({
      method: r.method,
      path: r.url,
      summary: r.summary ?? null,
      operation_id: operationIdOf(r.method, r.url),
    });
  }
  return [...byTag.values()];
}

export function moduleIds(ctx: DiscoveryContext): string[] {
  return modules(ctx).map((m) => m.id);
}

function networks(ctx: DiscoveryContext): string[] {
  return ctx.x402.rails.map((r) => r.network);
}

// ------------------------------------------------------------------- /api/welcome

export function welcomeDocument(ctx: DiscoveryContext): Welcome {
  const links = discoveryLinks(ctx);
  const human = compact({
    pay_page: link(ctx, "/pay"),
    payments: links.payments,
    catalog: links.catalog,
    checkout: endpoint(ctx, "POST", "/api/checkout"),
    toys: links.toys,
    ideas: links.ideas,
    olympiad: links.olympiad,
  });
  const agent = compact({
    start_here: links.agent,
    catalog: links.catalog,
    buy: endpoint(ctx, "POST", "/api/x402-products"),
    agents_json: links.agents_json,
    llms_txt: links.llms_txt,
    openapi: links.openapi_yaml,
    well_known_x402: links.well_known_x402,
    platform: links.platform,
  }) as Record<string, string>;
  const entry = olympiadEntry(ctx);
  const buy = endpoint(ctx, "POST", "/api/x402-products");
  return {
    hello: `Welcome to ${SERVICE_NAME}.`,
    service: SERVICE_NAME,
    version: VERSIONS.discovery,
    you_are:
      "a human or an agent: both are served by the same API. Humans pay by card or invoice, agents pay with x402; every rail grants the same access.",
    if_you_are_human: { links: human as Record<string, string>, how_to_pay: cardFlow(ctx) },
    if_you_are_agent: {
      links: agent,
      payment_header: "X-PAYMENT",
      payment_headers: x402Headers(ctx).payment,
      networks: networks(ctx),
      how_to_pay: ctx.x402.flow,
    },
    next_30_seconds: {
      human: [
        links.payments ? `Open ${links.payments} to see how you can pay.` : "Ask the contact address how to pay.",
        ...(links.catalog ? [`Browse ${links.catalog} for products and prices.`] : []),
        ...(links.toys ? [`Play with something free: ${links.toys}.`] : []),
      ],
      agent: [
        ...(links.agent ? [`GET ${links.agent} (the source of truth).`] : []),
        ...(entry && buy
          ? [`${buy} { "sku": "${entry.sku}" } → 402; pay ${entry.amountUsd} USD in USDC; retry with X-PAYMENT.`]
          : []),
        ...(links.llms_txt ? [`Read ${links.llms_txt} for the short version.`] : []),
      ],
    },
    suite_pricing: ctx.matrix.suite_pricing,
    modules: moduleIds(ctx),
    toy_store: compact({ aisles: [...AISLES], url: links.toys }) as Welcome["toy_store"],
    contact: ctx.config.contactEmail ?? null,
  };
}

// ------------------------------------------------------------------- /platform.json

export function platformDocument(ctx: DiscoveryContext): Platform {
  return {
    name: SERVICE_NAME,
    version: VERSIONS.discovery,
    site: ctx.baseUrl,
    summary: SUMMARY,
    surfaces: {
      humans: {
        id: "humans",
        audience: "humans",
        commerce: "stripe",
        description: "Hosted card checkout and payment links; manual crypto and wire invoices for the rest.",
        entry: link(ctx, "/api/payments") ?? null,
        rails: railFlags(ctx, "humans"),
      },
      agents: {
        id: "agents",
        audience: "agents",
        commerce: "x402",
        description: "x402 exact payments in USDC on Base and Solana; discovery documents for machines.",
        entry: link(ctx, "/api/agent") ?? null,
        rails: railFlags(ctx, "agents"),
        networks: networks(ctx),
        payment_header: "X-PAYMENT",
      },
    },
    modules: modules(ctx),
    discovery: discoveryLinks(ctx),
    versions: { ...VERSIONS },
    contact: ctx.config.contactEmail ?? null,
  };
}

// ------------------------------------------------------------------- /api/agent

export function agentDocument(ctx: DiscoveryContext): AgentDocument {
  const links = discoveryLinks(ctx);
  const entry = olympiadEntry(ctx);
  const matrix = ctx.matrix;
  const example = entry ?? ctx.catalog.list()[0];
  return {
    name: SERVICE_NAME,
    version: VERSIONS.discovery,
    api_version: VERSIONS.api,
    source_of_truth: true,
    note: "Agent discovery is the source of truth (since v1.4). Every other document (platform.json, agents.json, llms.txt, the OpenAPI description) is derived from the same catalog, route table and configuration.",
    base_url: ctx.baseUrl,
    platform: {
      map: links.platform ?? null,
      surfaces: { humans: railFlags(ctx, "humans"), agents: railFlags(ctx, "agents") },
    },
    discovery: links,
    catalog: {
      url: links.catalog ?? null,
      count: ctx.catalog.list().length,
      aliases: ctx.catalog.aliasTable(),
      retired: ctx.catalog.retiredTable(),
      products: ctx.catalog.list().map((p) => productBrief(ctx, p)),
    },
    rails: {
      agent: {
        protocol: "x402",
        versions: ctx.x402.versions,
        configured: ctx.x402.configured,
        payment_header: "X-PAYMENT",
        headers: x402Headers(ctx),
        rails: x402RailsFacts(ctx),
        max_timeout_seconds: ctx.x402.maxTimeoutSeconds,
        atomic_units: ctx.x402.atomic_units,
        client_compat: ctx.x402.client_compat,
        caps: caps(ctx),
      },
      human: {
        rails: railFlags(ctx, "humans"),
        payment_methods: matrix.payment_methods.methods,
        payment_methods_note: matrix.payment_methods.note,
      },
      universal: {
        matrix: links.payments ?? null,
        configured_rails: matrix.configured_rails,
        missing_or_optional: matrix.missing_or_optional,
        preferred: matrix.preferred,
      },
    },
    paid_operations: paidOperations(ctx),
    mcp: mcpFacts(ctx),
    endpoints: serviceEndpoints(ctx),
    flows: { product_x402: ctx.x402.flow, product_card: cardFlow(ctx) },
    buy_examples: buyExamples(ctx, example),
    suite_pricing: matrix.suite_pricing,
    olympiad: entry
      ? {
          entry_sku: entry.sku,
          entry_usd: entry.amountUsd,
          entry_cents: entry.amountCents,
          buy: `POST /api/x402-products { "sku": "${entry.sku}", "note": "agent:<your id>" }`,
          links: compact({
            olympiad: links.olympiad,
            olympiad_json: links.olympiad_json,
            records: links.olympiad_records,
            catalog_entry: link(ctx, `/api/x402-products?sku=${entry.sku}`),
          }) as Record<string, string>,
        }
      : null,
    toy_store: { aisles: [...AISLES], url: links.toys ?? null },
    contact: ctx.config.contactEmail ?? null,
  };
}

// ------------------------------------------------------------------- /agents.json

export function agentsJsonDocument(ctx: DiscoveryContext): AgentsJson {
  const rails = ctx.x402.rails;
  return {
    format: "labphi-agents/1",
    name: SERVICE_NAME,
    version: VERSIONS.discovery,
    base_url: ctx.baseUrl,
    description: SUMMARY,
    protocol: "x402",
    x402_versions: ctx.x402.versions,
    headers: x402Headers(ctx),
    units: unitsFacts(ctx),
    caps: caps(ctx),
    rails: x402RailsFacts(ctx),
    skus: ctx.catalog.list().map((p) => {
      const brief = productBrief(ctx, p);
      return {
        sku: p.sku,
        name: p.name,
        kind: p.kind,
        aliases: p.aliases,
        amount_cents: p.amountCents,
        amount_usd: p.amountUsd,
        over_default_client_cap: brief.over_default_client_cap,
        buy: { method: "POST" as const, path: "/api/x402-products", body: { sku: p.sku } },
        requirements: rails.map((r) => ({
          rail: r.id,
          scheme: "exact" as const,
          network: r.network,
          asset: r.asset,
          payTo: r.payTo,
          amount: brief.max_amount_required,
          maxAmountRequired: brief.max_amount_required,
          decimals: r.decimals,
          configured: r.configured,
          missing: [...r.missing],
        })),
      };
    }),
    flows: { x402_product: ctx.x402.flow, card_checkout: cardFlow(ctx), manual_claim: manualFlow(ctx) },
    paid_operations: paidOperations(ctx),
    mcp: mcpFacts(ctx),
    endpoints: serviceEndpoints(ctx),
    links: discoveryLinks(ctx),
  };
}
