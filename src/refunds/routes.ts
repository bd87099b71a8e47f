import { z } from "zod";
import { type AdminGuard, adminActor } from "../http/admin-auth.js";
import { problemSchema } from "../http/problem.js";
import { idText, plainText } from "../http/text.js";
import type { App } from "../http/types.js";
import type { RefundService } from "./service.js";
import type { RefundRow } from "./tables.js";

const STATES = ["requested", "approved", "signed", "sent", "done", "owed", "paid", "rejected"] as const;

export const refundViewSchema = z.object({
  refund_id: z.string(),
  order_id: z.string(),
  state: z
    .enum(STATES)
    .describe(
      "requested (awaiting the operator) → approved → signed (transaction stored) → sent → done; owed → paid (by hand); rejected",
    ),
  method: z.enum(["evm", "solana", "card", "manual"]),
  origin: z.enum(["operator", "buyer"]),
  rail: z.string(),
  reason: z.string(),
  payer: z.string().nullable().describe("the paying wallet the refund goes back to"),
  network: z.string().nullable(),
  asset: z.string().nullable(),
  amount_units: z.string().nullable().describe("token atomic units, the payment's exact amount"),
  amount_cents: z.number().int(),
  transaction: z.string().nullable(),
  error: z.string().nullable(),
  created_at: z.string(),
  approved_at: z.string().nullable(),
  done_at: z.string().nullable(),
});

const challengeSchema = z.object({
  nonce: z.string(),
  order_id: z.string(),
  chain: z.enum(["evm", "solana"]),
  address: z.string().describe("the paying wallet: only its signature is accepted"),
  message: z.string().describe("the exact text to sign"),
  expires_at: z.string(),
  how: z.string(),
});

const adminErrors = {
  401: problemSchema,
  404: problemSchema,
  409: problemSchema,
  502: problemSchema,
  503: problemSchema,
};

