import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CardHarness, cardHarness } from "../support/stripe/harness.js";

/**
 * Issue #22 item 4: the operator's one refund route covers card orders too, through the card rail's
 * `refundOrder` (Stripe refunds.create, idempotent per order): one Stripe refund, the order
 * refunded, a second refund → 409. A manual claim's order is recorded as owed.
 */
describe("operator refund of a card order (Stripe stand-in, SQLite)", () => {
  let h: CardHarness;
  beforeAll(async () => {
    h = await cardHarness("sqlite");
  });
  afterAll(async () => h?.close());

  it("POST /api/admin/orders/:id/refund → one Stripe refund of the payment intent, order refunded; again → 409", async () => {
    const r = await h.checkout("zrw-pro", "card-refund@example.com");
    const sessionId = r.body.session_id as string;
    h.stripe.pay(sessionId);
    expect((await h.deliver(h.stripe.sessionEvent("checkout.session.completed", sessionId))).body.outcome).toBe(
      "granted",
    );
    const order = await h.app.services.db.kysely
      .selectFrom("orders")
      .selectAll()
      .where("proof_key", "=", `stripe:session:${sessionId}`)
      .executeTakeFirstOrThrow();
    const pi = h.stripe.sessions.get(sessionId)?.payment_intent;
    const res = await h.admin("POST", `/api/admin/orders/${order.id}/refund`, { reason: "asked" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ state: "done", method: "card", order_id: order.id });
    expect(res.body.transaction).toMatch(/^re_/);
    expect([...h.stripe.refunds.values()].filter((x) => x.payment_intent === pi)).toHaveLength(1);
    const after = await h.app.services.orders.get(order.id);
    expect(after.status).toBe("refunded");
    const again = await h.admin("POST", `/api/admin/orders/${order.id}/refund`, {});
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("refund_exists");
    expect([...h.stripe.refunds.values()].filter((x) => x.payment_intent === pi)).toHaveLength(1);
  });
});
