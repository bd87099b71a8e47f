import { encodePaymentRequiredHeader, encodePaymentResponseHeader } from "@x402/core/http";
import { Problem } from "../../http/problem.js";
import { type Challenge, PaymentRefused, type Pending, type Purchase, RETRY_AFTER_SECONDS } from "./answers.js";

/**
 * The x402 wire, built only here at the HTTP edge from the domain answers (answers.ts): the
 * `PAYMENT-REQUIRED` header of a 402 (the base64 of the challenge's v2 PaymentRequired), the
 * `PAYMENT-RESPONSE` / `X-PAYMENT-RESPONSE` headers of a paid answer (the base64 of its settlement),
 * and the `Retry-After` of a pending one. MCP sends the same domain values in `_meta` (mcp/tools/buy.ts).
 */

export const X402_HEADERS = {
  required: "PAYMENT-REQUIRED",
  response: "PAYMENT-RESPONSE",
  responseV1: "X-PAYMENT-RESPONSE",
} as const;

export function challengeHeaders(challenge: Pick<Challenge, "paymentRequired">): Record<string, string> {
  return {
    [X402_HEADERS.required]: encodePaymentRequiredHeader(challenge.paymentRequired),
    "Cache-Control": "no-store",
  };
}

export function purchaseHeaders(purchase: Pick<Purchase, "settle">): Record<string, string> {
  const encoded = encodePaymentResponseHeader(purchase.settle);
  return {
    [X402_HEADERS.response]: encoded,
    [X402_HEADERS.responseV1]: encoded,
    "Cache-Control": "private, no-store",
  };
}

export function pendingHeaders(_pending?: Pending): Record<string, string> {
  return { "Retry-After": String(RETRY_AFTER_SECONDS), "Cache-Control": "no-store" };
}

/** A refused payment goes out as its 402 problem with the challenge's header, so the client can pay again. */
export function withChallengeHeaders(err: unknown): unknown {
  if (!(err instanceof PaymentRefused)) return err;
  if (Object.keys(err.headers).some((k) => k.toLowerCase() === "payment-required")) return err;
  return new Problem(err.status, err.code, err.detail, err.extra, {
    ...err.headers,
    ...challengeHeaders(err.challenge),
  });
}
