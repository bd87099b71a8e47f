import type { CallToolResult, McpServer } from "@modelcontextprotocol/server";
import type { PaymentRequired } from "@x402/core/types";
import { z } from "zod";
import { Problem } from "../../http/problem.js";
import { controlFree, plainText } from "../../http/text.js";
import { productItem } from "../../orders/priced-item.js";
import { type Challenge, PaymentRefused } from "../../payments/x402/answers.js";
import { parsePaymentPayload } from "../../payments/x402/proof.js";
import type { McpDeps } from "../deps.js";
import { asProblem, okResult, problemResult, toolProblemSchema } from "../results.js";

/**
 * `buy`: one product paid over the x402 MCP transport (x402 specs/transports-v2/mcp.md). Without
 * `_meta["x402/payment"]` the call answers a tool error whose structured content is the x402 v2
 * PaymentRequired (the same requirements as the HTTP 402's PAYMENT-REQUIRED header), with the
 * spec's `x402/error` wrapper as text and a human line naming the checkout page. With it, the
 * payload goes through X402Service.purchase, the same exactly-once, payer-bound path as
 * POST /api/x402-products (the payment identifier travels inside the payload), and the order comes
 * back with the settlement response in `_meta["x402/payment-response"]`.
 */

export const PAYMENT_META = "x402/payment";
export const PAYMENT_RESPONSE_META = "x402/payment-response";

export const paymentRequiredSchema = z
  .looseObject({
    x402Version: z.literal(2),
    error: z.string().optional(),
    resource: z.looseObject({ url: z.string() }).optional(),
    accepts: z.array(
      z.looseObject({
        scheme: z.string(),
        network: z.string(),
        amount: z.string(),
        asset: z.string(),
        payTo: z.string(),
        maxTimeoutSeconds: z.number().int(),
      }),
    ),
    extensions: z.record(z.string(), z.unknown()).optional(),
  })
  .describe('x402 PaymentRequired (isError: true): pay one entry of accepts and retry with _meta["x402/payment"]');

export const orderSchema = z.looseObject({
  order_id: z.string(),
  access_url: z.string().describe("opens the entitlement (JSON for agents, HTML for browsers)"),
  sku: z.string(),
  amount_usd: z.string(),
  rail: z.string(),
  transaction: z.string().describe("settlement transaction (Base tx hash or Solana signature)"),
  created: z.boolean().describe("false when this answer repeats the order of an already redeemed payment"),
});

const pendingSchema = z
  .looseObject({ status: z.literal(202), code: z.string(), detail: z.string(), retry_after: z.number().int() })
  .describe("settlement outcome not known yet (isError: true): retry with the SAME payment after retry_after seconds");

export const buyOutputSchema = z.union([orderSchema, paymentRequiredSchema, pendingSchema, toolProblemSchema]);

const IDEMPOTENCY = /^[A-Za-z0-9_-]{16,128}$/;

export function registerBuyTool(server: McpServer, deps: McpDeps): void {
  const { x402, catalog, config, onError } = deps;
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
      const payment = ctx.mcpReq._meta?.[PAYMENT_META];
      const checkout = `${config.baseUrl}/pay?sku=${encodeURIComponent(sku)}`;
      try {
        // An unknown sku is a problem before any challenge (the HTTP route's catalog-wide 402 has no tool form).
        const product = catalog.resolve(sku);
        if (payment === undefined) return paymentRequiredResult(x402.challenge(product), checkout);
        if (payment === null || typeof payment !== "object" || Array.isArray(payment)) {
          throw new Problem(400, "invalid_payment", '_meta["x402/payment"] must be an x402 PaymentPayload object.');
        }
        // The payload is decoded as a value, with the same checks and size limit as the HTTP payment header.
        const proof = parsePaymentPayload(payment, config.x402.baseChainId);
        const outcome = await x402.buyProof(
          productItem(product, x402.answers.resourceUrl()),
          { email: email ?? null, note: note ?? null },
          proof,
          { idempotencyKey: idempotency_key },
        );
        if (outcome.kind === "challenge") return paymentRequiredResult(outcome.challenge, checkout);
        if (outcome.kind === "pending") {
          const body = outcome.pending.body;
          return {
            isError: true,
            content: [
              { type: "text", text: JSON.stringify(body) },
              { type: "text", text: body.detail },
            ],
            structuredContent: body,
          };
        }
        const { body, settle, created } = outcome.purchase;
        return okResult({ ...body, created }, { _meta: { [PAYMENT_RESPONSE_META]: settle } });
      } catch (err) {
        const problem = asProblem(err);
        if (!(err instanceof Problem)) onError?.(err);
        // A refused payment (402) carries the unchanged requirements: the x402 answer, with the reason.
        if (err instanceof PaymentRefused) return paymentRequiredResult(err.challenge, checkout, err);
        return problemResult(problem);
      }
    },
  );
}

/** The x402 MCP payment-required tool error, from a challenge (or a 402 refusal and its reason). */
function paymentRequiredResult(challenge: Challenge, checkout: string, reason?: Problem): CallToolResult {
  const required: PaymentRequired = challenge.paymentRequired;
  const structured = {
    ...required,
    ...(reason ? { error: reason.code, code: reason.code, detail: reason.detail } : {}),
    // A transaction-hash proof without its sender's signature: what to sign.
    ...(reason?.extra.sign ? { sign: reason.extra.sign } : {}),
  } as unknown as Record<string, unknown>;
  const first = required.accepts[0];
  const usd = first ? `${usdOf(first.amount)} USD (${first.amount} atomic USDC units)` : "";
  const human = reason
    ? `Payment refused (${reason.code}): ${reason.detail} Pay again with a new payment, or buy in a browser: ${checkout}`
    : `Payment required: ${usd}${required.resource?.description ? ` for ${required.resource.description}` : ""}. Pay with an x402 client and call this tool again with the payment in _meta["x402/payment"], or buy in a browser: ${checkout}`;
  return {
    isError: true,
    content: [
      {
        type: "text",
        text: JSON.stringify({
          "x402/error": { code: 402, message: reason ? reason.detail : "Payment required", data: structured },
        }),
      },
      { type: "text", text: human },
    ],
    structuredContent: structured,
  };
}

/** Atomic USDC units (6 decimals) as a decimal USD string, exactly (no floats). */
export function usdOf(units: string): string {
  const n = BigInt(units);
  const cents = (n % 1_000_000n)
    .toString()
    .padStart(6, "0")
    .replace(/0{1,4}$/, "");
  return `${n / 1_000_000n}.${cents.padEnd(2, "0")}`;
}
