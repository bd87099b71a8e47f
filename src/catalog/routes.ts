import { z } from "zod";
import type { Config } from "../config.js";
import { problemSchema } from "../http/problem.js";
import type { App } from "../http/types.js";
import { CLIENT_COMPAT, requirementRecord, x402Rails } from "../payments/x402/rails.js";
import type { Catalog, Product } from "./service.js";

export const productRecordSchema = z.object({
  sku: z.string(),
  name: z.string(),
  amount_cents: z.number().int(),
  amount_usd: z.string(),
  kind: z.enum(["license", "service", "support", "olympiad"]),
  blurb: z.string(),
  aliases: z.array(z.string()),
  human_stripe: z.string().optional(),
  agent_buy: z.string(),
  access: z.string().optional(),
  sponsor: z.string().optional(),
  olympiad: z.string().optional(),
});

const requirementSchema = z.object({
  scheme: z.literal("exact"),
  network: z.string(),
  asset: z.string(),
  payTo: z.string().nullable(),
  decimals: z.number().int(),
  chain: z.enum(["solana", "base"]),
  configured: z.boolean().describe("true only when this rail can verify and settle with the current settings"),
  missing: z.array(z.string()).describe("settings still needed before the rail can settle (empty when configured)"),
});

const catalogEnvelope = {
  protocol: z.literal("x402"),
  rail: z.literal("agent"),
  configured: z.boolean(),
  payment_header: z.literal("X-PAYMENT"),
  payment_headers: z.array(z.string()),
  payment: requirementSchema,
  payment_rails: z.array(requirementSchema),
  client_compat: z.string(),
  aliases: z.record(z.string(), z.string()),
  retired: z.record(z.string(), z.string()),
};

export const catalogResponseSchema = z.object({
  ...catalogEnvelope,
  count: z.number().int(),
  products: z.array(productRecordSchema),
});

export const singleProductResponseSchema = z.object({ ...catalogEnvelope, product: productRecordSchema });

/** The spec's product record for one product. */
export function productRecord(product: Product, config: Config): z.infer<typeof productRecordSchema> {
  const record: z.infer<typeof productRecordSchema> = {
    sku: product.sku,
    name: product.name,
    amount_cents: product.amountCents,
    amount_usd: product.amountUsd,
    kind: product.kind,
    blurb: product.blurb,
    aliases: product.aliases,
    agent_buy: "POST /api/x402-products",
  };
  const link = config.paymentLinks[product.sku];
  if (link) record.human_stripe = link;
  if (product.kind === "olympiad") {
    record.access = `${config.baseUrl}/api/olympiad?view=entry`;
    record.sponsor = config.olympiad.sponsor.name;
    record.olympiad = `${config.baseUrl}/olympiad.json`;
  }
  return record;
}

/** Everything the catalog says about payment, shared by the list and single-product answers. */
export function catalogEnvelopeFor(config: Config, catalog: Catalog) {
  const rails = x402Rails(config).map(requirementRecord);
  return {
    protocol: "x402" as const,
    rail: "agent" as const,
    configured: rails.some((r) => r.configured),
    payment_header: "X-PAYMENT" as const,
    payment_headers: ["X-PAYMENT", "PAYMENT-SIGNATURE"],
    payment: rails[0] as (typeof rails)[number],
    payment_rails: rails,
    client_compat: CLIENT_COMPAT,
    aliases: catalog.aliasTable(),
    retired: catalog.retiredTable(),
  };
}

export function catalogRoutes(app: App, deps: { catalog: Catalog; config: Config }) {
  const { catalog, config } = deps;
  // The catalog and configuration are fixed for the life of the app, so each answer is
  // built, checked against its schema and serialized once, then served as bytes.
  const cache = new Map<string, string>();
  const answer = (sku: string | undefined): string => {
    const key = sku === undefined ? "*" : catalog.resolve(sku).sku;
    let body = cache.get(key);
    if (body === undefined) {
      const envelope = catalogEnvelopeFor(config, catalog);
      if (sku === undefined) {
        const products = catalog.list().map((p) => productRecord(p, config));
        body = JSON.stringify(catalogResponseSchema.parse({ ...envelope, count: products.length, products }));
      } else {
        const product = productRecord(catalog.resolve(key), config);
        body = JSON.stringify(singleProductResponseSchema.parse({ ...envelope, product }));
      }
      cache.set(key, body);
    }
    return body;
  };

  app.get(
    "/api/x402-products",
    {
      schema: {
        summary: "Product catalog with x402 payment requirements (one product with ?sku=, sku or alias)",
        tags: ["catalog"],
        querystring: z.object({ sku: z.string().min(1).max(100).optional() }),
        response: {
          200: z.union([catalogResponseSchema, singleProductResponseSchema]),
          404: problemSchema,
          410: problemSchema,
        },
      },
    },
    // Synchronous on purpose: the answer is bytes already, no promise needed on this hot path.
    (request, reply) => {
      const body = answer(request.query.sku);
      reply
        .type("application/json; charset=utf-8")
        .header("Cache-Control", "public, max-age=60")
        .send(body as never);
    },
  );
}
