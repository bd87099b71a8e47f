import { createHash } from "node:crypto";
import type { Kysely } from "kysely";
import type { Catalog } from "../../catalog/service.js";
import type { Config } from "../../config.js";
import type { Database } from "../../db/schema.js";
import { Problem } from "../../http/problem.js";
import type { OrderService } from "../../orders/service.js";
import type { Stripe } from "./stripe.js";

/** What every part of the card rails (checkout, session sync, refunds, webhook) works with. */
export interface CardContext {
  db: Kysely<Database>;
  orders: OrderService;
  catalog: Catalog;
  config: Config;
  stripe: Stripe | undefined;
}

export const SESSION_ID = /^cs_[A-Za-z0-9_]{1,250}$/;

/** The proof key of a card order: one Checkout Session → at most one order. */
export const sessionProofKey = (sessionId: string) => `stripe:session:${sessionId}`;

/** The Stripe client, or 503 `card_rails_not_configured` when no secret key is set. */
export function requireStripe(ctx: CardContext): Stripe {
  if (!ctx.stripe) {
    throw new Problem(
      503,
      "card_rails_not_configured",
      "Card payments are not configured on this server (STRIPE_SECRET_KEY is not set). Use another rail: see GET /api/payments.",
      { configured: false, alternatives: ["POST /api/claims", "POST /api/x402-products"] },
    );
  }
  return ctx.stripe;
}

export function isEmail(value: string): boolean {
  return value.length <= 254 && /^[^\s@"<>()[\]\\,;:]+@[^\s@"<>()[\]\\,;:]+\.[A-Za-z]{2,}$/.test(value);
}

export function sha256(data: string | Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

export function isStripeNotFound(err: unknown): boolean {
  const e = err as { type?: string; statusCode?: number; code?: string };
  return e?.statusCode === 404 || e?.code === "resource_missing";
}

/** Stripe trouble → 502 (Stripe said no) or 503 (Stripe unreachable). Never leaks the key. */
export function stripeProblem(err: unknown, doing: string): Problem {
  if (err instanceof Problem) return err;
  const e = err as { type?: string; statusCode?: number; message?: string; code?: string };
  if (e?.type === "StripeConnectionError" || e?.statusCode === undefined) {
    return new Problem(
      503,
      "stripe_unavailable",
      `Stripe could not be reached while ${doing}; try again.`,
      {},
      {
        "Retry-After": "5",
      },
    );
  }
  return new Problem(502, "stripe_error", `Stripe answered ${e.statusCode} while ${doing}.`, {
    stripe_code: e.code ?? null,
  });
}
