import { formatUsd, type Product } from "../catalog/service.js";
import { requestText } from "../payments/matrix/service.js";
import { centsToAtomic, UNITS_PER_CENT, X402_HEADERS } from "../payments/x402/rails.js";
import { abs, type DiscoveryContext, endpoint, overClientCap } from "./context.js";
import type { ProductBrief } from "./schemas.js";

/** Facts shared by several documents, each derived once from the context. */

export function productBrief(ctx: DiscoveryContext, p: Product): ProductBrief {
  return {
    sku: p.sku,
    name: p.name,
    kind: p.kind,
    blurb: p.blurb,
    aliases: p.aliases,
    amount_cents: p.amountCents,
    amount_usd: p.amountUsd,
    max_amount_required: centsToAtomic(p.amountCents),
    over_default_client_cap: overClientCap(ctx, p),
    agent_buy: requestText("POST", "/api/x402-products", { sku: p.sku }),
    checkout: requestText("POST", "/api/checkout", { sku: p.sku }),
  };
}

export function x402Headers(ctx: DiscoveryContext) {
  return {
    payment: [X402_HEADERS.paymentV1, X402_HEADERS.paymentV2],
    required: X402_HEADERS.required,
    response: [X402_HEADERS.responseV2, X402_HEADERS.responseV1],
    note: ctx.x402.headers.note,
  };
}

export function x402RailsFacts(ctx: DiscoveryContext) {
  return ctx.x402.rails.map((r) => ({
    id: r.id,
    chain: r.chain,
    scheme: r.scheme,
    network: r.network,
    caip2: r.caip2,
    asset: r.asset,
    payTo: r.payTo,
    decimals: r.decimals,
    configured: r.configured,
    missing: [...r.missing],
    extra: r.extra,
    proofs: [...r.proofs],
    note: r.note,
  }));
}

export function caps(ctx: DiscoveryContext) {
  return {
    default_client_cap_usd: formatUsd(ctx.clientCapCents),
    default_client_cap_units: centsToAtomic(ctx.clientCapCents),
    note: ctx.x402.client_cap,
    skus_over_default_cap: ctx.catalog
      .list()
      .filter((p) => overClientCap(ctx, p))
      .map((p) => p.sku),
  };
}

export function unitsFacts(ctx: DiscoveryContext) {
  return { decimals: ctx.x402.decimals, units_per_cent: UNITS_PER_CENT.toString(), note: ctx.x402.atomic_units };
}

export function paidOperations(ctx: DiscoveryContext) {
  return ctx.x402.paid_operations.map((op) => ({
    method: op.method,
    path: op.path,
    summary: op.summary,
    body: op.body,
    pricing: op.pricing,
    served: ctx.hasRoute(op.method, op.path),
  }));
}

/** Card checkout steps (the route, when served, and the spec's text form otherwise). */
export function cardFlow(ctx: DiscoveryContext): string[] {
  const checkout = endpoint(ctx, "POST", "/api/checkout");
  return [
    `${checkout ?? "POST /api/checkout"} { "sku": "<sku>", "email": "<you@example.com>" } → { url } of a hosted checkout.`,
    "Open url, pay by card (or another offered method).",
    "You return to an access page; access is also granted from the signed webhook, exactly once.",
  ];
}

export function manualFlow(ctx: DiscoveryContext): string[] {
  const claims = endpoint(ctx, "POST", "/api/claims");
  return [
    "Send the exact USD-equivalent to a manual rail's payTo (see the payments matrix).",
    ctx.config.contactEmail
      ? `E-mail the transaction signature or hash plus the SKU to ${ctx.config.contactEmail}.`
      : "Claim by e-mail is not available here (no contact address configured).",
    ...(claims ? [`Or file the claim with ${claims} { sku, email, rail, tx }.`] : []),
    "Access is granted once the transfer is confirmed.",
  ];
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, "'\\''")}'`;
}

/** curl examples for the purchase routes this deployment serves. */
export function buyExamples(ctx: DiscoveryContext, product: Product | undefined) {
  const out: { title: string; rail: string; curl: string; expect: string }[] = [];
  if (!product) return out;
  const body = shellQuote(JSON.stringify({ sku: product.sku }));
  if (ctx.hasRoute("GET", "/api/x402-products")) {
    out.push({
      title: `Read the requirements for ${product.sku}`,
      rail: "x402",
      curl: `curl -s ${shellQuote(`${abs(ctx, "/api/x402-products")}?sku=${product.sku}`)}`,
      expect: `200 with the product record (amount_cents ${product.amountCents}) and payment_rails`,
    });
  }
  if (ctx.hasRoute("POST", "/api/x402-products")) {
    const url = abs(ctx, "/api/x402-products");
    out.push({
      title: `Ask to buy ${product.sku} (no payment yet)`,
      rail: "x402",
      curl: `curl -s -i -X POST ${url} -H 'Content-Type: application/json' -d ${body}`,
      expect: `402 with accepts[] (amount "${centsToAtomic(product.amountCents)}") and a PAYMENT-REQUIRED header`,
    });
    out.push({
      title: `Pay and retry for ${product.sku}`,
      rail: "x402",
      curl: `curl -s -i -X POST ${url} -H 'Content-Type: application/json' -H 'X-PAYMENT: <base64 payment payload>' -d ${body}`,
      expect: "200 { order_id, access_url } with PAYMENT-RESPONSE and X-PAYMENT-RESPONSE headers",
    });
  }
  if (ctx.hasRoute("POST", "/api/checkout")) {
    out.push({
      title: `Open a hosted card checkout for ${product.sku}`,
      rail: "card_checkout",
      curl: `curl -s -X POST ${abs(ctx, "/api/checkout")} -H 'Content-Type: application/json' -d ${shellQuote(JSON.stringify({ sku: product.sku, email: "you@example.com" }))}`,
      expect: "200 { url } of the hosted checkout; open it in a browser",
    });
  }
  return out;
}

/** Rails of the matrix as {id, name, configured, missing}, filtered by audience. */
export function railFlags(ctx: DiscoveryContext, audience: "humans" | "agents") {
  return ctx.matrix.rails
    .filter(
      (r) => r.audience.includes(audience) || (audience === "agents" && r.audience.includes("agents_via_browser")),
    )
    .map((r) => ({ id: r.id, name: r.name, configured: r.configured, missing: [...r.missing] }));
}

/** Route tags whose endpoints the agent documents list by name (codec library, engine face, suite jobs). */
export const ENDPOINT_GROUPS = { codec: ["codec", "engine"], suite: ["suite", "jobs"] } as const;

/** The codec and suite endpoints this deployment serves, from the route table. */
export function serviceEndpoints(ctx: DiscoveryContext) {
  const pick = (tags: readonly string[]) =>
    ctx.routes
      .filter((r) => tags.includes(r.tags?.[0] ?? ""))
      .map((r) => ({ method: r.method, path: r.url, summary: r.summary ?? null }));
  return { codec: pick(ENDPOINT_GROUPS.codec), suite: pick(ENDPOINT_GROUPS.suite) };
}
