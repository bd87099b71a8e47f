import { railReadiness } from "../../payments/readiness.js";
import { type Challenge, RECOVERY_PATH } from "../../payments/x402/answers.js";
import { type EntryContext, entryProduct } from "./context.js";

export type EntryGuidance = {
  checkout_url: string;
  other_ways_url: string;
  recover_url: string;
  rails_configured: string[];
  how: string[];
};

/** 402 without any proof: the x402 challenge for gao-entry (when x402 is configured) plus the other ways. */
export type GuidanceBody = Partial<Omit<Challenge["body"], "status">> &
  EntryGuidance & {
    type: string;
    title: string;
    status: 402;
    code: string;
    detail: string;
    sku: string;
    amount_usd: string;
    amount_cents: number;
  };

/** The 402 answer without proof: x402 challenge (if configured), card checkout, other ways, recovery. */
export function entryGuidance(ctx: EntryContext, challenge?: Challenge): { body: GuidanceBody; challenge?: Challenge } {
  const { config, x402 } = ctx.deps;
  const product = entryProduct(ctx);
  const base = config.baseUrl;
  const ready = railReadiness(config);
  const rails = Object.entries(ready)
    .filter(([id, r]) => r.configured && id !== "suite_metered")
    .map(([id]) => id);
  const guide: EntryGuidance = {
    checkout_url: `${base}/pay?sku=${product.sku}`,
    other_ways_url: `${base}/pay/cancel?sku=${product.sku}`,
    recover_url: `${base}${RECOVERY_PATH}/challenge`,
    rails_configured: rails,
    how: [
      `Agents (x402): repeat this request with an x402 payment for ${product.sku} (${product.amountUsd} USD) in PAYMENT-SIGNATURE or X-PAYMENT, and an Idempotency-Key; the order is bought and entered in one call.`,
      ...(x402.configured()
        ? [
            "Agents (MPP): pay one of the WWW-Authenticate: Payment challenges of this answer and repeat this request with the credential in Payment-Authorization (Authorization keeps your participant token), and an Idempotency-Key.",
          ]
        : []),
      `Humans (card): pay at ${base}/pay?sku=${product.sku}, then send { "action": "enter", "access_token": "<token of your access URL>" } (or "access_url").`,
      `Already paid (any rail): send the access token or access URL of the order. Lost it? Recover orders paid on chain at ${base}${RECOVERY_PATH}/challenge.`,
    ],
  };
  const code = "entry_payment_required";
  const detail = `Entry needs a paid ${product.sku} order (${product.amountUsd} USD) that you prove you hold: its access token, or an x402 payment made in this call. An order id alone is not proof.`;
  const priced = { sku: product.sku, amount_usd: product.amountUsd, amount_cents: product.amountCents };
  const c = challenge ?? (x402.configured() ? x402.challenge(product, { code, detail }) : undefined);
  if (c) {
    const { status: _s, ...wire } = c.body;
    return { body: { ...wire, status: 402, ...priced, ...guide }, challenge: c };
  }
  return {
    body: {
      type: `https://labphi.dev/problems/${code}`,
      title: "Payment Required",
      status: 402,
      code,
      detail: `${detail} x402 is not configured on this instance${rails.length ? `; configured rails: ${rails.join(", ")}` : "; no payment rail is configured"}.`,
      ...priced,
      ...guide,
    },
  };
}
