import { nowIso } from "../../db/database.js";
import { Problem } from "../../http/problem.js";
import type { OrderRow } from "../../orders/tables.js";
import { type CardContext, isStripeNotFound, requireStripe, stripeProblem } from "./context.js";
import { cardStore } from "./store.js";
import { idOf, type Stripe } from "./stripe.js";

/** The rails whose orders a Stripe refund pays back. */
export const CARD_RAILS: ReadonlySet<string> = new Set(["card_checkout", "card_payment_link"]);

/** Stripe's idempotency key of the one refund an order may get: a retry (any reason, any operator) replays it. */
export const refundIdempotencyKey = (orderId: string) => `labphi:refund:${orderId}`;

/** How a card payment is taken back: the orders' new state, who did it and why, and what the audit log gets. */
export interface TakeBack {
  to: "refunded" | "revoked";
  actor: string;
  reason: string;
  audit?: { action: string; subject: string; detail: Record<string, unknown> };
}

export interface CardRefundResult {
  order_id: string;
  /** Stripe's refund (re_…); null when the order was already refunded and Stripe was not asked. */
  refund_id: string | null;
  /** Stripe's refund status (`succeeded`, `pending`, `requires_action`, `failed`, `canceled`), or null. */
  refund_status: string | null;
  /** The order after the call: `refunded` once Stripe confirmed (now, or later by `charge.refunded`). */
  order_status: OrderRow["status"];
  /** true when the order was refunded before this call (nothing was sent to Stripe). */
  already_refunded: boolean;
}

/**
 * Refunds and disputes of card payments. Whatever takes a payment back (a refund seen on the charge,
 * a chargeback, an operator's refund) runs ONE sequence, `takeBack`: find the orders the payment
 * intent paid, move each (refunded or revoked), mark its session, audit. Every step is idempotent
 * (conditional updates), so a redelivered event or a repeated call changes nothing twice.
 */
export class CardRefunds {
  /** Operator refunds in flight, by order id: a concurrent second call waits for the first. */
  private readonly inFlight = new Map<string, Promise<CardRefundResult>>();

  constructor(private readonly ctx: CardContext) {}

  /**
   * The one sequence. `targets` are the (session, order) pairs to act on; by default every session
   * of the payment intent that has an order. Answers how many orders it acted on.
   */
  async takeBack(pi: string, how: TakeBack, targets?: { sessionId: string; orderId: string }[]): Promise<number> {
    const { db, orders } = this.ctx;
    const found =
      targets ??
      (await cardStore.sessionsByPaymentIntent(db, pi)).flatMap((s) =>
        s.order_id ? [{ sessionId: s.id, orderId: s.order_id }] : [],
      );
    for (const t of found) {
      await orders.revoke(t.orderId, how.actor, how.reason, how.to);
      if (how.to === "refunded") await cardStore.markRefunded(db, t.sessionId, nowIso());
    }
    if (how.audit) {
      await orders.audit(how.actor, how.audit.action, how.audit.subject, {
        ...how.audit.detail,
        orders_revoked: found.length,
      });
    }
    return found.length;
  }

  /** A paid session whose payment intent was fully refunded before it was granted ends refunded too. */
  async revokeIfRefunded(pi: string | null, target: { sessionId: string; orderId: string }): Promise<void> {
    if (!pi) return;
    const refund = await cardStore.refund(this.ctx.db, pi);
    if (!refund?.full) return;
    await this.takeBack(pi, { to: "refunded", actor: "stripe", reason: `charge ${refund.charge_id} refunded` }, [
      target,
    ]);
  }

  /**
   * `charge.refunded` (and an operator refund Stripe answered `succeeded`): the charge is re-read; the
   * refund is stored by payment intent (so a refund seen before the payment event still ends
   * refunded); a full refund takes the orders back.
   */
  async chargeRefunded(chargeId: string, by?: { actor: string; reason: string }): Promise<string> {
    const stripe = requireStripe(this.ctx);
    let charge: Stripe.Charge;
    try {
      charge = await stripe.charges.retrieve(chargeId);
    } catch (err) {
      if (isStripeNotFound(err)) return "ignored:unknown_charge";
      throw stripeProblem(err, "reading the charge");
    }
    const pi = idOf(charge.payment_intent);
    if (!pi) return "ignored:no_payment_intent";
    await cardStore.recordRefund(this.ctx.db, {
      payment_intent_id: pi,
      charge_id: charge.id,
      amount_refunded_cents: charge.amount_refunded,
      full: charge.refunded ? 1 : 0,
      seen_at: nowIso(),
    });
    if (!charge.refunded) return "partial_refund";
    const revoked = await this.takeBack(pi, {
      to: "refunded",
      actor: by?.actor ?? "stripe",
      reason: by?.reason ?? `charge ${charge.id} refunded`,
    });
    return revoked > 0 ? "refunded" : "refund_recorded";
  }

