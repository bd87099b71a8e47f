import type { FastifyRequest } from "fastify";
import type { Kysely } from "kysely";
import { z } from "zod";
import type { Database } from "../db/schema.js";
import { type AdminGuard, adminActor } from "../http/admin-auth.js";
import { problemSchema } from "../http/problem.js";
import { idText, plainText, searchText } from "../http/text.js";
import type { App } from "../http/types.js";
import { orderViewSchema } from "../orders/routes.js";
import type { OrderService } from "../orders/service.js";
import type { CardService } from "../payments/card/service.js";
import type { ClaimService } from "../payments/manual/service.js";
import { auditStore } from "./store.js";

const OPERATOR_NAME = /^[A-Za-z0-9._@-]{1,64}$/;

/**
 * Who did it: the token fingerprint, plus the operator's name when the client sends
 * `X-Operator` (the CLI sends $LABPHI_OPERATOR or the login name).
 */
export function operatorActor(request: FastifyRequest): string {
  const base = adminActor(request);
  const name = request.headers["x-operator"];
  return typeof name === "string" && OPERATOR_NAME.test(name) ? `${base}:${name}` : base;
}

const page = {
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
  search: searchText(200).optional().describe("case-insensitive substring"),
};

const pageOf = <T extends z.ZodType>(item: T) =>
  z.object({ total: z.number().int(), limit: z.number().int(), offset: z.number().int(), items: z.array(item) });

const claimViewSchema = z.object({
  claim_id: z.string(),
  state: z.enum(["submitted", "approved", "rejected", "revoked", "closed"]),
  rail: z.string(),
  sku: z.string(),
  email: z.string(),
  amount_cents: z.number().int(),
  amount_usd: z.string(),
  tx: z.string().nullable(),
  company: z.string().nullable(),
  billing_address: z.string().nullable(),
  currency: z.string().nullable(),
  terms: z.string().nullable(),
  order_id: z.string().nullable(),
  decided_by: z.string().nullable(),
  decided_at: z.string().nullable(),
  reason: z.string().nullable(),
  created_at: z.string(),
  sender: z.string().nullable().describe("the wallet that sent the transfer"),
  sender_source: z.enum(["chain", "claimant"]).nullable().describe("read from the chain, or the claimant's word"),
  sender_proven: z.boolean().describe("the claimant signed for the sender (proved control of the paying wallet)"),
  same_transfer_claims: z.array(z.string()).optional().describe("other claims naming the same transfer"),
});

const adminOrderSchema = orderViewSchema.extend({ access_url: z.string() });

const webhookEventSchema = z.object({
  id: z.string(),
  provider: z.string(),
  type: z.string(),
  object_id: z.string().nullable(),
  livemode: z.boolean(),
  payload_sha256: z.string(),
  received_at: z.string(),
  processed_at: z.string().nullable(),
  outcome: z.string().nullable(),
  attempts: z.number().int(),
});

const auditEntrySchema = z.object({
  id: z.string(),
  at: z.string(),
  actor: z.string(),
  action: z.string(),
  subject: z.string(),
  detail: z.record(z.string(), z.unknown()),
});

const guarded = { 400: problemSchema, 401: problemSchema, 503: problemSchema };
const reasonBody = z.object({ reason: plainText(500).min(1).optional() }).nullish();

