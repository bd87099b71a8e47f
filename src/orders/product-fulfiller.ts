import type { Catalog } from "../catalog/service.js";
import { nowIso } from "../db/database.js";
import type { Executor } from "../db/executor.js";
import type { Fulfilled, Fulfiller, FulfilmentView, PaymentFacts } from "./fulfilment.js";
import type { PricedItem } from "./priced-item.js";
import { orderStore } from "./store.js";
import type { OrderRow } from "./tables.js";
import { accessToken, hashToken, newLicenseKey, newOrderId } from "./tokens.js";

/** What the product fulfiller needs of the order service (the access URL and the amount view). */
export interface ProductOrders {
  accessUrl(orderId: string): string;
  amountUsd(order: OrderRow): string;
  get(orderId: string): Promise<OrderRow>;
}

/**
 * A paid product grants one order per proof key: the order row, its access token (stored hashed)
 * and a licence key for licence products. A repeated grant of the same proof key returns the
 * existing order (`created: false`).
 */
export function productFulfiller(catalog: Catalog, tokenSecret: string, orders: ProductOrders): Fulfiller {
  const found = (order: OrderRow): Fulfilled => ({ kind: "product", id: order.id, created: false });
  return {
    kind: "product",
    reference: "order_id",
    async fulfil(item: PricedItem, payment: PaymentFacts, db: Executor): Promise<Fulfilled> {
      const product = catalog.resolve(item.ref);
      const amountCents = payment.amountCents ?? item.amountCents;
      if (!Number.isSafeInteger(amountCents) || amountCents < 0) {
        throw new Error(`grant: amount must be integer cents, got ${amountCents}`);
      }
      const existing = await orderStore.byProofKey(db, payment.proofKey);
      if (existing) return found(existing);
      const id = newOrderId();
      const at = nowIso();
      const row: OrderRow = {
        id,
        proof_key: payment.proofKey,
        sku: product.sku,
        amount_cents: amountCents,
        currency: payment.currency ?? "usd",
        rail: payment.rail,
        transaction_ref: payment.transactionRef ?? null,
        email: payment.email ?? null,
        agent_id: payment.agentId ?? null,
        status: "active",
        access_token_hash: hashToken(accessToken(tokenSecret, id)),
        license_key: product.kind === "license" ? newLicenseKey(product.sku) : null,
        meta: JSON.stringify(payment.meta ?? {}),
        created_at: at,
        updated_at: at,
        revoked_at: null,
        revoke_reason: null,
      };
      if (await orderStore.insertIfAbsent(db, row)) return { kind: "product", id, created: true };
      const winner = await orderStore.byProofKey(db, payment.proofKey);
      if (!winner) throw new Error("grant: conflicting insert vanished");
      return found(winner);
    },
    async find(_item, payment, db) {
      const order = await orderStore.byProofKey(db, payment.proofKey);
      return order ? found(order) : undefined;
    },
    async view(id: string): Promise<FulfilmentView> {
      const order = await orders.get(id);
      return {
        order_id: order.id,
        access_url: orders.accessUrl(order.id),
        sku: order.sku,
        amount_usd: orders.amountUsd(order),
      };
    },
  };
}
