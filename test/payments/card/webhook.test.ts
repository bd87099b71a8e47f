import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionStatus } from "../../../src/payments/card/service.js";
import { ENGINES } from "../../support/databases.js";
import { type CardHarness, cardHarness } from "../../support/stripe/harness.js";

const LINK_ID = "plink_1TestZrwPro";

describe.each(ENGINES)("Stripe webhook on %s", (engine) => {
  let h: CardHarness;
  beforeAll(async () => {
    h = await cardHarness(engine, {
      PAYMENT_LINK_ZRW_PRO: "https://buy.stripe.com/test_zrwpro",
      PAYMENT_LINK_ID_ZRW_PRO: LINK_ID,
    });
  });
  afterAll(async () => h.close());

  const session = async (sku = "zrw-pro", email = `b${Math.random().toString(36).slice(2)}@example.com`) => {
    const r = await h.checkout(sku, email);
    expect(r.status).toBe(200);
    return r.body.session_id as string;
  };
  const ordersFor = (sessionId: string) =>
    h.app.services.db.kysely
      .selectFrom("orders")
      .selectAll()
      .where("proof_key", "=", `stripe:session:${sessionId}`)
      .execute();
  const status = async (sessionId: string) => {
    const r = await h.app.inject({ method: "GET", url: `/api/checkout/${sessionId}` });
    return r.json() as SessionStatus;
  };
  const tokenOf = (url: string | null) => url?.split("/access/")[1] ?? "";

  it("grants a paid session once: order, access URL, licence key, success status", async () => {
    const id = await session("zrw-pro", "paid@example.com");
    h.stripe.pay(id);
    const r = await h.deliver(h.stripe.sessionEvent("checkout.session.completed", id));
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ received: true, duplicate: false, outcome: "granted" });
    const [order, ...rest] = await ordersFor(id);
    expect(rest).toHaveLength(0);
    expect(order).toMatchObject({
      sku: "zrw-pro",
      amount_cents: 24900,
      rail: "card_checkout",
      email: "paid@example.com",
    });
    expect(order?.transaction_ref).toMatch(/^pi_test_/);
    const s = await status(id);
    expect(s).toMatchObject({ status: "paid", order: { order_id: order?.id, status: "active" } });
    const access = await h.app.inject({ method: "GET", url: `/access/${tokenOf(s.access_url)}` });
    expect(access.statusCode).toBe(200);
    const lic = await h.app.inject({ method: "GET", url: `/api/licenses/${order?.license_key}` });
    expect(lic.json()).toMatchObject({ valid: true, code: "valid", sku: "zrw-pro" });
    // the session was re-read from Stripe before granting
    expect(h.stripe.requests.some((q) => q.method === "GET" && q.path === `/v1/checkout/sessions/${id}`)).toBe(true);
  });

  it("does nothing for a repeated event, and one session never yields two orders", async () => {
    const id = await session();
    h.stripe.pay(id);
    const evt = h.stripe.sessionEvent("checkout.session.completed", id);
    expect((await h.deliver(evt)).body.outcome).toBe("granted");
    const again = await h.deliver(evt);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ duplicate: true, handled: false, outcome: "granted" });
    const other = await h.deliver(h.stripe.sessionEvent("checkout.session.async_payment_succeeded", id));
    expect(other.body.outcome).toBe("already_granted");
    expect(await ordersFor(id)).toHaveLength(1);
    const rows = await h.app.services.db.kysely
      .selectFrom("webhook_events")
      .selectAll()
      .where("id", "=", evt.id)
      .execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]?.processed_at).not.toBeNull();
  });

  it("grants exactly one order under concurrent deliveries of different events for one session", async () => {
    const id = await session();
    h.stripe.pay(id);
    const events = [
      ...Array.from({ length: 4 }, () => h.stripe.sessionEvent("checkout.session.completed", id)),
      ...Array.from({ length: 4 }, () => h.stripe.sessionEvent("checkout.session.async_payment_succeeded", id)),
    ];
    const evt = events[0]!;
    const results = await Promise.all([...events, evt, evt].map((e) => h.deliver(e)));
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(results.filter((r) => r.body.handled === true && r.body.outcome === "granted")).toHaveLength(1);
    expect(await ordersFor(id)).toHaveLength(1);
  });

  it("waits on an unpaid completed session (bank debit) and grants on async_payment_succeeded", async () => {
    const id = await session("consulting");
    h.stripe.completeUnpaid(id);
    const first = await h.deliver(h.stripe.sessionEvent("checkout.session.completed", id));
    expect(first.body.outcome).toBe("awaiting_payment");
    expect(await ordersFor(id)).toHaveLength(0);
    const pending = await status(id);
    expect(pending.status).toBe("awaiting_payment");
    expect(pending.pending_reason).toMatch(/bank debit/);
    expect(pending.access_url).toBeNull();
    h.stripe.settle(id);
    const paid = await h.deliver(h.stripe.sessionEvent("checkout.session.async_payment_succeeded", id));
    expect(paid.body.outcome).toBe("granted");
    expect(await ordersFor(id)).toHaveLength(1);
    expect((await status(id)).status).toBe("paid");
  });

  it("closes a session on async_payment_failed, and a late stale completed event keeps it failed", async () => {
    const id = await session("consulting");
    h.stripe.completeUnpaid(id);
    const stale = h.stripe.sessionEvent("checkout.session.completed", id);
    const failed = await h.deliver(h.stripe.sessionEvent("checkout.session.async_payment_failed", id));
    expect(failed.body.outcome).toBe("failed");
    const late = await h.deliver(stale);
    expect(late.body.outcome).toBe("stale:failed");
    expect((await status(id)).status).toBe("failed");
    expect(await ordersFor(id)).toHaveLength(0);
  });

  it("closes an expired session", async () => {
    const id = await session();
    h.stripe.expire(id);
    const r = await h.deliver(h.stripe.sessionEvent("checkout.session.expired", id));
    expect(r.body.outcome).toBe("expired");
    expect((await status(id)).status).toBe("expired");
    expect(await ordersFor(id)).toHaveLength(0);
  });

  it("ends in the right state when events arrive out of order", async () => {
    // async success delivered before the (stale, unpaid) completed event
    const a = await session("consulting");
    h.stripe.completeUnpaid(a);
    const staleCompleted = h.stripe.sessionEvent("checkout.session.completed", a);
    h.stripe.settle(a);
    expect((await h.deliver(h.stripe.sessionEvent("checkout.session.async_payment_succeeded", a))).body.outcome).toBe(
      "granted",
    );
    expect((await h.deliver(staleCompleted)).body.outcome).toBe("already_granted");
    expect((await status(a)).status).toBe("paid");
    expect(await ordersFor(a)).toHaveLength(1);

    // the refund arrives before the payment event: the order is created refunded, never usable
    const b = await session("zrw-n00b");
    h.stripe.pay(b);
    const charge = h.stripe.refund(b);
    expect((await h.deliver(h.stripe.chargeEvent("charge.refunded", charge))).body.outcome).toBe("refund_recorded");
    expect((await h.deliver(h.stripe.sessionEvent("checkout.session.completed", b))).body.outcome).toBe("granted");
    const [order] = await ordersFor(b);
    expect(order?.status).toBe("refunded");
    const lic = await h.app.inject({ method: "GET", url: `/api/licenses/${order?.license_key}` });
    expect(lic.json()).toMatchObject({ valid: false, code: "refunded" });
  });

  it("rejects a bad or missing signature with 400 and records nothing", async () => {
    const id = await session();
    h.stripe.pay(id);
    const good = h.stripe.sessionEvent("checkout.session.completed", id);
    const count = async () =>
      Number(
        (
          await h.app.services.db.kysely
            .selectFrom("webhook_events")
            .select((eb) => eb.fn.countAll<number | string>().as("n"))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = await count();
    const tampered = await h.deliver({
      payload: good.payload.replace('"livemode":false', '"livemode":true'),
      header: good.header,
    });
    expect(tampered.status).toBe(400);
    expect(tampered.body.code).toBe("bad_signature");
    const wrongSecret = h.stripe.sessionEvent("checkout.session.completed", id, { secret: "whsec_wrong" });
    expect((await h.deliver(wrongSecret)).body.code).toBe("bad_signature");
    const stale = h.stripe.event(
      "checkout.session.completed",
      { id },
      { timestamp: Math.floor(Date.now() / 1000) - 3600 },
    );
    expect((await h.deliver(stale)).body.code).toBe("bad_signature");
    const missing = await h.app.inject({
      method: "POST",
      url: "/api/stripe/webhook",
      payload: good.payload,
      headers: { "content-type": "application/json" },
    });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().code).toBe("missing_signature");
    expect(await count()).toBe(before);
    expect(await ordersFor(id)).toHaveLength(0);
  });

  it("ignores an unknown session and a session that is not ours, without orders", async () => {
    const before = await h.countOrders();
    const unknown = h.stripe.event("checkout.session.completed", {
      id: "cs_test_doesnotexist",
      object: "checkout.session",
      payment_status: "paid",
      status: "complete",
    });
    const r = await h.deliver(unknown);
    expect(r.status).toBe(200);
    expect(r.body.outcome).toBe("ignored:unknown_session");
    const foreign = h.stripe.paymentLinkSession("plink_someoneelse", 24900, "x@example.com");
    h.stripe.pay(foreign.id);
    const f = await h.deliver(h.stripe.sessionEvent("checkout.session.completed", foreign.id));
    expect(f.body.outcome).toBe("ignored:unknown_payment_link");
    expect(await h.countOrders()).toBe(before);
    const unhandled = await h.deliver(h.stripe.event("customer.created", { id: "cus_1" }));
    expect(unhandled.body.outcome).toBe("ignored:unhandled_type");
  });

  it("refuses a session whose amount or sku does not match the catalog", async () => {
    const id = await session("zrw-l33t");
    h.stripe.pay(id);
    const s = h.stripe.sessions.get(id)!;
    s.amount_total = 100;
    const r = await h.deliver(h.stripe.sessionEvent("checkout.session.completed", id));
    expect(r.body.outcome).toMatch(/^mismatch:amount/);
    expect(await ordersFor(id)).toHaveLength(0);
    expect((await status(id)).status).toBe("mismatch");
    const audit = await h.app.services.db.kysely
      .selectFrom("audit_log")
      .selectAll()
      .where("subject", "=", id)
      .execute();
    expect(audit.map((a) => a.action)).toEqual(["card.session_mismatch"]);
  });

  it("revokes access on a full refund (not on a partial one)", async () => {
    const id = await session("shard-zip");
    h.stripe.pay(id);
    await h.deliver(h.stripe.sessionEvent("checkout.session.completed", id));
    const s = await status(id);
    const token = tokenOf(s.access_url);
    const partial = h.stripe.refund(id, 500);
    expect((await h.deliver(h.stripe.chargeEvent("charge.refunded", partial))).body.outcome).toBe("partial_refund");
    expect((await h.app.inject({ method: "GET", url: `/access/${token}` })).statusCode).toBe(200);
    const full = h.stripe.refund(id);
    expect((await h.deliver(h.stripe.chargeEvent("charge.refunded", full))).body.outcome).toBe("refunded");
    const gone = await h.app.inject({ method: "GET", url: `/access/${token}` });
    expect(gone.statusCode).toBe(410);
    expect(gone.json().code).toBe("access_refunded");
    const [order] = await ordersFor(id);
    const lic = await h.app.inject({ method: "GET", url: `/api/licenses/${order?.license_key}` });
    expect(lic.json()).toMatchObject({ valid: false, code: "refunded" });
  });

  it("revokes access on a dispute (chargeback) and tells the operator", async () => {
    const id = await session("blackjack");
    h.stripe.pay(id);
    await h.deliver(h.stripe.sessionEvent("checkout.session.completed", id));
    const token = tokenOf((await status(id)).access_url);
    const dispute = h.stripe.dispute(id);
    const r = await h.deliver(h.stripe.event("charge.dispute.created", { ...dispute }));
    expect(r.body.outcome).toBe("revoked");
    const gone = await h.app.inject({ method: "GET", url: `/access/${token}` });
    expect(gone.json().code).toBe("access_revoked");
    const audit = await h.app.services.db.kysely
      .selectFrom("audit_log")
      .selectAll()
      .where("subject", "=", dispute.id)
      .execute();
    expect(audit.map((a) => a.action)).toEqual(["card.dispute"]);
  });

  it("matches a static payment link purchase by its payment link id", async () => {
    const s = h.stripe.paymentLinkSession(LINK_ID, 24900, "link-buyer@example.com");
    h.stripe.pay(s.id);
    const r = await h.deliver(h.stripe.sessionEvent("checkout.session.completed", s.id));
    expect(r.body.outcome).toBe("granted");
    const [order] = await ordersFor(s.id);
    expect(order).toMatchObject({ sku: "zrw-pro", rail: "card_payment_link", email: "link-buyer@example.com" });
    expect(JSON.parse(order?.meta ?? "{}")).toMatchObject({ payment_link: LINK_ID });
    // the link's success redirect fulfils before the webhook lands
    const early = h.stripe.paymentLinkSession(LINK_ID, 24900, "early@example.com");
    h.stripe.pay(early.id);
    const shown = await status(early.id);
    expect(shown).toMatchObject({ status: "paid", rail: "card_payment_link", sku: "zrw-pro" });
    expect((await h.deliver(h.stripe.sessionEvent("checkout.session.completed", early.id))).body.outcome).toBe(
      "already_granted",
    );
    // a link session at the wrong price is not granted
    const cheap = h.stripe.paymentLinkSession(LINK_ID, 100, "cheap@example.com");
    h.stripe.pay(cheap.id);
    expect((await h.deliver(h.stripe.sessionEvent("checkout.session.completed", cheap.id))).body.outcome).toMatch(
      /^mismatch/,
    );
    expect(await ordersFor(cheap.id)).toHaveLength(0);
  });

  it("keeps an event whose handling failed (Stripe down) and processes its redelivery", async () => {
    const id = await session();
    h.stripe.pay(id);
    const evt = h.stripe.sessionEvent("checkout.session.completed", id);
    h.stripe.failNext(500, 3);
    const down = await h.deliver(evt);
    expect(down.status).toBeGreaterThanOrEqual(500);
    expect(["stripe_error", "stripe_unavailable"]).toContain(down.body.code);
    const row = await h.app.services.db.kysely
      .selectFrom("webhook_events")
      .selectAll()
      .where("id", "=", evt.id)
      .executeTakeFirst();
    expect(row?.processed_at).toBeNull();
    expect(row?.outcome).toMatch(/^error:/);
    const retry = await h.deliver(evt);
    expect(retry.status).toBe(200);
    expect(retry.body.outcome).toBe("granted");
    expect(await ordersFor(id)).toHaveLength(1);
  });

  it("fulfils from the success page when the webhook has not landed yet", async () => {
    const id = await session("donate");
    h.stripe.pay(id);
    const s = await status(id);
    expect(s.status).toBe("paid");
    expect(s.access_url).toMatch(/^http:\/\/lab\.test\/access\//);
    expect(await ordersFor(id)).toHaveLength(1);
    const later = await h.deliver(h.stripe.sessionEvent("checkout.session.completed", id));
    expect(later.body.outcome).toBe("already_granted");
    expect(await ordersFor(id)).toHaveLength(1);
  });
});
