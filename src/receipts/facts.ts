import type { Config } from "../config.js";
import type { OrderView } from "../orders/service.js";
import type { OrderRow } from "../orders/tables.js";
import { BITCOIN_MAINNET, caip2 as networkCaip2, SOLANA_MAINNET } from "../payments/networks.js";
import type { ReceiptFacts } from "./service.js";

/**
 * The facts of an order's receipt, from the stored order alone (its row, its view, and the USDC
 * addresses of the settings), so the receipt is rebuilt the same on every read (docs/receipts.md).
 *
 * - An order whose `meta` holds `network` and `amount_units` (x402, and MPP when it stores the
 *   same) is a USDC payment: amount in USDC units (6 decimals), the asset's contract or mint
 *   (`meta.asset`, else the configured USDC of that chain), the network as CAIP-2, payer
 *   `meta.payer`.
 * - Every other order (card checkout, payment link, approved manual claim, wire) is priced in USD:
 *   amount in cents (2 decimals), asset `USD`; a manual transfer names its chain when the rail
 *   fixes it (Solana, Bitcoin) and its transaction, and no payer (a claimed sender is not proven).
 */

export { BITCOIN_MAINNET, SOLANA_MAINNET };

const USDC_DECIMALS = 6;

export interface OrderReceiptContext {
  baseUrl: string;
  /** USDC contract on Base (USDC_BASE) and mint on Solana (USDC_SOLANA). */
  usdc: { base: string; solana: string };
}

export function orderReceiptContext(config: Config): OrderReceiptContext {
  return { baseUrl: config.baseUrl, usdc: { base: config.usdc.base, solana: config.usdc.solana } };
}

/** CAIP-2 of a stored network name (`solana-mainnet-beta` → `solana:5eykt…`; CAIP-2 as it is). */
export function caip2(network: string): string {
  return networkCaip2(network) ?? network;
}

/** The USDC asset of a CAIP-2 network (an EVM chain: the Base contract; Solana: the mint). */
function usdcOf(network: string, ctx: OrderReceiptContext): string {
  return network.startsWith("solana:") ? ctx.usdc.solana : ctx.usdc.base;
}

const MANUAL_NETWORK: Record<string, string> = {
  crypto_manual_solana: SOLANA_MAINNET,
  crypto_manual_btc: BITCOIN_MAINNET,
};

function metaOf(order: OrderRow): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(order.meta);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

const text = (v: unknown): string | null => (typeof v === "string" && v.length > 0 ? v : null);

export function receiptFactsFromOrder(order: OrderRow, view: OrderView, ctx: OrderReceiptContext): ReceiptFacts {
  return receiptFactsFromPurchase(
    { kind: "product", ref: order.sku, sku: order.sku, name: view.name, amountCents: order.amount_cents, resource: "" },
    { rail: order.rail, transactionRef: order.transaction_ref, amountCents: order.amount_cents, meta: metaOf(order) },
    { kind: "product", id: order.id },
    order.created_at,
    ctx,
  );
}

/** The receipt of an order: `receipts.sign` over `receiptFactsFromOrder` (the same bytes on every call). */
export function orderReceipts(
  receipts: { sign(facts: ReceiptFacts): string },
  orders: { view(order: OrderRow): OrderView },
  ctx: OrderReceiptContext,
): (order: OrderRow) => string {
  return (order) => receipts.sign(receiptFactsFromOrder(order, orders.view(order), ctx));
}

/**
 * The facts of a purchase as a rail sees it when it answers (the priced item, the payment facts it
 * handed the order core, and what was fulfilled), for the purchase answers of x402, MPP, card and
 * claims. `issuedAt` must be a stored time (the order's or the job's created_at), so the receipt is
 * the same on every read. For a product this gives the same facts as `receiptFactsFromOrder` on the
 * order the grant stored (same bytes as the access page); a quote names its job.
 */
export function receiptFactsFromPurchase(
  item: { kind: string; ref: string; sku: string; name: string; amountCents: number; resource: string },
  payment: { rail: string; transactionRef?: string | null; amountCents?: number; meta?: Record<string, unknown> },
  fulfilled: { kind: string; id: string },
  issuedAt: string,
  ctx: OrderReceiptContext,
): ReceiptFacts {
  const meta = payment.meta ?? {};
  const isOrder = fulfilled.kind === "product";
  const base = {
    item: { kind: item.kind, ref: item.ref, sku: item.sku, name: item.name },
    rail: payment.rail,
    transaction: payment.transactionRef ?? null,
    orderId: isOrder ? fulfilled.id : null,
    jobId: isOrder ? null : fulfilled.id,
    resourceUrl: isOrder ? `${ctx.baseUrl}/api/x402-products?sku=${encodeURIComponent(item.sku)}` : item.resource,
    issuedAt,
  };
  const network = text(meta.network);
  const units = text(meta.amount_units);
  if (network && units && /^(0|[1-9][0-9]*)$/.test(units)) {
    const chain = caip2(network);
    return {
      ...base,
      amount: units,
      decimals: USDC_DECIMALS,
      currency: "USDC",
      asset: text(meta.asset) ?? usdcOf(chain, ctx),
      network: chain,
      payer: text(meta.payer),
    };
  }
  return {
    ...base,
    amount: String(payment.amountCents ?? item.amountCents),
    decimals: 2,
    currency: "USD",
    asset: "USD",
    network: MANUAL_NETWORK[payment.rail] ?? null,
    payer: null,
  };
}
