import type { OnChainPayment } from "../../src/orders/fulfilment.js";
import { productItem } from "../../src/orders/priced-item.js";
import type { OrderService } from "../../src/orders/service.js";
import type { OrderRow } from "../../src/orders/tables.js";

/**
 * Grants a catalog product through the order core's one `grant(item, payment)`, as a rail does,
 * for tests that need an order without paying (the shape tests used before the fulfilment table).
 */
export async function grantProduct(
  orders: OrderService,
  req: {
    proofKey: string;
    sku: string;
    rail: string;
    amountCents: number;
    currency?: string;
    transactionRef?: string | null;
    email?: string | null;
    agentId?: string | null;
    meta?: Record<string, unknown>;
    /** The on-chain payment (held and bound by the order core). */
    payment?: OnChainPayment;
  },
): Promise<{ order: OrderRow; created: boolean; accessUrl: string }> {
  const { sku, payment: onChain, ...payment } = req;
  const product = orders.catalog.resolve(sku);
  const fulfilled = await orders.grant(productItem(product, "http://test.invalid/api/test"), {
    ...payment,
    ...(onChain ? { onChain } : {}),
  });
  return {
    order: await orders.get(fulfilled.id),
    created: fulfilled.created,
    accessUrl: orders.accessUrl(fulfilled.id),
  };
}
