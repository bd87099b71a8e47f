import { describe, expect, it } from "vitest";
import { dispatch, type WebhookAction, webhookAction } from "../../../src/payments/card/webhook-events.js";

const CS = "cs_test_a1B2c3";

/** `webhookAction` is pure: a verified Stripe event (type + data.object) → one action and its data. */
describe("webhookAction: a Stripe event → { action, data }", () => {
  it.each([
    ["checkout.session.completed", { action: "paid", data: { sessionId: CS } }],
    ["checkout.session.async_payment_succeeded", { action: "paid", data: { sessionId: CS } }],
    ["checkout.session.async_payment_failed", { action: "failed", data: { sessionId: CS } }],
    ["checkout.session.expired", { action: "expired", data: { sessionId: CS } }],
  ])("%s → session action", (type, expected) => {
    expect(webhookAction(type, { id: CS, object: "checkout.session" })).toEqual(expected);
  });

  it("charge.refunded → refunded with the charge id", () => {
    expect(webhookAction("charge.refunded", { id: "ch_1", object: "charge" })).toEqual({
      action: "refunded",
      data: { chargeId: "ch_1" },
    });
  });

  it("charge.dispute.created → disputed with the dispute id", () => {
    expect(webhookAction("charge.dispute.created", { id: "dp_1", object: "dispute" })).toEqual({
      action: "disputed",
      data: { disputeId: "dp_1" },
    });
  });

  it.each([
    ["refund.created", { id: "re_1" }, "unhandled_type"],
    ["charge.succeeded", { id: "ch_1" }, "unhandled_type"],
    ["payment_intent.succeeded", { id: "pi_1" }, "unhandled_type"],
    ["toString", { id: CS }, "unhandled_type"],
    ["__proto__", { id: CS }, "unhandled_type"],
    ["", { id: CS }, "unhandled_type"],
    ["checkout.session.completed", {}, "no_session_id"],
    ["checkout.session.completed", { id: "" }, "no_session_id"],
    ["checkout.session.completed", { id: 42 }, "no_session_id"],
    ["checkout.session.completed", { id: "pi_not_a_session" }, "no_session_id"],
    ["checkout.session.expired", { id: "cs_bad id" }, "no_session_id"],
    ["checkout.session.completed", null, "no_session_id"],
    ["charge.refunded", {}, "no_charge_id"],
    ["charge.refunded", { id: 7 }, "no_charge_id"],
    ["charge.dispute.created", undefined, "no_dispute_id"],
  ])("%s with %j → ignored (%s)", (type, object, reason) => {
    expect(webhookAction(type, object)).toEqual({ action: "ignored", data: { reason } });
  });
});

describe("dispatch: one flow decides per action", () => {
  const calls: string[] = [];
  const handlers = {
    async syncSession(id: string, failed: boolean) {
      calls.push(`sync:${id}:${failed}`);
      return { outcome: "synced" };
    },
    async chargeRefunded(id: string) {
      calls.push(`refund:${id}`);
      return "refunded";
    },
    async disputeCreated(id: string) {
      calls.push(`dispute:${id}`);
      return "revoked";
    },
  };

  it("calls exactly the handler of the action, and answers its outcome", async () => {
    const cases: [WebhookAction, string, string[]][] = [
      [{ action: "paid", data: { sessionId: CS } }, "synced", [`sync:${CS}:false`]],
      [{ action: "expired", data: { sessionId: CS } }, "synced", [`sync:${CS}:false`]],
      [{ action: "failed", data: { sessionId: CS } }, "synced", [`sync:${CS}:true`]],
      [{ action: "refunded", data: { chargeId: "ch_9" } }, "refunded", ["refund:ch_9"]],
      [{ action: "disputed", data: { disputeId: "dp_9" } }, "revoked", ["dispute:dp_9"]],
      [{ action: "ignored", data: { reason: "unhandled_type" } }, "ignored:unhandled_type", []],
    ];
    for (const [action, outcome, expected] of cases) {
      calls.length = 0;
      expect(await dispatch(action, handlers)).toBe(outcome);
      expect(calls).toEqual(expected);
    }
  });
});
