import type { Product } from "../../catalog/service.js";
import { isUniqueViolation, nowIso } from "../../db/database.js";
import type { Fulfilled } from "../../orders/fulfilment.js";
import { type PricedItem, productItem, quoteItem } from "../../orders/priced-item.js";
import type { OrderService } from "../../orders/service.js";
import { type CardContext, isStripeNotFound, requireStripe, sessionProofKey, stripeProblem } from "./context.js";
import type { CardRefunds } from "./refunds.js";
import { cardStore } from "./store.js";
import { idOf, type Stripe } from "./stripe.js";
import type { CardSessionRow, CardSessionStatus } from "./tables.js";

export interface SyncResult {
  outcome: string;
  session?: CardSessionRow;
  granted?: Fulfilled;
}

/**
 * The paying half of card checkout: re-reads a session from Stripe, checks it against what we sold
 * (amount, currency, sku or quote) and grants a paid one exactly once (the order for a product, the
 * job for a quote), in one transaction with the session's move to `paid`.
 */
export class CardSessionSync {
  private readonly skuByLinkId = new Map<string, string>();
  private readonly orders: OrderService;

  constructor(
    private readonly ctx: CardContext,
    private readonly refunds: CardRefunds,
  ) {
    this.orders = ctx.orders;
    for (const [sku, linkId] of Object.entries(ctx.config.paymentLinkIds)) this.skuByLinkId.set(linkId, sku);
  }

  /**
   * Re-reads a session from Stripe and moves our record to the state Stripe reports. Called from
   * the webhook and from the success page; safe to run concurrently and repeatedly.
   * `failed` only matters for a failed bank debit (Stripe's session then looks like a pending one).
   */
  async sync(sessionId: string, failed = false): Promise<SyncResult> {
    const { db, orders } = this.ctx;
    const stripe = requireStripe(this.ctx);
    let s: Stripe.Checkout.Session;
    try {
      s = await stripe.checkout.sessions.retrieve(sessionId);
    } catch (err) {
      if (isStripeNotFound(err)) return { outcome: "ignored:unknown_session" };
      throw stripeProblem(err, "reading the checkout session");
    }
    const local = await cardStore.session(db, s.id);
    if (local?.item_kind === "quote") return this.syncQuote(s, local);
    if (!local && s.metadata?.source === "labphi" && s.metadata.item_kind === "quote") {
      return { outcome: "ignored:unknown_quote_session" };
    }
    const linkId = idOf(s.payment_link);
    let sku: string | undefined;
    let rail: string;
    if (local) {
      sku = local.sku;
      rail = local.rail;
    } else if (linkId) {
      sku = this.skuByLinkId.get(linkId);
      rail = "card_payment_link";
      if (!sku) return { outcome: "ignored:unknown_payment_link" };
    } else if (s.metadata?.source === "labphi" && s.metadata.sku) {
      sku = s.metadata.sku; // created by us, local row lost before it was written
      rail = "card_checkout";
    } else {
      return { outcome: "ignored:not_ours" };
    }

    const product = this.ctx.catalog.find(sku);
    const mismatch = this.mismatch(s, product, local, linkId);
    const at = nowIso();
    const email = s.customer_details?.email ?? s.customer_email ?? s.metadata?.email ?? local?.email ?? null;
    const pi = idOf(s.payment_intent);
    if (!local) {
      await cardStore.insertSessionIfAbsent(db, {
        id: s.id,
        rail,
        sku,
        email,
        amount_cents: s.amount_total ?? 0,
        currency: s.currency ?? "usd",
        payment_link_id: linkId,
        payment_intent_id: pi,
        status: "open",
        url: null,
        request_key: null,
        order_id: null,
        refunded_at: null,
        note: null,
        created_at: at,
        updated_at: at,
        item_kind: "product",
        item_ref: sku,
        item: product ? JSON.stringify(productItem(product, `${this.ctx.config.baseUrl}/api/checkout`)) : null,
        job_id: null,
      });
    }
    if (mismatch || !product) {
      const note = mismatch ?? "unknown sku";
      const changed = await cardStore.transition(db, s.id, ["open", "awaiting_payment"], {
        status: "mismatch",
        note,
        updated_at: at,
      });
      if (changed) await orders.audit("stripe", "card.session_mismatch", s.id, { note, sku });
      return { outcome: `mismatch:${note}` };
    }

    if (isPaid(s)) {
      const granted = await this.grantSession(s, product, rail, email, pi, linkId);
      await this.refunds.revokeIfRefunded(pi, { sessionId: s.id, orderId: granted.id });
      return {
        outcome: granted.created ? "granted" : "already_granted",
        session: await cardStore.session(db, s.id),
        granted,
      };
    }
    const settle = async (
      from: CardSessionStatus[],
      set: Parameters<typeof cardStore.transition>[3],
      outcome: string,
    ): Promise<SyncResult> => {
      const changed = await cardStore.transition(db, s.id, from, set);
      const after = await cardStore.session(db, s.id);
      // A stale or repeated trigger leaves a settled session as it is, and says so.
      return { outcome: changed || after?.status === set.status ? outcome : `stale:${after?.status}`, session: after };
    };
    if (s.status === "expired") {
      return settle(["open", "awaiting_payment"], { status: "expired", updated_at: at }, "expired");
    }
    if (failed && s.payment_status === "unpaid") {
      return settle(
        ["open", "awaiting_payment"],
        { status: "failed", note: "the delayed payment failed", updated_at: at },
        "failed",
      );
    }
    if (s.status === "complete" && s.payment_status === "unpaid") {
      return settle(
        ["open"],
        { status: "awaiting_payment", payment_intent_id: pi, updated_at: at },
        "awaiting_payment",
      );
    }
    return { outcome: "open", session: await cardStore.session(db, s.id) };
  }

