import type { CallToolResult } from "@modelcontextprotocol/server";
import type { PaymentRequired } from "@x402/core/types";
import { z } from "zod";
import { Problem } from "../http/problem.js";
import type { PricedItem } from "../orders/priced-item.js";
import { type Challenge, PaymentRefused } from "../payments/x402/answers.js";
import type { McpDeps } from "./deps.js";

/**
 * The payment side of the paid tools (`buy`, `buy_suite`): ONE builder of the payment-required,
 * refused and pending tool results, so both tools answer the x402 MCP transport
 * (specs/transports-v2/mcp.md of the x402 repository) the same way, with MPP's MCP transport
 * (mppx `Mcp`, `org.paymentauth/*` meta) beside it when MPP is configured.
 *
 * The binding (docs/mcp.md "Which binding each client gets"): the tool-result binding for every
 * client revision: a tool error (`isError: true`) whose `structuredContent` is the x402 v2
 * PaymentRequired and whose `content[0].text` is exactly `JSON.stringify(structuredContent)`; a
 * human hint is a second content item. Under the 2026-07-28 revision the SDK stamps
 * `resultType: "complete"` on every tool result, this one included.
 */

export const PAYMENT_META = "x402/payment";
export const PAYMENT_RESPONSE_META = "x402/payment-response";
/** MPP's MCP transport (mppx `Mcp`): the challenges of a payment-required result, the credential, the receipt. */
export const MPP_PAYMENT_REQUIRED_META = "org.paymentauth/payment-required";
export const MPP_CREDENTIAL_META = "org.paymentauth/credential";
export const MPP_RECEIPT_META = "org.paymentauth/receipt";

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

export const pendingSchema = z
  .looseObject({ status: z.literal(202), code: z.string(), detail: z.string(), retry_after: z.number().int() })
  .describe("settlement outcome not known yet (isError: true): retry with the SAME payment after retry_after seconds");

/** The payment a call carries: x402's PaymentPayload and/or MPP's credential, from the request `_meta`. */
export interface PresentedPayment {
  x402: unknown;
  credential: unknown;
}

export function presentedPayment(
  meta: Record<string, unknown> | undefined,
  deps: Pick<McpDeps, "mpp">,
): PresentedPayment {
  const x402 = meta?.[PAYMENT_META];
  const credential = deps.mpp ? meta?.[MPP_CREDENTIAL_META] : undefined;
  if (x402 !== undefined && credential !== undefined) {
    throw new Problem(
      400,
      "payment_dialect_ambiguous",
      `Send one payment: _meta["${PAYMENT_META}"] (x402) or _meta["${MPP_CREDENTIAL_META}"] (MPP), not both.`,
    );
  }
  return { x402, credential };
}

/** The x402 payload must be an object (a PaymentPayload); anything else is refused before decoding. */
export function assertPayloadObject(payment: unknown): asserts payment is Record<string, unknown> {
  if (payment === null || typeof payment !== "object" || Array.isArray(payment)) {
    throw new Problem(400, "invalid_payment", `_meta["${PAYMENT_META}"] must be an x402 PaymentPayload object.`);
  }
}

/** Where else the buyer can pay (a browser page, a card checkout), for the human hint. */
export interface PaymentHint {
  /** A sentence naming the other way to pay, e.g. "or buy in a browser: <url>". */
  otherwise: string;
}

/**
 * The x402 MCP payment-required tool error, from a challenge (or a 402 refusal and its reason).
 * `extra`: fields added beside the PaymentRequired (e.g. the suite `quote`); x402 clients ignore them.
 */
export function paymentRequiredResult(
  challenge: Challenge,
  hint: PaymentHint,
  reason?: Problem,
  extra: Record<string, unknown> = {},
): CallToolResult {
  const required: PaymentRequired = challenge.paymentRequired;
  const structured = {
    ...required,
    ...(reason ? { error: reason.code, code: reason.code, detail: reason.detail } : {}),
    // A transaction-hash proof without its sender's signature: what to sign.
    ...(reason?.extra.sign ? { sign: reason.extra.sign } : {}),
    ...extra,
  } as unknown as Record<string, unknown>;
  const first = required.accepts[0];
  const usd = first ? `${usdOf(first.amount)} USD (${first.amount} atomic USDC units)` : "";
  const human = reason
    ? `Payment refused (${reason.code}): ${reason.detail} Pay again with a new payment, ${hint.otherwise}`
    : `Payment required: ${usd}${required.resource?.description ? ` for ${required.resource.description}` : ""}. Pay with an x402 client and call this tool again with the same arguments and the payment in _meta["${PAYMENT_META}"], ${hint.otherwise}`;
  const result: CallToolResult = {
    isError: true,
    // x402 MCP transport: content[0].text is exactly the structured content as JSON, so a client
    // that reads only the text parses the PaymentRequired; the human hint is a second item.
    content: [
      { type: "text", text: JSON.stringify(structured) },
      { type: "text", text: human },
    ],
    structuredContent: structured,
  };
  paymentResults.add(result);
  return result;
}