/** Refund routes: the operator's (admin), the buyer's signed request, and the access-open hook. */
export function refundRoutes(app: App, deps: { refunds: RefundService; requireAdmin: AdminGuard }) {
  const { refunds } = deps;
  /** 200 when the refund is final (done, owed, paid, rejected, requested), 202 while money moves. */
  const answer = (row: RefundRow, reply: { code(c: number): unknown }) => {
    reply.code(["approved", "signed", "sent"].includes(row.state) ? 202 : 200);
    return refunds.view(row);
  };

  // "Unused" for the auto-approve policy: the first 200 of an order's access link is recorded.
  app.addHook("onResponse", async (request, reply) => {
    if (request.routeOptions.url !== "/access/:token" || reply.statusCode !== 200) return;
    const token = (request.params as { token?: string }).token;
    if (!token) return;
    try {
      const order = await refunds.requests.orderOf(token);
      if (order) await refunds.requests.recordOpen(order);
    } catch (err) {
      request.log.warn({ err }, "refunds: could not record an access opening");
    }
  });

  // Operator routes authenticate on request, before their body is read or validated.
  app.post(
    "/api/admin/orders/:id/refund",
    {
      onRequest: (request) => deps.requireAdmin(request),
      schema: {
        summary: "Refund an order (operator): on chain to the payer, through Stripe, or recorded as owed",
        description:
          "Exactly one refund per order. x402/MPP payments: the same atomic amount of the same token goes back to the paying wallet from the refund wallet (REFUND_EVM_KEY, REFUND_SVM_KEY); without a key the refund is `owed`. Cards: Stripe refund. Manual claims: `owed` (paid by hand). The entitlement is revoked. 202 while the transaction is not yet confirmed (reconciled).",
        tags: ["admin"],
        security: [{ adminBearer: [] }],
        params: z.object({ id: idText(64) }),
        body: z.object({ reason: plainText(500).optional() }).nullish(),
        response: { 200: refundViewSchema, 202: refundViewSchema, ...adminErrors },
      },
    },
    async (request, reply) =>
      answer(
        await refunds.refundOrder(
          request.params.id,
          adminActor(request),
          request.body?.reason ?? "refunded by operator",
        ),
        reply,
      ),
  );

  app.get(
    "/api/admin/refunds",
    {
      onRequest: (request) => deps.requireAdmin(request),
      schema: {
        summary: "List refunds (operator), e.g. ?state=owed for those to pay by hand",
        tags: ["admin"],
        security: [{ adminBearer: [] }],
        querystring: z.object({
          state: z.enum(STATES).optional(),
          limit: z.coerce.number().int().min(1).max(200).default(50),
          offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
        }),
        response: { 200: z.object({ refunds: z.array(refundViewSchema) }), 401: problemSchema, 503: problemSchema },
      },
    },
    async (request) => ({ refunds: (await refunds.list(request.query)).map((r) => refunds.view(r)) }),
  );

  app.post(
    "/api/admin/refunds/:id/approve",
    {
      onRequest: (request) => deps.requireAdmin(request),
      schema: {
        summary: "Approve a buyer's refund request (operator); it is then executed",
        tags: ["admin"],
        security: [{ adminBearer: [] }],
        params: z.object({ id: idText(64) }),
        response: { 200: refundViewSchema, 202: refundViewSchema, ...adminErrors },
      },
    },
    async (request, reply) => answer(await refunds.approve(request.params.id, adminActor(request)), reply),
  );

  app.post(
    "/api/admin/refunds/:id/reject",
    {
      onRequest: (request) => deps.requireAdmin(request),
      schema: {
        summary: "Reject a buyer's refund request (operator)",
        tags: ["admin"],
        security: [{ adminBearer: [] }],
        params: z.object({ id: idText(64) }),
        body: z.object({ reason: plainText(500).optional() }).nullish(),
        response: { 200: refundViewSchema, ...adminErrors },
      },
    },
    async (request) =>
      refunds.view(
        await refunds.reject(request.params.id, adminActor(request), request.body?.reason ?? "rejected by operator"),
      ),
  );

  app.post(
    "/api/admin/refunds/:id/paid",
    {
      onRequest: (request) => deps.requireAdmin(request),
      schema: {
        summary: "Mark an owed refund paid by hand, with its transaction reference (operator)",
        tags: ["admin"],
        security: [{ adminBearer: [] }],
        params: z.object({ id: idText(64) }),
        body: z.object({ reference: plainText(200).pipe(z.string().min(4)) }),
        response: { 200: refundViewSchema, ...adminErrors },
      },
    },
    async (request) =>
      refunds.view(await refunds.markPaid(request.params.id, adminActor(request), request.body.reference)),
  );

  app.post(
    "/api/orders/:id/refund-request/challenge",
    {
      schema: {
        summary: "Start a buyer's refund request: get the message the paying wallet must sign",
        tags: ["orders", "x402"],
        params: z.object({ id: idText(64) }),
        response: {
          201: challengeSchema,
          400: problemSchema,
          403: problemSchema,
          404: problemSchema,
          409: problemSchema,
          410: problemSchema,
        },
      },
    },
    async (request, reply) => {
      reply.code(201).header("Cache-Control", "no-store");
      return refunds.requests.challenge(request.params.id);
    },
  );

  app.post(
    "/api/orders/:id/refund-request",
    {
      schema: {
        summary: "Request a refund, signed by the paying wallet (within the refund window)",
        description:
          "The refund goes back to the paying wallet only. Answers `requested` (the operator decides), or executes at once when the auto-approve policy covers the order (unused, young enough).",
        tags: ["orders", "x402"],
        params: z.object({ id: idText(64) }),
        body: z.object({
          nonce: z.string().regex(/^[0-9a-f]{32}$/, "the challenge nonce"),
          signature: z
            .string()
            .min(64)
            .max(8192)
            .regex(/^[0-9A-Za-z+/=x]+$/, "hex (EVM) or base58/base64 (Solana)"),
          reason: plainText(500).optional(),
        }),
        response: {
          200: refundViewSchema,
          202: refundViewSchema,
          400: problemSchema,
          401: problemSchema,
          403: problemSchema,
          404: problemSchema,
          409: problemSchema,
          410: problemSchema,
          502: problemSchema,
        },
      },
    },
    async (request, reply) => {
      reply.header("Cache-Control", "private, no-store");
      return answer(await refunds.requests.request(request.params.id, request.body), reply);
    },
  );
}