  /** A quote session read from Stripe: checked against our row (amount, currency, mode), then its job granted once. */
  private async syncQuote(s: Stripe.Checkout.Session, local: CardSessionRow): Promise<SyncResult> {
    const { db, orders } = this.ctx;
    const at = nowIso();
    const mismatch =
      s.mode !== "payment"
        ? `mode ${s.mode}`
        : (s.currency ?? "").toLowerCase() !== "usd"
          ? `currency ${s.currency}`
          : s.amount_total !== local.amount_cents
            ? `amount ${s.amount_total} != ${local.amount_cents}`
            : s.metadata?.item_ref && s.metadata.item_ref !== local.item_ref
              ? "quote changed"
              : undefined;
    if (mismatch) {
      const changed = await cardStore.transition(db, s.id, ["open", "awaiting_payment"], {
        status: "mismatch",
        note: mismatch,
        updated_at: at,
      });
      if (changed) await orders.audit("stripe", "card.session_mismatch", s.id, { note: mismatch });
      return { outcome: `mismatch:${mismatch}` };
    }
    if (!isPaid(s)) {
      if (s.status === "expired") {
        await cardStore.transition(db, s.id, ["open", "awaiting_payment"], { status: "expired", updated_at: at });
        return { outcome: "expired", session: await cardStore.session(db, s.id) };
      }
      return { outcome: "open", session: await cardStore.session(db, s.id) };
    }
    const pi = idOf(s.payment_intent);
    const result = await db.transaction().execute(async (trx) => {
      const job = await this.orders.grant(
        itemOfSession(local),
        { proofKey: sessionProofKey(s.id), rail: "card_checkout" },
        trx,
      );
      await cardStore.transition(trx, s.id, ["open", "awaiting_payment", "failed", "expired"], {
        status: "paid",
        job_id: job.id,
        payment_intent_id: pi,
        updated_at: at,
      });
      return job;
    });
    return {
      outcome: result.created ? "granted" : "already_granted",
      session: await cardStore.session(db, s.id),
    };
  }

  /** Why a session must not be granted (amount, currency, sku), or undefined when it checks out. */
  private mismatch(
    s: Stripe.Checkout.Session,
    product: Product | undefined,
    local: CardSessionRow | undefined,
    linkId: string | null,
  ): string | undefined {
    if (!product) return "unknown sku";
    if (s.mode !== "payment") return `mode ${s.mode}`;
    if ((s.currency ?? "").toLowerCase() !== "usd") return `currency ${s.currency}`;
    if (s.amount_total !== product.amountCents) return `amount ${s.amount_total} != ${product.amountCents}`;
    if (local && s.metadata?.sku && s.metadata.sku !== local.sku) return `sku ${s.metadata.sku} != ${local.sku}`;
    if (local?.payment_link_id && linkId !== local.payment_link_id) return "payment link changed";
    return undefined;
  }

  /** Grants a paid product session: the order and the session's move to `paid`, in one transaction. */
  private async grantSession(
    s: Stripe.Checkout.Session,
    product: Product,
    rail: string,
    email: string | null,
    pi: string | null,
    linkId: string | null,
  ): Promise<Fulfilled> {
    const run = () =>
      this.ctx.db.transaction().execute(async (trx) => {
        const granted = await this.orders.grant(
          productItem(product, `${this.ctx.config.baseUrl}/api/checkout`),
          {
            proofKey: sessionProofKey(s.id),
            rail,
            amountCents: s.amount_total ?? product.amountCents,
            currency: "usd",
            transactionRef: pi,
            email,
            meta: { stripe_session: s.id, payment_link: linkId, livemode: s.livemode },
          },
          trx,
        );
        await cardStore.transition(trx, s.id, ["open", "awaiting_payment", "failed", "expired"], {
          status: "paid",
          order_id: granted.id,
          payment_intent_id: pi,
          email,
          updated_at: nowIso(),
        });
        return granted;
      });
    try {
      return await run();
    } catch (err) {
      if (isUniqueViolation(err)) return run(); // a concurrent delivery won: the retry reads its order
      throw err;
    }
  }
}

function isPaid(s: Stripe.Checkout.Session): boolean {
  return s.status === "complete" && (s.payment_status === "paid" || s.payment_status === "no_payment_required");
}

/** What a quote session pays for: the item stored with it (sessions from before migration 0017: rebuilt). */
function itemOfSession(local: CardSessionRow): PricedItem {
  if (local.item) return JSON.parse(local.item) as PricedItem;
  const units = (BigInt(local.amount_cents) * 10_000n).toString();
  return quoteItem({ id: local.item_ref ?? "", amount_units: units, amount_cents: local.amount_cents }, "");
}
