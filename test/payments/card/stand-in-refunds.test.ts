import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StripeStandIn } from "../../support/stripe/server.js";

/**
 * The Stripe stand-in's `POST /v1/refunds`, driven by the real `stripe` SDK: what Stripe does that
 * the service relies on (idempotent keys, a refunded charge refuses another refund, the charge moves
 * at once, `charge.refunded` is sent and verifies with the webhook secret).
 */
describe("Stripe stand-in: refunds", () => {
  let s: StripeStandIn;
  let sdk: Stripe;
  beforeAll(async () => {
    s = await new StripeStandIn().start();
    sdk = new Stripe(s.secretKey, { host: "127.0.0.1", port: s.port, protocol: "http", maxNetworkRetries: 0 });
  });
  afterAll(async () => s.stop());

  const paidSession = async (amount = 1000) => {
    const session = await sdk.checkout.sessions.create({
      mode: "payment",
      line_items: [{ quantity: 1, price_data: { currency: "usd", unit_amount: amount, product_data: { name: "x" } } }],
    });
    const paid = s.pay(session.id);
    return paid.payment_intent as string;
  };
  const chargeOf = (pi: string) => [...s.charges.values()].find((c) => c.payment_intent === pi);

  it("refunds a payment intent in full, moves the charge and sends refund.created + charge.refunded", async () => {
    const pi = await paidSession(2500);
    s.takeEvents();
    const r = await sdk.refunds.create({ payment_intent: pi, metadata: { order_id: "ord_1" } });
    expect(r).toMatchObject({ object: "refund", amount: 2500, payment_intent: pi, status: "succeeded" });
    expect(r.metadata).toEqual({ order_id: "ord_1" });
    expect(chargeOf(pi)).toMatchObject({ amount_refunded: 2500, refunded: true, id: r.charge });
    expect((await sdk.refunds.retrieve(r.id)).id).toBe(r.id);
    const sent = s.takeEvents();
    expect(sent.map((e) => e.type)).toEqual(["refund.created", "charge.refunded"]);
    const evt = Stripe.webhooks.constructEvent(sent[1]?.payload ?? "", sent[1]?.header ?? "", s.webhookSecret);
    expect(evt.data.object).toMatchObject({ id: r.charge, refunded: true, amount_refunded: 2500 });
  });

  it("replays an idempotent request, refuses the key with other parameters, and never refunds twice", async () => {
    const pi = await paidSession();
    const key = `labphi:refund:${pi}`;
    const a = await sdk.refunds.create({ payment_intent: pi }, { idempotencyKey: key });
    const b = await sdk.refunds.create({ payment_intent: pi }, { idempotencyKey: key });
    expect(b.id).toBe(a.id);
    expect(b.lastResponse.headers["idempotent-replayed"]).toBe("true");
    await expect(
      sdk.refunds.create({ payment_intent: pi, metadata: { other: "x" } }, { idempotencyKey: key }),
    ).rejects.toMatchObject({ type: "StripeIdempotencyError", statusCode: 400 });
    await expect(sdk.refunds.create({ payment_intent: pi })).rejects.toMatchObject({
      statusCode: 400,
      code: "charge_already_refunded",
    });
    expect([...s.refunds.values()].filter((r) => r.payment_intent === pi)).toHaveLength(1);
  });

  it("partial refunds add up; more than is left is amount_too_large; unknown intents are resource_missing", async () => {
    const pi = await paidSession(1000);
    await sdk.refunds.create({ payment_intent: pi, amount: 400 });
    expect(chargeOf(pi)).toMatchObject({ amount_refunded: 400, refunded: false });
    await expect(sdk.refunds.create({ payment_intent: pi, amount: 601 })).rejects.toMatchObject({
      code: "amount_too_large",
    });
    const rest = await sdk.refunds.create({ payment_intent: pi });
    expect(rest.amount).toBe(600);
    expect(chargeOf(pi)).toMatchObject({ amount_refunded: 1000, refunded: true });
    await expect(sdk.refunds.create({ payment_intent: "pi_test_unknown" })).rejects.toMatchObject({
      code: "resource_missing",
    });
  });

  it("a pending refund (bank debit) still moves the charge and sends charge.refunded, as Stripe does", async () => {
    const pi = await paidSession();
    s.takeEvents();
    s.refundStatus = "pending";
    try {
      const r = await sdk.refunds.create({ payment_intent: pi });
      expect(r.status).toBe("pending");
      expect(chargeOf(pi)?.refunded).toBe(true);
      expect(s.takeEvents("charge.refunded")).toHaveLength(1);
    } finally {
      s.refundStatus = "succeeded";
    }
  });
});