/** The x402 MCP extension (client capability `extensions["org.x402/payment"]`). */
export const X402_EXTENSION = "org.x402/payment";
const ENVELOPE_VERSION = "io.modelcontextprotocol/protocolVersion";
const ENVELOPE_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";

/** Payment-required results built here (the extension binding rewrites only these). */
const paymentResults = new WeakSet<CallToolResult>();

/**
 * Whether the request asks for the extension binding: a 2026-07-28 (per-request envelope)
 * request whose client capabilities list `extensions["org.x402/payment"]`. 2025-era requests have
 * no result discriminator: they always get the tool-result binding.
 */
export function wantsExtensionBinding(envelope: unknown): boolean {
  if (envelope === null || typeof envelope !== "object") return false;
  const env = envelope as Record<string, unknown>;
  if (typeof env[ENVELOPE_VERSION] !== "string") return false;
  const caps = env[ENVELOPE_CAPABILITIES] as { extensions?: Record<string, unknown> } | undefined;
  const ext = caps?.extensions?.[X402_EXTENSION];
  return ext !== null && typeof ext === "object";
}

/**
 * The answer in the binding the client asked for: a payment-required result (from
 * `paymentRequiredResult`) becomes `resultType: "payment_required"` with `paymentRequired` (the
 * same PaymentRequired) for a client of the extension; the tool-result fields stay beside it. Any
 * other result (a success, a problem) is unchanged: the SDK stamps `resultType: "complete"` on
 * 2026-07-28 results.
 */
export function inBinding(result: CallToolResult, envelope: unknown): CallToolResult {
  if (!paymentResults.has(result) || !wantsExtensionBinding(envelope)) return result;
  return { ...result, resultType: "payment_required", paymentRequired: result.structuredContent } as CallToolResult;
}

/** The 202 of a pending settlement as a tool error (retry with the same payment). */
export function pendingResult(body: { detail: string } & Record<string, unknown>): CallToolResult {
  return {
    isError: true,
    content: [
      { type: "text", text: JSON.stringify(body) },
      { type: "text", text: body.detail },
    ],
    structuredContent: body,
  };
}

/** Adds MPP's challenges for `item` to a payment-required tool error (x402's answer unchanged). */
export function withMpp(
  deps: Pick<McpDeps, "mpp">,
  result: CallToolResult,
  item: PricedItem | undefined,
): CallToolResult {
  const { mpp } = deps;
  if (!item || !mpp?.configured()) return result;
  const challenges = mpp.challenges(item);
  if (challenges.length === 0) return result;
  const withChallenges = {
    ...result,
    _meta: { ...result._meta, [MPP_PAYMENT_REQUIRED_META]: { httpStatus: 402, challenges } },
  };
  if (paymentResults.has(result)) paymentResults.add(withChallenges);
  return withChallenges;
}

/**
 * A refused payment (a 402 problem) as the payment-required result of `item`: an x402 refusal
 * carries its unchanged requirements and the reason; an MPP refusal gets the item's x402
 * challenge. Both with MPP's fresh challenges beside. Undefined: not a payment refusal.
 */
export function refusedResult(
  deps: Pick<McpDeps, "mpp" | "x402">,
  err: unknown,
  item: PricedItem | undefined,
  hint: PaymentHint,
): CallToolResult | undefined {
  if (err instanceof PaymentRefused) return withMpp(deps, paymentRequiredResult(err.challenge, hint, err), item);
  if (err instanceof Problem && err.status === 402 && item && err.code.startsWith("mpp_")) {
    return withMpp(deps, paymentRequiredResult(deps.x402.challengeFor(item), hint, err), item);
  }
  return undefined;
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
