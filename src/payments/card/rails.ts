import type { Config } from "../../config.js";

/**
 * Whether the card rails can take money (pure; read by the payments matrix).
 * - checkout: a Stripe secret key is set, so `POST /api/checkout` can create hosted sessions
 *   (fulfilment runs from the signed webhook and from the success page, which re-reads the session).
 * - paymentLinks: at least one static link is configured (PAYMENT_LINK_<SKU>), a secret key is set
 *   (to re-read sessions) and a webhook secret is set: link purchases only reach us through webhooks.
 */
export function cardRailsConfigured(config: Config): { checkout: boolean; paymentLinks: boolean } {
  const key = config.stripe.secretKey !== undefined;
  return {
    checkout: key,
    paymentLinks: key && config.stripe.webhookSecret !== undefined && Object.keys(config.paymentLinks).length > 0,
  };
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
