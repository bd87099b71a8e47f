import type { Config } from "../config.js";
import { railReadiness, settlingRails } from "./readiness.js";
import { x402Rails } from "./x402/rails.js";

/**
 * What this server can sell, for the human pages (issue #25 item 1): a page offers a way to pay
 * only when that rail can settle here (src/payments/readiness.ts decides), and when none can, the
 * one notice below names the settings that would enable each rail and where to see a sale.
 */
export interface SaleWays {
  /** hosted card checkout (STRIPE_SECRET_KEY + STRIPE_WEBHOOK_SECRET) */
  checkout: boolean;
  /** at least one card payment link that a webhook can match to its sku */
  paymentLinks: boolean;
  /** a manual crypto rail (Solana, EVM or Bitcoin transfer, claimed by reference) */
  transfer: boolean;
  /** the wire / ACH invoice */
  invoice: boolean;
  /** the x402 networks that can settle, as CAIP-2 ids (e.g. eip155:8453) */
  x402: string[];
  /** paid suite jobs (an x402 rail or card checkout) */
  suite: boolean;
  /** no buyer rail can settle: nothing can be sold here */
  none: boolean;
}

export function saleWays(config: Config): SaleWays {
  const r = railReadiness(config);
  const x402 = x402Rails(config)
    .filter((rail) => rail.configured)
    .map((rail) => rail.caip2);
  return {
    checkout: r.card_checkout.configured,
    paymentLinks: r.card_payment_link.configured,
    transfer: r.crypto_manual_solana.configured || r.crypto_manual_evm.configured || r.crypto_manual_btc.configured,
    invoice: r.wire_invoice_ach.configured,
    x402,
    suite: r.suite_metered.configured,
    none: settlingRails(config).length === 0,
  };
}

/** Any way for a person (not an agent) to pay here. */
export const peopleCanPay = (w: SaleWays): boolean => w.checkout || w.paymentLinks || w.transfer || w.invoice;

/** "a, b or c" */
export function orList(items: string[]): string {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} or ${items[items.length - 1]}`;
}

/** The ways a person can pay here, as phrases ("by card", "by crypto transfer", "by invoice"). */
export function peopleWays(w: SaleWays): string[] {
  const ways: string[] = [];
  if (w.checkout) ways.push("by card");
  else if (w.paymentLinks) ways.push("with a card payment link");
  if (w.transfer) ways.push("by crypto transfer");
  if (w.invoice) ways.push("by invoice");
  return ways;
}
