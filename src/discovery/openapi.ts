import { formatUsd } from "../catalog/service.js";
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
  for (const op of ctx.x402.paid_operations) {
    const operation = paths[op.path]?.[op.method.toLowerCase()];
    if (!operation) continue;
    const price =
      op.path === "/api/x402-products" && cents.length > 0
        ? { mode: "range", currency: "USD", min: formatUsd(Math.min(...cents)), max: formatUsd(Math.max(...cents)) }
        : { mode: "quote", currency: "USD" };
    operation["x-payment-info"] = { price, protocols: [{ x402: {} }], pricing: op.pricing };
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
