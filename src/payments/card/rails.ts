import type { Config } from "../../config.js";
import { type Readiness, railReadiness } from "../readiness.js";

/**
 * Whether the card rails can take money (pure; read by the payments matrix and the pay pages),
 * decided in src/payments/readiness.ts:
 * - checkout: STRIPE_SECRET_KEY (create and re-read sessions) and STRIPE_WEBHOOK_SECRET (a buyer who
 *   closes the tab, bank debits that settle later, refunds and disputes reach us only by webhook).
 * - paymentLinks: key, webhook secret and at least one link with its id (PAYMENT_LINK_<SKU> and
 *   PAYMENT_LINK_ID_<SKU>): link purchases only reach us through webhooks, matched by link id.
 */
export function cardRailsConfigured(config: Config): { checkout: boolean; paymentLinks: boolean } {
  const r = cardReadiness(config);
  return { checkout: r.checkout.configured, paymentLinks: r.paymentLinks.configured };
}

/** The same, with the missing settings of each card rail. */
export function cardReadiness(config: Config): { checkout: Readiness; paymentLinks: Readiness } {
  const r = railReadiness(config);
  return { checkout: r.card_checkout, paymentLinks: r.card_payment_link };
}

/**
 * Hosted-checkout payment methods. Empty allow-list = Stripe's dynamic payment methods (offered when
 * eligible for the amount, currency and device); STRIPE_PAYMENT_METHODS narrows them
 * (sent as `allowed_payment_method_types`; stripe 23 has no `payment_method_types` on sessions).
 */
export function checkoutPaymentMethods(config: Config): { mode: "dynamic" | "allow_list"; methods: string[] } {
  const list = config.stripe.paymentMethods ?? [];
  return list.length > 0 ? { mode: "allow_list", methods: list } : { mode: "dynamic", methods: [] };
}
