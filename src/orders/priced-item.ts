import type { Product } from "../catalog/service.js";

/**
 * What a payment buys, whatever the rail: a catalog product (fulfilled by an order) or a persisted
 * suite quote (fulfilled by a job). Every rail builds its challenge or checkout from one of these and
 * checks the payment against its amount: the client never chooses an amount.
 */
export interface PricedItem {
  kind: "product" | "quote";
  /** The sku, or the quote id. */
  ref: string;
  /** The sku recorded on payment rows (a quote records `suite`). */
  sku: string;
  name: string;
  /** Card charge (cents); for a quote: the atomic amount rounded up to the cent. */
  amountCents: number;
  /** USDC atomic units (6 decimals), decimal string: what x402 asks for. */
  amountUnits: string;
  /** Decimal USD of amountUnits (two decimals, more when a metered amount needs them). */
  amountUsd: string;
  /** The paid route (the x402 resource). */
  resource: string;
  /** One sentence for the 402 entry. */
  description: string;
}

export const QUOTE_SKU = "suite";

/** USDC units (decimal string) → USD with at least two decimals and no trailing zeros beyond them. */
export function unitsToUsd(units: string): string {
  const n = BigInt(units);
  const whole = n / 1_000_000n;
  let frac = (n % 1_000_000n).toString().padStart(6, "0");
  while (frac.length > 2 && frac.endsWith("0")) frac = frac.slice(0, -1);
  return `${whole}.${frac}`;
}

export function productItem(product: Product, resource: string): PricedItem {
  const units = (BigInt(product.amountCents) * 10_000n).toString();
  return {
    kind: "product",
    ref: product.sku,
    sku: product.sku,
    name: product.name,
    amountCents: product.amountCents,
    amountUnits: units,
    amountUsd: product.amountUsd,
    resource,
    description: `${product.name} (${product.sku}): ${product.grants}. Price ${product.amountUsd} USD = ${units} atomic USDC units (6 decimals).`,
  };
}

export function quoteItem(
  quote: {
    id: string;
    amount_units: string;
    amount_cents: number;
    op?: string;
    bytes?: number | string | bigint;
    level?: string;
  },
  resource: string,
): PricedItem {
  const usd = unitsToUsd(quote.amount_units);
  const what =
    quote.op && quote.bytes !== undefined && quote.level
      ? `: ${quote.op} of ${String(quote.bytes)} bytes at level ${quote.level}`
      : "";
  return {
    kind: "quote",
    ref: quote.id,
    sku: QUOTE_SKU,
    name: `Suite job ${quote.id}`,
    amountCents: quote.amount_cents,
    amountUnits: quote.amount_units,
    amountUsd: usd,
    resource,
    description: `Metered suite job (quote ${quote.id})${what}. Price ${usd} USD = ${quote.amount_units} atomic USDC units (6 decimals; GB = 10^9 bytes).`,
  };
}
