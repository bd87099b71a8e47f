import { z } from "zod";
import { Problem, problemSchema } from "../../http/problem.js";
import type { App } from "../../http/types.js";
import { type IdentityService, presentedToken } from "../../identity/service.js";
import { suitePricingSchema } from "../../payments/matrix/schemas.js";
import { pricingRules, suitePricingRecord } from "../pricing.js";
import { DEFAULT_SUITE_LEVEL, LEVEL_THROUGHPUT, levelNote } from "../throughput.js";
import {
  quoteRequestSchema,
  quoteViewSchema,
  SUITE_DATA_CLASSES,
  SUITE_LEVELS,
  SUITE_OPS,
  SUITE_PRODUCTS,
} from "./schemas.js";
import { PAY_CARD, PAY_X402, type QuoteService } from "./service.js";

const levelInfoSchema = z.object({
  compress_mb_s: z.number(),
  decompress_mb_s: z.number(),
  ratio: z.number(),
  note: z.string(),
});

const pricingAnswerSchema = suitePricingSchema.extend({
  gb_bytes: z.number().int(),
  mb_bytes: z.number().int(),
  units_per_usd: z.number().int(),
  free_cap_bytes: z.number().int(),
  units_per_gb_after_free: z.string(),
  units_per_gb_bulk: z.string(),
  bulk_after_billable_bytes: z.number().int(),
  min_paid_units: z.string(),
  first_paid_egress_ref_units_per_gb: z.string(),
  max_job_bytes: z.number().int(),
  rules: z.array(z.string()),
  examples: z.array(z.object({ bytes: z.number().int(), amount_units: z.string(), amount_usd: z.string() })),
  quote_ttl_seconds: z.number().int(),
  request: z.object({
    products: z.array(z.string()),
    data_classes: z.array(z.string()),
    ops: z.array(z.string()),
    levels: z.array(z.string()),
    default_level: z.string(),
  }),
  levels: z.record(z.string(), levelInfoSchema),
  quote: z.string(),
  pay: z.object({ x402: z.string(), card: z.string() }),
});

/** GET /api/ppp-quote (the suite pricing record) and POST /api/ppp-quote (a persisted, priced quote). */
export function quoteRoutes(app: App, deps: { quotes: QuoteService; identities: IdentityService; ttlSeconds: number }) {
  const { quotes, identities } = deps;

  app.get(
    "/api/ppp-quote",
    {
      schema: {
        summary:
          "Suite pricing record: free cap, prices per GB (10^9 bytes), minimum, rules and accepted request values",
        tags: ["suite"],
        response: { 200: pricingAnswerSchema },
      },
    },
    async (_request, reply) => {
      reply.header("Cache-Control", "public, max-age=60");
      return {
        ...suitePricingRecord(),
        ...pricingRules(),
        quote_ttl_seconds: deps.ttlSeconds,
        request: {
          products: [...SUITE_PRODUCTS],
          data_classes: [...SUITE_DATA_CLASSES],
          ops: [...SUITE_OPS],
          levels: [...SUITE_LEVELS],
          default_level: DEFAULT_SUITE_LEVEL,
        },
        levels: Object.fromEntries(
          SUITE_LEVELS.map((l) => [l, { ...LEVEL_THROUGHPUT[l], note: levelNote(l) }]),
        ) as Record<string, z.infer<typeof levelInfoSchema>>,
        quote: "POST /api/ppp-quote { product, dataClass, op, bytes, level?, identity? }",
        pay: { x402: PAY_X402, card: PAY_CARD },
      };
    },
  );

  app.post(
    "/api/ppp-quote",
    {
      schema: {
        summary: "Quote a metered suite job: price with its tiers, free cap left for an identity, time estimate",
        description:
          "Persists the quote (quote_id, expires_at). Pay it with POST /api/x402-suite (same body) or POST /api/ppp-checkout { quote_id }; the amount is always the quote's. Free volume belongs to the caller, not to the job: with a join-work identity token (body `identity`, or header X-Identity-Token) the free part is what is left of the identity's 100 GB this calendar month (UTC); without one, what is left of the client IP's anonymous allowance for the UTC day (SUITE_ANON_FREE_BYTES_PER_DAY, default 1 GB).",
        tags: ["suite"],
        body: quoteRequestSchema,
        response: {
          200: quoteViewSchema,
          400: problemSchema,
          401: problemSchema,
          413: problemSchema,
          415: problemSchema,
        },
      },
    },
    async (request) => {
      const { identity: bodyToken, ...input } = request.body;
      const headerToken = presentedToken(request.headers);
      if (bodyToken !== undefined && headerToken !== null && bodyToken !== headerToken) {
        throw new Problem(
          400,
          "identity_conflict",
          "Two different identity tokens were sent (body `identity` and a header); send one.",
        );
      }
      const token = bodyToken ?? headerToken;
      const identity = token === null ? null : await identities.verify(token);
      return quotes.quote(input, identity, { ip: request.ip });
    },
  );
}
