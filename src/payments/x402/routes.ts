import { z } from "zod";
import type { Config } from "../../config.js";
import type { AdminGuard } from "../../http/admin-auth.js";
import { badRequest, problemSchema } from "../../http/problem.js";
import { controlFree, plainText } from "../../http/text.js";
import type { App } from "../../http/types.js";
import { productItem } from "../../orders/priced-item.js";
import { PaymentEdge } from "../mpp/http.js";
import { networkLabel, SOLANA_MAINNET } from "../networks.js";
import { ATOMIC_UNITS_NOTE, CLIENT_CAP_NOTE, PAID_OPERATIONS } from "./discovery.js";
import { x402Rails } from "./rails.js";
import { NO_FEE_PAYER_NOTE } from "./requirements.js";
import type { PurchaseRequest, X402Service } from "./service.js";

const acceptSchema = z
  .object({
    scheme: z.literal("exact"),
    network: z.string().describe("x402 v1 network name (`base`, `solana`, …); the v2 header carries the CAIP-2 id"),
    maxAmountRequired: z.string().describe("atomic USDC units (6 decimals), decimal string"),
    amount: z.string(),
    asset: z.string(),
    payTo: z.string(),
    resource: z.string(),
    description: z.string(),
    mimeType: z.string(),
    maxTimeoutSeconds: z.number().int(),
    extra: z.record(z.string(), z.string()),
    decimals: z.number().int(),
    chain: z.enum(["solana", "base"]),
  })
  .catchall(z.unknown());

export const challengeSchema = z
  .object({
    x402Version: z.literal(1),
    error: z.string(),
    accepts: z.array(acceptSchema),
  })
  .catchall(z.unknown())
  .describe("x402 challenge (v1-style body; the v2 PaymentRequired is base64 in the PAYMENT-REQUIRED header)");

export const purchaseSchema = z.object({
  order_id: z.string(),
  access_url: z.string().describe("opens the entitlement: JSON for agents, HTML for browsers"),
  sku: z.string(),
  amount_usd: z.string(),
  rail: z.string(),
  transaction: z.string().describe("settlement transaction (Base tx hash or Solana signature)"),
  receipt: z
    .string()
    .optional()
    .describe(
      "the purchase receipt signed by the service: a compact JWS (EdDSA), verifiable offline against /.well-known/jwks.json (docs/receipts.md)",
    ),
});

const pendingSchema = z
  .object({ status: z.literal(202), code: z.string(), detail: z.string(), retry_after: z.number().int() })
  .catchall(z.unknown())
  .describe("settlement outcome not known yet: retry with the SAME proof after Retry-After seconds; never pay again");

export const purchaseBodySchema = z
  .object({
    sku: plainText(100)
      .trim()
      .min(1)
      .optional()
      .describe("sku or alias; without it the answer is the catalog-wide 402"),
    email: controlFree(z.email().max(254)).nullish(),
    note: plainText(500)
      .nullish()
      .describe("free text; `agent:<id>` records the buying agent's id (self-asserted: nobody checks it)"),
  })
  .nullish();

export function x402PaymentInfo(config: Config) {
  return {
    protocols: ["x402"],
    pricing: { mode: "fixed-per-sku", currency: "USD", catalog: `${config.baseUrl}/api/x402-products` },
    headers: {
      request: ["PAYMENT-SIGNATURE", "X-PAYMENT"],
      challenge: "PAYMENT-REQUIRED",
      response: ["PAYMENT-RESPONSE", "X-PAYMENT-RESPONSE"],
    },
    rails: x402Rails(config).map((r) => `${r.network} (${networkLabel(r.network)} USDC)`),
    units: ATOMIC_UNITS_NOTE,
    client_cap: CLIENT_CAP_NOTE,
  };
}

/**
 * An unpaid POST with an empty body must get the 402 (x402 indexers probe paid routes that way),
 * even when it says Content-Type: application/json or text/plain: in this scope an empty body
 * parses as absent (null) instead of failing with 400.
 */
