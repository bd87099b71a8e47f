import type { Kysely } from "kysely";
import type { Catalog, Product } from "../../catalog/service.js";
import type { Config } from "../../config.js";
import type { Database } from "../../db/schema.js";
import type { PricedItem } from "../../orders/priced-item.js";
import type { OrderService } from "../../orders/service.js";
import { CardCheckout, type CheckoutResult, type SessionStatus } from "./checkout.js";
import type { CardContext } from "./context.js";
import { type CardRefundResult, CardRefunds } from "./refunds.js";
import { CardSessionSync, type SyncResult } from "./session-sync.js";
import { cardStore } from "./store.js";
import type { Stripe } from "./stripe.js";
import { receiveWebhook, type WebhookHandlers, type WebhookResult } from "./webhook-events.js";

export { CHECKOUT_REUSE_WINDOW_MS, type CheckoutResult, type SessionStatus } from "./checkout.js";
export { isEmail, SESSION_ID, sessionProofKey } from "./context.js";
export type { CardRefundResult } from "./refunds.js";
export type { WebhookResult } from "./webhook-events.js";

/**
 * The card rails (Stripe), one facade over three parts:
 * - checkout (checkout.ts opens hosted Checkout Sessions and answers their status; session-sync.ts
 *   re-reads a session and grants a paid one once, proof key `stripe:session:<cs_id>`);
 * - webhook events (webhook-events.ts: verify, record once, `webhookAction` → one dispatch);
 * - refunds and disputes (refunds.ts: one take-back sequence, and the operator's `refundOrder`).
 */
export class CardService {
  private readonly checkout: CardCheckout;
  private readonly sessions: CardSessionSync;
  private readonly refunds: CardRefunds;
  private readonly ctx: CardContext;
  private readonly handlers: WebhookHandlers;

  constructor(
    db: Kysely<Database>,
    orders: OrderService,
    catalog: Catalog,
    config: Config,
    stripe: Stripe | undefined,
  ) {
    this.ctx = { db, orders, catalog, config, stripe };
    this.refunds = new CardRefunds(this.ctx);
    this.sessions = new CardSessionSync(this.ctx, this.refunds);
    this.checkout = new CardCheckout(this.ctx, (id) => this.sessions.sync(id));
    this.handlers = {
      syncSession: (id, failed) => this.sessions.sync(id, failed),
      chargeRefunded: (id) => this.refunds.chargeRefunded(id),
      disputeCreated: (id) => this.refunds.disputeCreated(id),
    };
  }

  /** Creates (or, for a retry inside the window, reuses) a hosted Checkout Session. */
  createCheckout(input: { sku: string; email: string; rail?: string | null | undefined }): Promise<CheckoutResult> {
    return this.checkout.createCheckout(input);
  }

  /** A hosted Checkout Session for a priced item other than a catalog product (a suite quote). */
  createItemCheckout(item: PricedItem, email: string): Promise<CheckoutResult> {
    return this.checkout.createItemCheckout(item, email);
  }

  /** The Checkout Session parameters for one product (mode payment, catalog price in USD). */
  sessionParams(product: Product, email: string): Stripe.Checkout.SessionCreateParams {
    return this.checkout.sessionParams(product, email);
  }

  /** Verifies and handles one webhook delivery (webhook-events.ts). */
  receiveWebhook(raw: Buffer, signature: string | undefined): Promise<WebhookResult> {
    return receiveWebhook(this.ctx, this.handlers, raw, signature);
  }

  /**
   * Re-reads a session from Stripe and moves our record to the state Stripe reports.
   * `eventType` only matters for a failed bank debit (Stripe's session then looks like a pending one).
   */
  syncSession(sessionId: string, eventType?: string): Promise<SyncResult> {
    return this.sessions.sync(sessionId, eventType === "checkout.session.async_payment_failed");
  }

  /** What the success page and `GET /api/checkout/:id` show. */
  status(sessionId: string): Promise<SessionStatus> {
    return this.checkout.status(sessionId);
  }

  /** An operator refunds a card order in full through Stripe (one refund per order, ever). */
  refundOrder(orderId: string, actor: string, reason: string): Promise<CardRefundResult> {
    return this.refunds.refundOrder(orderId, actor, reason);
  }

  listEvents(q: { limit: number; offset: number; type?: string; search?: string; unprocessed?: boolean }) {
    return cardStore.listEvents(this.ctx.db, q);
  }
}
