import { z } from "zod";
import { problemSchema } from "../../http/problem.js";
import { emailText, idText, plainText } from "../../http/text.js";
import type { App } from "../../http/types.js";
import { orderViewSchema } from "../../orders/routes.js";
import type { CardService } from "./service.js";

export const sessionStatusSchema = z.object({
  session_id: z.string(),
  sku: z.string(),
  rail: z.string(),
  status: z.enum(["open", "awaiting_payment", "paid", "failed", "expired", "mismatch"]),
  amount_cents: z.number().int(),
  order: orderViewSchema.omit({ email: true }).nullable(),
  access_url: z.string().nullable(),
  job: z
    .object({
      job_id: z.string(),
      job_token: z.string(),
      status_url: z.string(),
      upload_url: z.string(),
      output_url: z.string(),
      webhook_secret: z
        .string()
        .optional()
        .describe("with a callback_url: the secret the job's webhook events are signed with (whsec_…)"),
    })
    .nullable()
    .describe("a paid suite quote's job (null for products)"),
  pending_reason: z.string().nullable(),
  receipt: z.string().nullable().describe("the signed purchase receipt (JWS, EdDSA) once paid (docs/receipts.md)"),
});

const webhookAnswer = z.object({
  received: z.literal(true),
  event_id: z.string(),
  type: z.string(),
  duplicate: z.boolean().describe("the event id was received before"),
  handled: z.boolean().describe("this delivery did the work (false: the stored outcome of an earlier delivery)"),
  outcome: z.string(),
});

/** HTTP face of the card rails: hosted checkout, its status, and the Stripe webhook. */
export function cardRoutes(app: App, deps: { card: CardService }) {
  const { card } = deps;

  app.post(
    "/api/checkout",
    {
      schema: {
        summary: "Start a hosted card checkout (Stripe Checkout Session) for one sku",
        description:
          "Answers the hosted checkout URL. Payment methods: Stripe's dynamic payment methods (cards with phone wallets, link, mobile cash and marketplace wallets, US bank debit, instalments), offered when eligible for the amount; STRIPE_PAYMENT_METHODS narrows them. A retry for the same sku and email within 10 minutes answers the same session.",
        tags: ["payments"],
        body: z.object({
          sku: idText(100),
          email: emailText(),
          rail: plainText(64).nullish().describe("`stripe` (the default); other rails have their own endpoints"),
        }),
        response: {
          200: z.object({ url: z.string(), session_id: z.string(), reused: z.boolean() }),
          400: problemSchema,
          404: problemSchema,
          410: problemSchema,
          502: problemSchema,
          503: problemSchema,
        },
      },
    },
    async (request) => card.createCheckout(request.body),
  );

  app.get(
    "/api/checkout/:session_id",
    {
      schema: {
        summary: "State of a checkout session: paid (with order and access URL), awaiting a bank debit, expired…",
        tags: ["payments"],
        params: z.object({ session_id: idText(255) }),
        response: {
          200: sessionStatusSchema,
          400: problemSchema,
          404: problemSchema,
          502: problemSchema,
          503: problemSchema,
        },
      },
    },
    async (request, reply) => {
      const status = await card.status(request.params.session_id);
      reply.header("Cache-Control", "no-store");
      const { order, ...rest } = status;
      if (!order) return { ...rest, order: null };
      const { email: _email, ...publicOrder } = order;
      return { ...rest, order: publicOrder };
    },
  );

  // The webhook needs the exact received bytes: a buffer parser scoped to this route only.
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "buffer" }, (_request, body, done) => done(null, body));
    scope.post(
      "/api/stripe/webhook",
      {
        schema: {
          summary: "Stripe webhook (signed with STRIPE_WEBHOOK_SECRET; events stored by id, each handled once)",
          tags: ["payments"],
          headers: z.object({ "stripe-signature": z.string().max(4096).optional() }),
          response: { 200: webhookAnswer, 400: problemSchema, 502: problemSchema, 503: problemSchema },
        },
      },
      async (request) => {
        const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const signature = request.headers["stripe-signature"];
        const result = await card.receiveWebhook(raw, typeof signature === "string" ? signature : undefined);
        return { received: true as const, ...result };
      },
    );
  });
}
