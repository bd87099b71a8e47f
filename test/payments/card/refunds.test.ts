import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENGINES } from "../../support/databases.js";
import { type CardHarness, cardHarness } from "../../support/stripe/harness.js";

/**
 * Refunds and disputes run one take-back sequence (src/payments/card/refunds.ts): whatever brings a
 * card payment back revokes the order once, however often Stripe redelivers. The operator's
 * `refundOrder` asks the Stripe stand-in for one refund per order, ever.
 */
describe.each(ENGINES)("card refunds and disputes on %s", (engine) => {
  let h: CardHarness;
  beforeAll(async () => {
    h = await cardHarness(engine);
  });
  afterAll(async () => h.close());

  /** A paid, granted card order: its session id and order id. */
  const paidOrder = async (sku = "zrw-pro") => {
    const r = await h.checkout(sku, `r${Math.random().toString(36).slice(2)}@example.com`);
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
    return { sessionId, orderId: order.id };
  };
  const order = (id: string) =>
    h.app.services.db.kysely.selectFrom("orders").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
  const audits = async (subject: string, action?: string) => {
    let q = h.app.services.db.kysely.selectFrom("audit_log").selectAll().where("subject", "=", subject);
    if (action) q = q.where("action", "=", action);
    return q.execute();
  };
  const refundPosts = () => h.stripe.requests.filter((q) => q.method === "POST" && q.path === "/v1/refunds");
  const refundsOf = (pi: string | null | undefined) =>
    [...h.stripe.refunds.values()].filter((r) => r.payment_intent === pi);

  it("a full refund revokes exactly once, however often charge.refunded is delivered", async () => {
    const { sessionId, orderId } = await paidOrder();
    const charge = h.stripe.refund(sessionId);
    const first = h.stripe.chargeEvent("charge.refunded", charge);
    expect((await h.deliver(first)).body.outcome).toBe("refunded");
    // the same event again (a redelivery) and another event about the same charge
    expect((await h.deliver(first)).body).toMatchObject({ duplicate: true, handled: false, outcome: "refunded" });
    expect((await h.deliver(h.stripe.chargeEvent("charge.refunded", charge))).body.outcome).toBe("refunded");
    expect((await order(orderId)).status).toBe("refunded");
    expect(await audits(orderId, "order.refunded")).toHaveLength(1);
    const session = await h.app.services.db.kysely
      .selectFrom("card_sessions")
      .selectAll()
      .where("id", "=", sessionId)
      .executeTakeFirstOrThrow();
    expect(session.refunded_at).not.toBeNull();
  });

  it("a dispute revokes exactly once, however often it is delivered; a refund after it still ends refunded", async () => {
    const { sessionId, orderId } = await paidOrder("blackjack");
    const dispute = h.stripe.dispute(sessionId);
    const evt = h.stripe.event("charge.dispute.created", { ...dispute });
    expect((await h.deliver(evt)).body.outcome).toBe("revoked");
    expect((await h.deliver(evt)).body).toMatchObject({ duplicate: true, handled: false });
    expect((await h.deliver(h.stripe.event("charge.dispute.created", { ...dispute }))).body.outcome).toBe("revoked");
    expect((await order(orderId)).status).toBe("revoked");
    expect(await audits(orderId, "order.revoked")).toHaveLength(1);
    expect((await audits(dispute.id, "card.dispute"))[0]?.detail).toContain('"orders_revoked":1');
    // the same sequence, refund flavour: revoked → refunded, once
    const charge = h.stripe.refund(sessionId);
    expect((await h.deliver(h.stripe.chargeEvent("charge.refunded", charge))).body.outcome).toBe("refunded");
    expect((await h.deliver(h.stripe.chargeEvent("charge.refunded", charge))).body.outcome).toBe("refunded");
    expect((await order(orderId)).status).toBe("refunded");
    expect(await audits(orderId, "order.refunded")).toHaveLength(1);
  });

  it("refundOrder: concurrent and repeated calls make one Stripe refund; the order ends refunded", async () => {
    const { sessionId, orderId } = await paidOrder();
    const before = refundPosts().length;
    const [a, b] = await Promise.all([
      h.app.services.card.refundOrder(orderId, "alice", "asked by the buyer"),
      h.app.services.card.refundOrder(orderId, "bob", "double click"),
    ]);
    expect(a).toMatchObject({ order_id: orderId, refund_status: "succeeded", order_status: "refunded" });
    expect(b.refund_id).toBe(a.refund_id);
    expect((await order(orderId)).status).toBe("refunded");
    const pi = h.stripe.sessions.get(sessionId)?.payment_intent;
    expect(refundsOf(pi)).toHaveLength(1);
    expect(refundsOf(pi)[0]?.amount).toBe(24900);
    // a later call does not ask Stripe again
    const again = await h.app.services.card.refundOrder(orderId, "carol", "again");
    expect(again).toMatchObject({ already_refunded: true, order_status: "refunded", refund_id: null });
    const posts = refundPosts().slice(before);
    expect(posts.length).toBeLessThanOrEqual(2);
    expect(new Set(posts.map((p) => p.idempotencyKey))).toEqual(new Set([`labphi:refund:${orderId}`]));
    // Stripe's own events about the refund change nothing more
    const sent = h.stripe.takeEvents();
    expect(sent.map((e) => e.type)).toEqual(["refund.created", "charge.refunded"]);
    for (const e of sent) expect((await h.deliver(e)).status).toBe(200);
    expect(await audits(orderId, "order.refunded")).toHaveLength(1);
    expect(await audits(orderId, "card.refund")).toHaveLength(1);
    expect((await audits(orderId, "order.refunded"))[0]?.actor).toBe("alice");
  });

  it("refundOrder: a pending refund leaves the order active until charge.refunded lands; a retry replays it", async () => {
    const { sessionId, orderId } = await paidOrder("shard-zip");
    h.stripe.refundStatus = "pending";
    try {
      const r = await h.app.services.card.refundOrder(orderId, "alice", "bank debit");
      expect(r).toMatchObject({ refund_status: "pending", order_status: "active", already_refunded: false });
      const retry = await h.app.services.card.refundOrder(orderId, "alice", "retry");
      expect(retry.refund_id).toBe(r.refund_id);
      expect(refundsOf(h.stripe.sessions.get(sessionId)?.payment_intent)).toHaveLength(1);
      expect((await audits(orderId, "card.refund")).map((a) => JSON.parse(a.detail).replayed)).toEqual([false, true]);
      const [refunded] = h.stripe.takeEvents("charge.refunded");
      h.stripe.takeEvents();
      expect(refunded).toBeDefined();
      expect((await h.deliver(refunded as NonNullable<typeof refunded>)).body.outcome).toBe("refunded");
      expect((await order(orderId)).status).toBe("refunded");
    } finally {
      h.stripe.refundStatus = "succeeded";
    }
  });

  it("refundOrder: a retry after Stripe failed refunds once; unknown orders are 404", async () => {
    const { sessionId, orderId } = await paidOrder("gao-entry");
    h.stripe.failNext(500, 2); // the SDK retries once: both attempts fail
    await expect(h.app.services.card.refundOrder(orderId, "alice", "x")).rejects.toMatchObject({
      code: "stripe_error",
    });
    expect((await order(orderId)).status).toBe("active");
    const ok = await h.app.services.card.refundOrder(orderId, "alice", "x");
    expect(ok.order_status).toBe("refunded");
    expect(refundsOf(h.stripe.sessions.get(sessionId)?.payment_intent)).toHaveLength(1);
    h.stripe.takeEvents();
    await expect(h.app.services.card.refundOrder("ord_nope", "alice", "x")).rejects.toMatchObject({
      status: 404,
      code: "order_not_found",
    });
  });
});
