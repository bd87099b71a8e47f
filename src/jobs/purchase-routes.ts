import type { FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { Problem, problemSchema } from "../http/problem.js";
import { emailText, plainText } from "../http/text.js";
import type { App } from "../http/types.js";
import { type IdentityService, presentedToken } from "../identity/service.js";
import type { PricedItem } from "../orders/priced-item.js";
import { QUOTE_SKU } from "../orders/priced-item.js";
import { mppCredentialHeader, PaymentEdge, type Presented } from "../payments/mpp/http.js";
import { paymentHeader } from "../payments/x402/proof.js";
import { challengeSchema, emptyJsonAsAbsent } from "../payments/x402/routes.js";
import type { Challenge, X402Service } from "../payments/x402/service.js";
import { centsOfUnits, SUITE_PRICE, suitePricingRecord, usdOfUnits } from "./pricing.js";
import { SUITE_RESOURCE_PATH, type SuitePurchase } from "./purchase.js";
import { quoteViewSchema, suiteRequestFields } from "./quotes/schemas.js";

export const jobPurchaseSchema = z.object({
  job_id: z.string(),
  job_token: z.string().describe("bearer token of the job's routes (Authorization: Bearer <job_token>); keep it"),
  quote_id: z.string(),
  status_url: z.string(),
  upload_url: z.string().describe("PUT the input here (application/octet-stream), or use upload_tus"),
  upload_tus: z.string().describe("tus endpoint for resumable uploads (metadata job_id)"),
  output_url: z.string(),
  amount_units: z.string().describe("what was paid, USDC atomic units (0 within the free cap)"),
  rail: z.string().optional(),
  transaction: z.string().optional(),
  receipt: z
    .string()
    .optional()
    .describe(
      "the purchase receipt signed by the service: a compact JWS (EdDSA), verifiable offline against /.well-known/jwks.json (docs/receipts.md)",
    ),
  quote: quoteViewSchema.optional(),
  webhook_secret: z
    .string()
    .optional()
    .describe(
      'with a callback_url: the Standard Webhooks secret (whsec_…) the job\'s events are signed with; keep it (docs/suite.md "Webhooks")',
    ),
});

const pendingSchema = z
  .object({ status: z.literal(202), code: z.string(), detail: z.string(), retry_after: z.number().int() })
  .catchall(z.unknown());

/**
 * No body, `null` or `""`: what an indexer's unpaid probe sends. A JSON object, even `{}`, is a
 * request: it is validated first and a missing field is a 400 `validation_failed` naming it,
 * before any rail or configuration check.
 */
export function isEmptyBody(body: unknown): boolean {
  if (body === undefined || body === null) return true;
  if (typeof body === "string") return body.trim() === "";
  return false;
}

/**
 * The 402 an unpaid probe with an empty body gets: suite jobs are metered, so there is no one price;
 * the challenge shows the minimum paid job (one entry per configured rail) and the body adds the
 * pricing record and how to get a real quote. Paying this entry buys nothing by itself: a payment is
 * only accepted against the quote of a real request. Nothing is persisted (probes write no rows).
 */
export function suiteProbeItem(baseUrl: string): PricedItem {
  const min = SUITE_PRICE.minPaidUnits;
  return {
    kind: "quote",
    ref: "minimum",
    sku: QUOTE_SKU,
    name: "Suite job (minimum paid)",
    amountCents: centsOfUnits(min),
    amountUnits: min.toString(),
    amountUsd: usdOfUnits(min),
    resource: `${baseUrl}${SUITE_RESOURCE_PATH}`,
    description: `Metered suite job: priced per request (free up to ${SUITE_PRICE.freeCapGb} GB per join-work identity per month, then per GB). This entry shows the minimum paid job, ${usdOfUnits(min)} USD = ${min} atomic USDC units; send { product, dataClass, op, bytes } to get your quote, and pay that.`,
  };
}

export function suiteProbeChallenge(x402: Pick<X402Service, "challengeFor">, baseUrl: string) {
  const min = SUITE_PRICE.minPaidUnits;
  const item = suiteProbeItem(baseUrl);
  const challenge: Challenge = x402.challengeFor(item, {
    code: "payment_required",
    detail: `Suite jobs are metered: POST ${SUITE_RESOURCE_PATH} { product, dataClass, op, bytes } → 200 with the job within the free cap, else 402 with the quote to pay. A paid job costs at least ${usdOfUnits(min)} USD (shown in accepts).`,
  });
  return {
    paymentRequired: challenge.paymentRequired,
    body: {
      ...challenge.body,
      suite_pricing: suitePricingRecord(),
      request: {
        method: "POST",
        path: SUITE_RESOURCE_PATH,
        body: "{ product, dataClass, op, bytes, level?, email?, callback_url?, identity?, quote_id? }",
      },
    },
  };
}

/** POST /api/x402-suite: the agents' way to buy (or start, within the free cap) a suite job. */
export function suitePurchaseRoutes(app: App, deps: { purchase: SuitePurchase; identities: IdentityService }) {
  // An unpaid probe with an empty body gets the 402 (x402 indexers probe that way), not a 400.
  // Both 402 dialects at the edge (src/payments/mpp/http.ts): x402 unchanged, MPP challenges beside it.
  const edge = new PaymentEdge(app.services.mpp, app.services.x402);
  const probe = async (request: FastifyRequest, reply: FastifyReply) => {
    if (paymentHeader(request.headers as Record<string, string | undefined>) !== undefined) return;
    if (mppCredentialHeader(request.headers) !== undefined) return;
    if (!isEmptyBody(request.body)) return;
    const challenge = suiteProbeChallenge(app.services.x402, app.services.config.baseUrl);
    return edge.send402(reply, request, suiteProbeItem(app.services.config.baseUrl), challenge);
  };
  app.register(async (instance) => {
    const scope = instance as unknown as App;
    emptyJsonAsAbsent(scope);
    scope.post(
      SUITE_RESOURCE_PATH,
      {
        // An unpaid probe with an empty body gets the 402 (x402 indexers probe that way), not a 400.
        preValidation: probe,
        schema: {
          summary:
            "Start a metered compression suite job: free within the cap, else a 402 metered quote paid with x402",
          description:
            "The request is quoted (GB = 10^9 bytes). An unpaid request with an empty body (an indexer's probe) gets 402 showing the minimum paid job, the pricing record and how to ask for a quote. Free volume belongs to the caller: 100 GB per join-work identity per calendar month (UTC), else SUITE_ANON_FREE_BYTES_PER_DAY (default 1 GB) per client IP per UTC day. Within it: 200 with `job_id`, `job_token` and where to upload, unless the caller already has its most free jobs queued or running (429 `free_jobs_limit`) or the free queue is full (503 `free_tier_busy`), both with Retry-After. Above it: 402 with the quote in `accepts[]` (amount = the quote's, never the client's) and `quote`; repeat the same request (optionally with `quote_id`) with the proof in PAYMENT-SIGNATURE or X-PAYMENT → 200 with the job once settled, exactly once, and only to the payer (send a payment identifier or Idempotency-Key). 202 + Retry-After while settlement is pending.",
          tags: ["suite", "x402"],
          security: [{}, { x402Payment: [] }] as { [label: string]: string[] }[],
          body: z.object({
            ...suiteRequestFields,
            identity: plainText(200).min(1).optional().describe("a join-work identity token (or X-Identity-Token)"),
            quote_id: plainText(64).optional().describe("the quote to pay (from the 402 or POST /api/ppp-quote)"),
          }),
          response: {
            200: jobPurchaseSchema,
            202: pendingSchema,
            400: problemSchema,
            401: problemSchema,
            402: challengeSchema.extend({ quote: quoteViewSchema.optional() }),
            404: problemSchema,
            409: problemSchema,
            410: problemSchema,
            429: problemSchema,
            503: problemSchema,
          },
        },
      },
      async (request, reply) => {
        const { identity: bodyToken, ...input } = request.body;
        const headerToken = presentedToken(request.headers);
        if (bodyToken !== undefined && headerToken !== null && bodyToken !== headerToken) {
          throw new Problem(400, "identity_conflict", "Two different identity tokens were sent (body and header).");
        }
        const token = bodyToken ?? headerToken;
        const identity = token === null ? null : await deps.identities.verify(token);
        const idem = request.headers["idempotency-key"];
        // The quote a refusal names (an MPP credential's, or the body's) gets fresh challenges of both dialects.
        let presented: Presented = { dialect: "none" };
        const refused = async () => {
          const ref =
            input.quote_id ??
            (presented.dialect === "mpp" && presented.credential.bound?.kind === "quote"
              ? presented.credential.bound.ref
              : undefined);
          return ref ? deps.purchase.itemOfQuote(ref) : undefined;
        };
        presented = await edge.guard(request, refused, async () => edge.read(request));
        const payment =
          presented.dialect === "x402"
            ? presented.header
            : presented.dialect === "mpp"
              ? presented.credential
              : undefined;
        const outcome = await edge.guard(request, refused, () =>
          deps.purchase.x402(
            input,
            payment,
            identity,
            { idempotencyKey: Array.isArray(idem) ? idem[0] : idem },
            { ip: request.ip },
          ),
        );
        switch (outcome.kind) {
          case "free":
            return reply.code(200).header("Cache-Control", "private, no-store").send(outcome.body);
          case "quote_challenge":
            return edge.send402(reply, request, outcome.item, {
              paymentRequired: outcome.challenge.paymentRequired,
              body: { ...outcome.challenge.body, quote: outcome.quote },
            });
          case "challenge":
            return edge.send402(reply, request, undefined, outcome.challenge);
          case "pending":
            return edge.send202(reply, outcome.pending);
          default: {
            const body = outcome.purchase.body;
            const headers = edge.grantedHeaders(presented, outcome.purchase, body.transaction);
            return reply
              .code(200)
              .headers(headers)
              .send(body as never);
          }
        }
      },
    );
  });

  app.post(
    "/api/ppp-checkout",
    {
      schema: {
        summary: "Pay a suite quote by card: a hosted Stripe checkout for exactly the quote's amount",
        description:
          "Returns the checkout `url`. The job is created once, when the payment lands; the success page (and GET /api/checkout/:session_id) then shows `job_id`, `job_token` and the upload URL.",
        tags: ["suite", "payments"],
        body: z.object({
          quote_id: plainText(64).min(1).describe("from POST /api/ppp-quote"),
          email: emailText().optional().describe("receipt address (defaults to the quote's)"),
          callback_url: suiteRequestFields.callback_url,
        }),
        response: {
          200: z.object({ url: z.string(), session_id: z.string(), reused: z.boolean(), quote_id: z.string() }),
          400: problemSchema,
          404: problemSchema,
          409: problemSchema,
          410: problemSchema,
          502: problemSchema,
          503: problemSchema,
        },
      },
    },
    async (request) => deps.purchase.checkout(request.body.quote_id, request.body.email, request.body.callback_url),
  );
}