export function emptyJsonAsAbsent(scope: App): void {
  scope.removeContentTypeParser("application/json");
  scope.addContentTypeParser("application/json", { parseAs: "string" }, (_req, body, done) => {
    const text = typeof body === "string" ? body : body.toString("utf8");
    if (text.trim() === "") return done(null, null);
    try {
      done(null, JSON.parse(text));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  // An empty text body is absent too; a non-empty one stays a string (and fails validation: 400).
  scope.removeContentTypeParser("text/plain");
  scope.addContentTypeParser("text/plain", { parseAs: "string" }, (_req, body, done) => {
    const text = typeof body === "string" ? body : body.toString("utf8");
    done(null, text.trim() === "" ? null : text);
  });
}

export function x402Routes(app: App, deps: { x402: X402Service; config: Config; requireAdmin?: AdminGuard }) {
  const { x402, config } = deps;
  const catalog = app.services.catalog;
  // Both 402 dialects at the edge: x402 as the x402 answers build it, MPP beside it (src/payments/mpp/http.ts).
  const edge = new PaymentEdge(app.services.mpp, x402);
  const cheapest = () =>
    catalog
      .list()
      .map((p) => productItem(p, x402.answers.resourceUrl()))
      .sort((x, y) => (BigInt(x.amountUnits) < BigInt(y.amountUnits) ? -1 : 1))[0];

  app.register(async (scope) => {
    emptyJsonAsAbsent(scope);

    // Declared apart from the call so the OpenAPI extension key `x-payment-info` can ride along
    // without losing the route's zod typing (@fastify/swagger copies `x-*` keys to the operation).
    const schema = {
      summary: "Buy one SKU with x402 (402 challenge, then retry with the payment proof)",
      description:
        "Without a payment header: 402 with `accepts[]` (one entry per configured rail) and the v2 `PAYMENT-REQUIRED` header; an empty body gets the catalog-wide challenge. With the proof in `PAYMENT-SIGNATURE` or `X-PAYMENT`: verified, settled on chain, then 200 with the order. 202 + Retry-After when the settlement outcome is not known yet (retry with the same proof; never pay twice).",
      tags: ["x402"],
      security: [{}, { x402Payment: [] }] as { [label: string]: string[] }[],
      body: purchaseBodySchema,
      "x-payment-info": x402PaymentInfo(config),
      response: {
        200: purchaseSchema,
        202: pendingSchema,
        400: problemSchema,
        402: challengeSchema,
        404: problemSchema,
        409: problemSchema,
        410: problemSchema,
        503: problemSchema,
      },
    };
    scope.post("/api/x402-products", { schema }, async (request, reply) => {
      const body: PurchaseRequest = request.body ?? {};
      const idem = request.headers["idempotency-key"];
      const secrets = { idempotencyKey: Array.isArray(idem) ? idem[0] : idem };
      // The item a 402 names: the body's product, else (catalog-wide) the cheapest, as x402's header does.
      const shown = () => (body.sku ? productItem(catalog.resolve(body.sku), x402.answers.resourceUrl()) : cheapest());
      const presented = await edge.guard(request, shown, async () => edge.read(request));
      const outcome = await edge.guard(request, shown, async () => {
        if (presented.dialect !== "mpp") {
          return x402.purchase(body, presented.dialect === "x402" ? presented.header : undefined, secrets);
        }
        // MPP: the challenge names its product (HMAC-bound), so an empty body buys what it offered.
        const { credential } = presented;
        const sku = body.sku ?? (credential.bound?.kind === "product" ? credential.bound.ref : undefined);
        if (!sku) throw badRequest("sku_required", 'The body must name the product: { "sku": "<sku or alias>" }.');
        const item = productItem(catalog.resolve(sku), x402.answers.resourceUrl());
        return credential.buy(item, body, secrets);
      });
      if (outcome.kind === "challenge") return edge.send402(reply, request, shown(), outcome.challenge);
      if (outcome.kind === "pending") return edge.send202(reply, outcome.pending);
      const headers = edge.grantedHeaders(presented, outcome.purchase, outcome.purchase.body.transaction);
      return reply.code(200).headers(headers).send(outcome.purchase.body);
    });
  });

  app.get(
    "/.well-known/x402",
    {
      schema: {
        summary: "x402 resources offered by this origin (x402scan format)",
        tags: ["x402", "discovery"],
        response: {
          200: z.object({
            version: z.literal(1),
            resources: z.array(z.string()),
            instructions: z.string(),
          }),
        },
      },
    },
    async () => {
      // Only operations this instance actually serves (the suite route may not be deployed).
      const ops = PAID_OPERATIONS.filter((op) => app.hasRoute({ method: op.method, url: op.path }));
      return {
        version: 1 as const,
        resources: ops.map((op) => `${config.baseUrl}${op.path}`),
        instructions: [
          "# Paying Lab Phi with x402",
          "",
          ...ops.map((op) => `- \`${op.method} ${op.path}\` — ${op.summary} Body: ${op.body}. Pricing: ${op.pricing}.`),
          "",
          `Rails: USDC on Base (\`${x402Rails(config).find((r) => r.chain === "base")?.network}\`, EIP-3009 \`exact\`, or the hash of a confirmed USDC transfer) and USDC on Solana (\`${SOLANA_MAINNET}\`, a serialized TransferChecked transaction). Networks are CAIP-2 ids; an x402 v1 body names them \`base\` and \`solana\`.`,
          "Send the proof in `PAYMENT-SIGNATURE` (v2) or `X-PAYMENT` (v1/v2); the 402 carries `PAYMENT-REQUIRED`, success carries `PAYMENT-RESPONSE` and `X-PAYMENT-RESPONSE`.",
          x402.settlement.feePayer()
            ? `Solana: partially sign for our fee payer ${x402.settlement.feePayer()} (extra.feePayer), or sign fully.`
            : `Solana: ${NO_FEE_PAYER_NOTE}`,
          ATOMIC_UNITS_NOTE,
          CLIENT_CAP_NOTE,
          x402.configured() ? "" : "No rail is configured on this instance right now: paid operations answer 503.",
        ]
          .filter((l, i, all) => l !== "" || i < all.length - 1)
          .join("\n"),
      };
    },
  );

  const requireAdmin = deps.requireAdmin;
  if (!requireAdmin) return;
  const proofState = z.enum(["reserved", "settling", "settled", "granted", "failed", "pending_unknown"]);
  app.get(
    "/api/admin/x402/proofs",
    {
      preHandler: (request) => requireAdmin(request),
      schema: {
        summary: "The x402 proof ledger (operator): states, settlement transactions, errors",
        tags: ["admin", "x402"],
        security: [{ adminBearer: [] }],
        querystring: z.object({
          state: proofState.optional(),
          limit: z.coerce.number().int().min(1).max(500).default(50),
          offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
        }),
        response: {
          200: z.object({
            total: z.number().int(),
            items: z.array(
              z.object({
                proof_key: z.string(),
                kind: z.string(),
                rail: z.string(),
                network: z.string(),
                sku: z.string(),
                amount_units: z.string(),
                payer: z.string().nullable(),
                state: proofState,
                settlement_tx: z.string().nullable(),
                expected_tx: z.string().nullable(),
                order_id: z.string().nullable(),
                error_reason: z.string().nullable(),
                error_detail: z.string().nullable(),
                attempts: z.number().int(),
                created_at: z.string(),
                updated_at: z.string(),
                settled_at: z.string().nullable(),
              }),
            ),
          }),
          401: problemSchema,
          503: problemSchema,
        },
      },
    },
    async (request) => x402.listProofs(request.query),
  );

  app.post(
    "/api/admin/x402/reconcile",
    {
      preHandler: (request) => requireAdmin(request),
      schema: {
        summary: "Run an x402 reconciliation pass now (operator)",
        tags: ["admin", "x402"],
        security: [{ adminBearer: [] }],
        body: z.object({}).nullish(),
        response: {
          200: z.object({ examined: z.number().int(), granted: z.number().int(), failed: z.number().int() }),
          401: problemSchema,
          503: problemSchema,
        },
      },
    },
    async () => x402.reconcile({ startup: false }),
  );
}