  /**
   * `charge.dispute.created` (a chargeback): the dispute is re-read and the orders it is about are
   * revoked; the audit log gets `card.dispute` either way.
   */
  async disputeCreated(disputeId: string): Promise<string> {
    const stripe = requireStripe(this.ctx);
    let dispute: Stripe.Dispute;
    try {
      dispute = await stripe.disputes.retrieve(disputeId);
    } catch (err) {
      if (isStripeNotFound(err)) return "ignored:unknown_dispute";
      throw stripeProblem(err, "reading the dispute");
    }
    const pi = idOf(dispute.payment_intent);
    if (!pi) return "ignored:no_payment_intent";
    const revoked = await this.takeBack(pi, {
      to: "revoked",
      actor: "stripe",
      reason: `dispute ${dispute.id} (${dispute.reason})`,
      audit: {
        action: "card.dispute",
        subject: dispute.id,
        detail: { payment_intent: pi, reason: dispute.reason, amount_cents: dispute.amount },
      },
    });
    return revoked > 0 ? "revoked" : "dispute_recorded";
  }

  /**
   * An operator refunds a card order in full: Stripe is asked for a refund of the order's payment
   * intent with an idempotency key derived from the order id (a retry, concurrent or later, gets the
   * same refund back, never a second one). The order becomes `refunded` at once when Stripe answers
   * `succeeded`, else when `charge.refunded` lands; both paths run `takeBack`, which is idempotent.
   */
  refundOrder(orderId: string, actor: string, reason: string): Promise<CardRefundResult> {
    const running = this.inFlight.get(orderId);
    if (running) return running;
    const run = this.refundOnce(orderId, actor, reason).finally(() => this.inFlight.delete(orderId));
    this.inFlight.set(orderId, run);
    return run;
  }

  private async refundOnce(orderId: string, actor: string, reason: string): Promise<CardRefundResult> {
    const { db, orders } = this.ctx;
    const order = await orders.get(orderId);
    if (!CARD_RAILS.has(order.rail)) {
      throw new Problem(409, "refund_not_card", `Order ${orderId} was not paid by card (rail ${order.rail}).`, {
        rail: order.rail,
      });
    }
    const done = (refund: Stripe.Refund | null, status: OrderRow["status"], already = false): CardRefundResult => ({
      order_id: orderId,
      refund_id: refund?.id ?? null,
      refund_status: refund?.status ?? null,
      order_status: status,
      already_refunded: already,
    });
    if (order.status === "refunded") return done(null, order.status, true);
    const sessionId = order.proof_key.startsWith("stripe:session:") ? order.proof_key.slice(15) : null;
    const session = sessionId ? await cardStore.session(db, sessionId) : undefined;
    const pi = session?.payment_intent_id ?? order.transaction_ref;
    if (!pi) {
      throw new Problem(409, "refund_no_payment", `Order ${orderId} has no Stripe payment to refund.`);
    }
    const stripe = requireStripe(this.ctx);
    let refund: Stripe.Response<Stripe.Refund>;
    try {
      // Parameters depend on the order only: Stripe refuses a key reused with other parameters.
      refund = await stripe.refunds.create(
        { payment_intent: pi, metadata: { order_id: orderId, source: "labphi" } },
        { idempotencyKey: refundIdempotencyKey(orderId) },
      );
    } catch (err) {
      if ((err as { code?: string })?.code === "charge_already_refunded") {
        throw new Problem(
          409,
          "card_already_refunded",
          "Stripe says this payment is already refunded (from elsewhere); the order turns refunded when its charge.refunded event lands.",
          { payment_intent: pi },
        );
      }
      throw stripeProblem(err, "creating the refund");
    }
    await orders.audit(actor, "card.refund", orderId, {
      reason,
      refund_id: refund.id,
      refund_status: refund.status,
      amount_cents: refund.amount,
      payment_intent: pi,
      replayed: refund.lastResponse?.headers?.["idempotent-replayed"] === "true",
    });
    const chargeId = idOf(refund.charge);
    if (refund.status === "succeeded" && chargeId) {
      await this.chargeRefunded(chargeId, { actor, reason: `refund ${refund.id}: ${reason}` });
    }
    return done(refund, (await orders.get(orderId)).status);
  }
}