/** Operator API: every route needs `Authorization: Bearer <ADMIN_TOKEN>`; every action is audited. */
export function adminRoutes(
  app: App,
  deps: {
    db: Kysely<Database>;
    orders: OrderService;
    claims: ClaimService;
    card: CardService;
    requireAdmin: AdminGuard;
  },
) {
  const { orders, claims, card } = deps;
  const common = { preHandler: (request: FastifyRequest) => deps.requireAdmin(request) };
  const meta = { tags: ["admin"], security: [{ adminBearer: [] }] };

  app.get(
    "/api/admin/orders",
    {
      ...common,
      schema: {
        ...meta,
        summary: "List orders (search: e-mail, order id, agent id, transaction; filters: status, sku, rail)",
        querystring: z.object({
          ...page,
          status: z.enum(["active", "revoked", "refunded"]).optional(),
          sku: plainText(100).optional(),
          rail: plainText(64).optional(),
        }),
        response: { 200: pageOf(adminOrderSchema), ...guarded },
      },
    },
    async (request) => {
      const q = request.query;
      const { total, items } = await orders.list(q);
      return {
        total,
        limit: q.limit,
        offset: q.offset,
        items: items.map((o) => ({ ...orders.view(o), access_url: orders.accessUrl(o.id) })),
      };
    },
  );

  app.get(
    "/api/admin/orders/:id",
    {
      ...common,
      schema: {
        ...meta,
        summary: "One order with its access URL",
        params: z.object({ id: idText(64) }),
        response: { 200: adminOrderSchema, 404: problemSchema, ...guarded },
      },
    },
    async (request) => {
      const order = await orders.get(request.params.id);
      return { ...orders.view(order), access_url: orders.accessUrl(order.id) };
    },
  );

  app.post(
    "/api/admin/orders/:id/refunded",
    {
      ...common,
      schema: {
        ...meta,
        summary: "Mark an order refunded (refund made outside the service): its access and licence stop working",
        params: z.object({ id: idText(64) }),
        body: reasonBody,
        response: { 200: orderViewSchema, 404: problemSchema, ...guarded },
      },
    },
    async (request) => {
      const order = await orders.revoke(
        request.params.id,
        operatorActor(request),
        request.body?.reason ?? "refunded by operator",
        "refunded",
      );
      return orders.view(order);
    },
  );

  app.get(
    "/api/admin/claims",
    {
      ...common,
      schema: {
        ...meta,
        summary: "List manual-payment claims (search: claim id, e-mail, tx, company, sku)",
        querystring: z.object({
          ...page,
          state: z.enum(["submitted", "approved", "rejected", "revoked", "closed"]).optional(),
          rail: plainText(64).optional(),
        }),
        response: { 200: pageOf(claimViewSchema), ...guarded },
      },
    },
    async (request) => {
      const q = request.query;
      const { total, items } = await claims.list(q);
      return { total, limit: q.limit, offset: q.offset, items: items.map((c) => claims.view(c)) };
    },
  );

  app.get(
    "/api/admin/claims/:id",
    {
      ...common,
      schema: {
        ...meta,
        summary: "One claim",
        params: z.object({ id: idText(64) }),
        response: { 200: claimViewSchema, 404: problemSchema, ...guarded },
      },
    },
    async (request) => claims.operatorView(request.params.id),
  );

  app.post(
    "/api/admin/claims/:id/approve",
    {
      ...common,
      schema: {
        ...meta,
        summary: "Approve a claim: creates the order (same grant as every rail) and answers its access URL",
        params: z.object({ id: idText(64) }),
        body: z.object({ note: plainText(500).optional() }).nullish(),
        response: {
          200: z.object({
            claim: claimViewSchema,
            order: orderViewSchema,
            order_id: z.string(),
            access_url: z.string(),
            created: z.boolean(),
          }),
          404: problemSchema,
          409: problemSchema,
          ...guarded,
        },
      },
    },
    async (request) => {
      const a = await claims.approve(request.params.id, operatorActor(request), request.body?.note);
      return {
        claim: a.claim,
        order: a.order,
        order_id: a.order.order_id,
        access_url: a.access_url,
        created: a.created,
      };
    },
  );

  app.post(
    "/api/admin/claims/:id/check",
    {
      ...common,
      schema: {
        ...meta,
        summary: "Check a claim's transaction on chain (USDC on Base, advisory) before approving",
        params: z.object({ id: idText(64) }),
        response: {
          200: z.object({
            claim_id: z.string(),
            status: z.enum(["ok", "pending", "failed", "unavailable"]),
            reason: z.string().nullable(),
            detail: z.string(),
            network: z.string().nullable(),
            expected_amount: z.string().nullable().describe("atomic units (6 decimals)"),
            asset: z.string().nullable(),
            pay_to: z.string().nullable(),
          }),
          404: problemSchema,
          ...guarded,
        },
      },
    },
    async (request) => claims.chainCheck(request.params.id),
  );

  app.post(
    "/api/admin/claims/:id/reject",
    {
      ...common,
      schema: {
        ...meta,
        summary: "Reject a submitted claim",
        params: z.object({ id: idText(64) }),
        body: reasonBody,
        response: { 200: claimViewSchema, 404: problemSchema, 409: problemSchema, ...guarded },
      },
    },
    async (request) =>
      claims.reject(request.params.id, operatorActor(request), request.body?.reason ?? "rejected by operator"),
  );

  app.post(
    "/api/admin/claims/:id/revoke",
    {
      ...common,
      schema: {
        ...meta,
        summary: "Revoke an approved claim and its order's entitlement",
        params: z.object({ id: idText(64) }),
        body: reasonBody,
        response: { 200: claimViewSchema, 404: problemSchema, 409: problemSchema, ...guarded },
      },
    },
    async (request) =>
      claims.revoke(request.params.id, operatorActor(request), request.body?.reason ?? "revoked by operator"),
  );

  app.get(
    "/api/admin/webhook-events",
    {
      ...common,
      schema: {
        ...meta,
        summary: "Received webhook events with what handling them did (search: event id, object id, outcome)",
        querystring: z.object({
          ...page,
          type: plainText(100).optional(),
          unprocessed: z.enum(["true", "false"]).optional(),
        }),
        response: { 200: pageOf(webhookEventSchema), ...guarded },
      },
    },
    async (request) => {
      const q = request.query;
      const { total, items } = await card.listEvents({ ...q, unprocessed: q.unprocessed === "true" });
      return {
        total,
        limit: q.limit,
        offset: q.offset,
        items: items.map((e) => ({ ...e, livemode: e.livemode === 1 })),
      };
    },
  );

  app.get(
    "/api/admin/audit",
    {
      ...common,
      schema: {
        ...meta,
        summary: "The append-only audit log: who did what to which subject, and when (newest first)",
        querystring: z.object({
          ...page,
          actor: plainText(200).optional(),
          action: plainText(100).optional(),
          subject: plainText(200).optional(),
        }),
        response: { 200: pageOf(auditEntrySchema), ...guarded },
      },
    },
    async (request) => {
      const q = request.query;
      const { total, items } = await auditStore.list(deps.db, q);
      return {
        total,
        limit: q.limit,
        offset: q.offset,
        items: items.map((a) => ({ ...a, detail: parseDetail(a.detail) })),
      };
    },
  );
}

function parseDetail(text: string): Record<string, unknown> {
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
  } catch {
    return { raw: text };
  }
}
