import type { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { Problem } from "../../http/problem.js";
import { controlFree, plainText } from "../../http/text.js";
import { type PricedItem, productItem } from "../../orders/priced-item.js";
import { parsePaymentPayload } from "../../payments/x402/proof.js";
import type { McpDeps } from "../deps.js";
import {
  assertPayloadObject,
  MPP_RECEIPT_META,
  PAYMENT_RESPONSE_META,
  type PaymentHint,
  paymentRequiredResult,
  paymentRequiredSchema,
  pendingResult,
  pendingSchema,
  presentedPayment,
  refusedResult,
  withMpp,
} from "../payment.js";
import { asProblem, okResult, problemResult, toolProblemSchema } from "../results.js";

/**
 * `buy`: one product paid over the x402 MCP transport (x402 specs/transports-v2/mcp.md). Without
 * `_meta["x402/payment"]` the call answers a tool error whose structured content is the x402 v2
 * PaymentRequired (the same requirements as the HTTP 402's PAYMENT-REQUIRED header), with the
 * same object as JSON in `content[0].text` (the spec's binding) and a human line naming the checkout page. With it, the
 * payload goes through X402Service.purchase, the same exactly-once, payer-bound path as
 * POST /api/x402-products (the payment identifier travels inside the payload), and the order comes
 * back with the settlement response in `_meta["x402/payment-response"]`. The payment-required,
 * refused and pending results come from the one builder shared with `buy_suite` (src/mcp/payment.ts).
 */

export const orderSchema = z.looseObject({
  order_id: z.string(),
  access_url: z.string().describe("opens the entitlement (JSON for agents, HTML for browsers)"),
  sku: z.string(),
  amount_usd: z.string(),
  rail: z.string(),
  transaction: z.string().describe("settlement transaction (Base tx hash or Solana signature)"),
  created: z.boolean().describe("false when this answer repeats the order of an already redeemed payment"),
});

export const buyOutputSchema = z.union([orderSchema, paymentRequiredSchema, pendingSchema, toolProblemSchema]);

export const IDEMPOTENCY = /^[A-Za-z0-9_-]{16,128}$/;

export function registerBuyTool(server: McpServer, deps: McpDeps): void {
  const { x402, catalog, config, onError, mpp } = deps;
  server.registerTool(
    "buy",
    {
      title: "Buy a product (x402)",
      description:
        'Buys one product with USDC over x402 (Base or Solana). Call it without payment to get the x402 PaymentRequired (a tool error listing accepts); pay one entry with an x402 client and call again with the same arguments and the PaymentPayload in _meta["x402/payment"]. The order (order_id, access_url) comes back with _meta["x402/payment-response"]. Add the x402 payment-identifier extension to the payload: a retry of the same payment with it returns the same order; without it a replayed payment is refused. Never pay twice for one call: after a timeout or a pending answer, retry with the SAME payment.',
      inputSchema: z.object({
        sku: plainText(100).trim().min(1).describe("sku or alias (see the catalog tool)"),
        email: controlFree(z.email().max(254)).optional().describe("optional receipt address"),
        note: plainText(500).optional().describe("free text; `agent:<id>` records the buying agent's id"),
        idempotency_key: z
          .string()
          .regex(IDEMPOTENCY)
          .optional()
          .describe("alternative to the payment-identifier extension: 16-128 of A-Z a-z 0-9 _ -, kept secret"),
      }),
      outputSchema: buyOutputSchema,
      annotations: { readOnlyHint: false, idempotentHint: true, openWorldHint: true },
    },
    async (args, ctx) => {
      const { sku, email, note, idempotency_key } = args;
      const hint: PaymentHint = {
        otherwise: `or buy in a browser: ${config.baseUrl}/pay?sku=${encodeURIComponent(sku)}`,
      };
      let item: PricedItem | undefined;
      try {
        // An unknown sku is a problem before any challenge (the HTTP route's catalog-wide 402 has no tool form).
        const product = catalog.resolve(sku);
        item = productItem(product, x402.answers.resourceUrl());
        const { x402: payment, credential } = presentedPayment(ctx.mcpReq._meta, deps);
        const required = (challenge: Parameters<typeof paymentRequiredResult>[0]) =>
          withMpp(deps, paymentRequiredResult(challenge, hint), item);
        if (credential !== undefined && mpp) {
          // MPP over MCP: the same verification and ledger as the HTTP credential.
          const verified = mpp.verifyObject(credential);
          const outcome = await verified.buy(
            item,
            { email: email ?? null, note: note ?? null },
            { idempotencyKey: idempotency_key },
          );
          if (outcome.kind === "challenge") return required(outcome.challenge);
          if (outcome.kind === "pending") return pendingResult(outcome.pending.body);
          const { body, settle, created } = outcome.purchase;
          const receipt = { ...mpp.receiptOf(verified, body.transaction), challengeId: verified.challenge.id };
          return okResult(
            { ...body, created },
            { _meta: { [PAYMENT_RESPONSE_META]: settle, [MPP_RECEIPT_META]: receipt } },
          );
        }
        if (payment === undefined) return required(x402.challenge(product));
        assertPayloadObject(payment);
        // The payload is decoded as a value, with the same checks and size limit as the HTTP payment header.
        const proof = parsePaymentPayload(payment, config.x402.baseChainId);
        const outcome = await x402.buyProof(item, { email: email ?? null, note: note ?? null }, proof, {
          idempotencyKey: idempotency_key,
        });
        if (outcome.kind === "challenge") return required(outcome.challenge);
        if (outcome.kind === "pending") return pendingResult(outcome.pending.body);
        const { body, settle, created } = outcome.purchase;
        return okResult({ ...body, created }, { _meta: { [PAYMENT_RESPONSE_META]: settle } });
      } catch (err) {
        // A refused payment (402) carries the unchanged requirements: the x402 answer, with the reason
        // (and MPP's fresh challenges beside it).
        const refused = refusedResult(deps, err, item, hint);
        if (refused) return refused;
        if (!(err instanceof Problem)) onError?.(err);
        return problemResult(asProblem(err));
      }
    },
  );
}
