import type { ProductKind } from "../../catalog/products.js";
import type { Catalog, Product } from "../../catalog/service.js";
import type { Config } from "../../config.js";
import { freeTermsText, SUITE_PRICE, usdOfUnits } from "../../jobs/pricing.js";
import { cardRailsConfigured } from "../../payments/card/rails.js";
import { centsToAtomic, X402_HEADERS, x402Rails } from "../../payments/x402/rails.js";
import { escapeHtml as e } from "../html.js";

/**
 * What the human pages say about products and rails, derived from the catalog, the configuration
 * and the suite pricing module: no price or network is written into a page by hand.
 */

export const KIND_LABELS: Record<ProductKind, { title: string; one: string }> = {
  license: { title: "Licences", one: "Licence" },
  service: { title: "Services", one: "Service" },
  support: { title: "Support", one: "Support" },
  olympiad: { title: "Olympiad", one: "Olympiad" },
};

/** "$249.00" */
export const price = (p: Pick<Product, "amountUsd">): string => `$${p.amountUsd}`;

/** The products grouped by kind, kinds in the catalog's order. */
export function byKind(catalog: Catalog): { kind: ProductKind; products: Product[] }[] {
  const groups = new Map<ProductKind, Product[]>();
  for (const p of catalog.list()) {
    const list = groups.get(p.kind) ?? [];
    list.push(p);
    groups.set(p.kind, list);
  }
  return [...groups].map(([kind, products]) => ({ kind, products }));
}

/** The lowest-priced product of a list (the "from" price of a kind). */
export function cheapest(products: Product[]): Product | undefined {
  return products.reduce<Product | undefined>((a, p) => (!a || p.amountCents < a.amountCents ? p : a), undefined);
}

/** Whether the hosted card checkout can take money here. */
export const checkoutReady = (config: Config): boolean => cardRailsConfigured(config).checkout;

/**
 * The static payment link of a sku, only when a purchase through it can be matched to the product
 * (its link id is set and the webhook can deliver it): otherwise a buyer would pay and get nothing.
 */
export function paymentLinkFor(config: Config, sku: string): string | undefined {
  const link = config.paymentLinks[sku];
  if (!link || !config.paymentLinkIds[sku]) return undefined;
  return cardRailsConfigured(config).paymentLinks ? link : undefined;
}

/** One line on the metered suite, from src/jobs/pricing.ts and this server's anonymous allowance. */
export function suiteLine(config: Config): string {
  const p = SUITE_PRICE;
  return `free up to ${freeTermsText(config.suiteFree.anonBytesPerDay)}, then $${usdOfUnits(p.unitsPerGbAfterFree)} per GB ($${usdOfUnits(p.unitsPerGbBulk)} per GB beyond ${p.bulkAfterBillableGb} billable GB), at least $${usdOfUnits(p.minPaidUnits)} per paid job`;
}

/** The x402 networks of this deployment (CAIP-2 ids, as x402 v2 names them), with whether each can settle. */
export function x402Networks(config: Config): { network: string; chain: string; configured: boolean }[] {
  return x402Rails(config).map((r) => ({ network: r.caip2, chain: r.chain, configured: r.configured }));
}

const shellQuote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;

/** The two curl calls of an x402 purchase of `product` (escaped HTML, for a <pre><code>). */
export function x402Curl(config: Config, product: Product): { ask: string; pay: string } {
  const url = `${config.baseUrl}/api/x402-products`;
  const body = shellQuote(JSON.stringify({ sku: product.sku }));
  return {
    ask: e(`curl -i -X POST ${url} -H 'Content-Type: application/json' -d ${body}`),
    pay: e(
      `curl -i -X POST ${url} -H 'Content-Type: application/json' -H '${X402_HEADERS.paymentV2}: <base64 payment payload>' -d ${body}`,
    ),
  };
}

/**
 * A free request this server answers whatever is configured (no payment rail needed): the codec
 * compressing a short text through POST /api/omni. Escaped HTML, for a <pre><code>.
 */
export const FREE_EXAMPLE_BODY = { op: "compress", data: "hello hello hello" } as const;
export function freeCurl(config: Config): string {
  return e(
    `curl -s -X POST ${config.baseUrl}/api/omni -H 'Content-Type: application/json' -d ${shellQuote(JSON.stringify(FREE_EXAMPLE_BODY))}`,
  );
}

/** USDC atomic units of a product's price ("1000000" for $1.00). */
export const atomic = (p: Product): string => centsToAtomic(p.amountCents);
