import type { CallToolResult, McpServer } from "@modelcontextprotocol/server";
import type { PaymentRequired } from "@x402/core/types";
import { z } from "zod";
import { Problem } from "../../http/problem.js";
import { controlFree, plainText } from "../../http/text.js";
import { type PricedItem, productItem } from "../../orders/priced-item.js";
import { type Challenge, PaymentRefused } from "../../payments/x402/answers.js";
import { parsePaymentPayload } from "../../payments/x402/proof.js";
import type { McpDeps } from "../deps.js";
import { asProblem, okResult, problemResult, toolProblemSchema } from "../results.js";

/**
 * `buy`: one product paid over the x402 MCP transport (x402 specs/transports-v2/mcp.md). Without
 * `_meta["x402/payment"]` the call answers a tool error whose structured content is the x402 v2
 * PaymentRequired (the same requirements as the HTTP 402's PAYMENT-REQUIRED header), with the
 * same object as JSON in `content[0].text` (the spec's binding) and a human line naming the checkout page. With it, the
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

/** MPP's MCP transport (mppx `Mcp`): the challenges of a payment-required result, the credential, the receipt. */
export const MPP_PAYMENT_REQUIRED_META = "org.paymentauth/payment-required";
export const MPP_CREDENTIAL_META = "org.paymentauth/credential";
export const MPP_RECEIPT_META = "org.paymentauth/receipt";

export function registerBuyTool(server: McpServer, deps: McpDeps): void {
  const { x402, catalog, config, onError, mpp } = deps;
  /** Adds MPP's challenges for `item` to a payment-required tool error (x402's answer unchanged). */
  const withMpp = (result: CallToolResult, item: PricedItem): CallToolResult => {
    if (!mpp?.configured()) return result;
    const challenges = mpp.challenges(item);
    if (challenges.length === 0) return result;
    return { ...result, _meta: { ...result._meta, [MPP_PAYMENT_REQUIRED_META]: { httpStatus: 402, challenges } } };
  };
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
      const credential = mpp ? ctx.mcpReq._meta?.[MPP_CREDENTIAL_META] : undefined;
      const checkout = `${config.baseUrl}/pay?sku=${encodeURIComponent(sku)}`;
      let item: PricedItem | undefined;
      try {
        // An unknown sku is a problem before any challenge (the HTTP route's catalog-wide 402 has no tool form).
        const product = catalog.resolve(sku);
        item = productItem(product, x402.answers.resourceUrl());
        if (payment !== undefined && credential !== undefined) {
          throw new Problem(
            400,
            "payment_dialect_ambiguous",
            `Send one payment: _meta["${PAYMENT_META}"] (x402) or _meta["${MPP_CREDENTIAL_META}"] (MPP), not both.`,
          );
        }
        if (credential !== undefined && mpp) {
          // MPP over MCP: the same verification and ledger as the HTTP credential.
          const verified = mpp.verifyObject(credential);
          const outcome = await verified.buy(
            item,
            { email: email ?? null, note: note ?? null },
            { idempotencyKey: idempotency_key },
          );
          if (outcome.kind === "challenge") return withMpp(paymentRequiredResult(outcome.challenge, checkout), item);
          if (outcome.kind === "pending") return pendingResult(outcome.pending.body);
          const { body, settle, created } = outcome.purchase;
          const receipt = { ...mpp.receiptOf(verified, body.transaction), challengeId: verified.challenge.id };
          return okResult(
            { ...body, created },
            { _meta: { [PAYMENT_RESPONSE_META]: settle, [MPP_RECEIPT_META]: receipt } },
          );
        }
        if (payment === undefined) return withMpp(paymentRequiredResult(x402.challenge(product), checkout), item);
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
        if (outcome.kind === "challenge") return withMpp(paymentRequiredResult(outcome.challenge, checkout), item);
        if (outcome.kind === "pending") return pendingResult(outcome.pending.body);
        const { body, settle, created } = outcome.purchase;
        return okResult({ ...body, created }, { _meta: { [PAYMENT_RESPONSE_META]: settle } });
      } catch (err) {
        const problem = asProblem(err);
        if (!(err instanceof Problem)) onError?.(err);
        // A refused payment (402) carries the unchanged requirements: the x402 answer, with the reason
        // (and MPP's fresh challenges beside it).
        if (err instanceof PaymentRefused) {
          const refused = paymentRequiredResult(err.challenge, checkout, err);
          return item ? withMpp(refused, item) : refused;
        }
        if (err instanceof Problem && err.status === 402 && item && err.code.startsWith("mpp_")) {
          return withMpp(paymentRequiredResult(x402.challengeFor(item), checkout, err), item);
        }
        return problemResult(problem);
      }
    },
  );
}

/** The 202 of a pending settlement as a tool error (retry with the same payment). */
function pendingResult(body: { detail: string } & Record<string, unknown>): CallToolResult {
  return {
    isError: true,
    content: [
      { type: "text", text: JSON.stringify(body) },
      { type: "text", text: body.detail },
    ],
    structuredContent: body,
  };
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
    // x402 MCP transport (specs/transports-v2/mcp.md): content[0].text is exactly the structured
    // content as JSON, so a client that reads only the text parses the PaymentRequired; the human
    // hint is a second item.
    content: [
      { type: "text", text: JSON.stringify(structured) },
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
