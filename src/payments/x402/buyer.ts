import { createHash } from "node:crypto";
import {
  appendPaymentIdentifierToExtensions,
  declarePaymentIdentifierExtension,
  PAYMENT_IDENTIFIER,
  validatePaymentIdentifier,
} from "@x402/extensions/payment-identifier";
import { badRequest } from "../../http/problem.js";
import type { ParsedProof } from "./proof.js";

/**
 * Who may redeem a proof. Everything in a payment proof becomes public once it settles (the
 * EIP-3009 authorization and signature are in the settlement's calldata, a Solana transaction is
 * readable with getTransaction, a transaction hash is on every explorer). So a replayed proof is
 * answered with its order only when the caller also shows a secret the chain never sees: the x402
 * `payment-identifier` extension's id (in the payload's `extensions`, sent only to us) or an
 * `Idempotency-Key` header. Only a hash of it is stored, when the proof is first reserved.
 */

/** The extension advertised in every 402 (optional: stock clients without it still buy once). */
export function paymentIdentifierDeclaration() {
  return declarePaymentIdentifierExtension(false);
}

export const IDEMPOTENCY_KEY = /^[A-Za-z0-9_-]{16,128}$/;

export interface BuyerKey {
  source: "payment-identifier" | "idempotency-key";
  /** sha256 of the secret: what the ledger stores. */
  hash: string;
}

export function buyerKeyHash(secret: string): string {
  return createHash("sha256").update(`labphi:buyer-key:v1:${secret}`).digest("hex");
}

/**
 * The caller's buyer key: the payment identifier when the payload carries one, else the
 * Idempotency-Key header. A malformed one is a 400 (never silently ignored: the caller relies on it).
 */
export function buyerKey(proof: ParsedProof, idempotencyKey: string | undefined): BuyerKey | undefined {
  const ext = proof.extensions?.[PAYMENT_IDENTIFIER];
  if (ext !== undefined) {
    const id = (ext as { info?: { id?: unknown } })?.info?.id;
    if (id !== undefined) {
      const check = validatePaymentIdentifier(ext);
      if (!check.valid || typeof id !== "string") {
        throw badRequest(
          "invalid_payment_identifier",
          `The payment-identifier extension is malformed: ${(check.errors ?? ["id must be a string"]).join("; ").slice(0, 300)}. Use 16-128 characters of letters, digits, - and _.`,
        );
      }
      return { source: "payment-identifier", hash: buyerKeyHash(id) };
    }
  }
  if (idempotencyKey !== undefined) {
    if (!IDEMPOTENCY_KEY.test(idempotencyKey)) {
      throw badRequest(
        "invalid_idempotency_key",
        "Idempotency-Key must be 16-128 characters of letters, digits, - and _ (a random value only the buyer knows).",
      );
    }
    return { source: "idempotency-key", hash: buyerKeyHash(idempotencyKey) };
  }
  return undefined;
}

/**
 * For x402 clients (`x402Client.registerExtension`): puts a payment identifier into every payload
 * when the server advertises the extension. Keep the id: it is what proves you are the buyer when
 * you retry after a timeout or a 202.
 */
export function paymentIdentifierClientExtension(id: string) {
  return {
    key: PAYMENT_IDENTIFIER,
    enrichPaymentPayload: async <P extends { extensions?: Record<string, unknown> }>(
      payload: P,
      required: { extensions?: Record<string, unknown> },
    ): Promise<P> => {
      if (!required.extensions?.[PAYMENT_IDENTIFIER]) return payload;
      const extensions: Record<string, unknown> = {
        ...(payload.extensions ?? {}),
        [PAYMENT_IDENTIFIER]: structuredClone(required.extensions[PAYMENT_IDENTIFIER]),
      };
      appendPaymentIdentifierToExtensions(extensions, id);
      return { ...payload, extensions };
    },
  };
}
