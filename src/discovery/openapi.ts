import { formatUsd } from "../catalog/service.js";
import { SUITE_PRICE, usdOfUnits } from "../jobs/pricing.js";
import { centsToAtomic } from "../payments/x402/rails.js";
import { compact, type DiscoveryContext, link } from "./context.js";
import { caps, x402Headers } from "./facts.js";
import { x402Notes } from "./text.js";

/**
 * Adds the discovery extensions to the OpenAPI document that @fastify/swagger generates
 * from the route schemas: top-level `x-discovery` (llms.txt, agents.json, agent document,
 * /.well-known/x402) and, on each served paid operation, `x-payment-info` (x402scan style:
 * price mode and range, protocols) plus `x-x402` (rails, headers, units, client cap).
 * The input is not modified.
 */
export function enrichOpenApi(doc: Record<string, unknown>, ctx: DiscoveryContext): Record<string, unknown> {
  const out = structuredClone(doc);
  out["x-discovery"] = compact({
    llmsTxtUrl: link(ctx, "/llms.txt"),
    agentsJsonUrl: link(ctx, "/agents.json"),
    agentUrl: link(ctx, "/api/agent"),
    wellKnownX402Url: link(ctx, "/.well-known/x402"),
    paymentsUrl: link(ctx, "/api/payments"),
  });
  const info = (out.info ?? {}) as Record<string, unknown>;
  const notes = x402Notes(ctx)
    .map((n) => `- ${n}`)
    .join("\n");
  info.description = `${typeof info.description === "string" ? `${info.description}\n\n` : ""}Paying with x402:\n\n${notes}`;
  out.info = info;
  const paths = (out.paths ?? {}) as Record<string, Record<string, Record<string, unknown>>>;
  const cents = ctx.catalog.list().map((p) => p.amountCents);
  const x402 = {
    versions: ctx.x402.versions,
    scheme: "exact",
    headers: x402Headers(ctx),
    rails: ctx.x402.rails.map((r) => ({
      id: r.id,
      network: r.network,
      caip2: r.caip2,
      asset: r.asset,
      payTo: r.payTo,
      decimals: r.decimals,
      configured: r.configured,
      missing: [...r.missing],
    })),
    atomic_units: ctx.x402.atomic_units,
    client_cap: caps(ctx).note,
  };
  // Only the paid operations carry x-payment-info (a route schema may declare its own: ours replaces it).
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item)) {
      if (operation && typeof operation === "object") delete operation["x-payment-info"];
    }
  }
  for (const op of ctx.x402.paid_operations) {
    const operation = paths[op.path]?.[op.method.toLowerCase()];
    if (!operation) continue;
    operation["x-payment-info"] = paymentInfo(ctx, op.path, op.pricing, cents);
    operation["x-x402"] = x402;
    const responses = (operation.responses ?? {}) as Record<string, unknown>;
    if (!responses["402"]) {
      responses["402"] = {
        description:
          "Payment required: JSON body with x402Version and accepts[] (one entry per configured rail) and the PAYMENT-REQUIRED header.",
      };
      operation.responses = responses;
    }
  }
  return out;
}

/** Price bounds of a paid operation: USD strings and USDC atomic units (integer strings); max null = open. */
function bounds(path: string, cents: number[]) {
  if (path === "/api/x402-products" && cents.length > 0) {
    const min = Math.min(...cents);
    const max = Math.max(...cents);
    return {
      mode: "range" as const,
      min_usd: formatUsd(min),
      max_usd: formatUsd(max),
      min_units: centsToAtomic(min),
      max_units: centsToAtomic(max),
    };
  }
  // Metered suite jobs: quoted per request (the 402 carries the quote); a paid job costs at least the minimum.
  return {
    mode: "quote" as const,
    min_usd: usdOfUnits(SUITE_PRICE.minPaidUnits),
    max_usd: null,
    min_units: SUITE_PRICE.minPaidUnits.toString(),
    max_units: null,
  };
}

/** MPP offers of a paid operation (`evm` on Base, `solana` on Solana: charge, USDC), none when no rail is configured. */
function mppOffers(ctx: DiscoveryContext, what: string) {
  const offers = ctx.x402.rails
    .filter((r) => r.configured)
    .map((r) => ({
      method: r.chain === "base" ? "evm" : "solana",
      intent: "charge",
      currency: r.asset,
      amount: null,
      description: `USDC (6 decimals) to ${r.payTo} on ${r.network}: ${what}, named by the 402's WWW-Authenticate: Payment challenge; retry with Authorization (or Payment-Authorization): Payment <credential>.`,
    }));
  return offers.length > 0 ? { offers } : {};
}

/**
 * `x-payment-info` of one paid operation: x402scan's `price` and `protocols`, plus the x402 facts
 * an indexer needs without calling the route: protocol x402 v2, scheme exact, and per rail the
 * network, asset, payTo and price in USD and atomic units.
 */
export function paymentInfo(ctx: DiscoveryContext, path: string, pricing: string, cents: number[]) {
  const b = bounds(path, cents);
  const price =
    b.mode === "range"
      ? { mode: "range", currency: "USD", min: b.min_usd, max: b.max_usd }
      : { mode: "quote", currency: "USD", min: b.min_usd };
  const networks = ctx.x402.rails.map((r) => r.network);
  return {
    price,
    protocols: [{ x402: { version: 2, scheme: "exact", networks } }],
    // MPP (`WWW-Authenticate: Payment`, src/payments/mpp): the offers of MPP's discovery format (mppx
    // `discovery`), one per configured rail; the amount is the item's, named by the 402 (null: per sku / quote).
    ...mppOffers(ctx, b.mode === "range" ? "one price per sku" : "the quote of the request"),
    protocol: "x402",
    x402Version: 2,
    scheme: "exact",
    networks,
    pricing,
    rails: ctx.x402.rails.map((r) => ({
      id: r.id,
      scheme: "exact",
      network: r.network,
      caip2: r.caip2,
      asset: r.asset,
      payTo: r.payTo,
      decimals: r.decimals,
      configured: r.configured,
      price: {
        currency: "USD",
        min_usd: b.min_usd,
        max_usd: b.max_usd,
        min_units: b.min_units,
        max_units: b.max_units,
      },
    })),
    ...(b.mode === "range"
      ? {
          items: ctx.catalog.list().map((p) => ({
            sku: p.sku,
            amount_usd: p.amountUsd,
            amount_units: centsToAtomic(p.amountCents),
          })),
        }
      : {
          metered: {
            unit: "GB (10^9 bytes)",
            free_cap_gb: Number(SUITE_PRICE.freeCapGb),
            units_per_gb: SUITE_PRICE.unitsPerGbAfterFree.toString(),
            units_per_gb_bulk: SUITE_PRICE.unitsPerGbBulk.toString(),
            min_paid_units: SUITE_PRICE.minPaidUnits.toString(),
          },
        }),
  };
}
