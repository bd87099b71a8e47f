import { nowIso } from "../../db/database.js";
import { Problem } from "../../http/problem.js";
import { type CardContext, SESSION_ID, sha256, stripeProblem } from "./context.js";
import { cardStore } from "./store.js";
import { type Stripe, StripeSdk } from "./stripe.js";
import type { WebhookEventRow } from "./tables.js";

export interface WebhookResult {
  event_id: string;
  type: string;
  /** The event id had been received before. */
  duplicate: boolean;
  /** true when this delivery did the handling; false when it answers the stored outcome of an earlier one. */
  handled: boolean;
  outcome: string;
}

/**
 * What a verified Stripe event asks of us (the shape of Medusa's `getWebhookActionAndData`). An event
 * is only a trigger: each action re-reads its object from Stripe before anything changes.
 * - paid: a session may have been paid (`checkout.session.completed` / `…async_payment_succeeded`);
 * - failed: a delayed payment failed (`checkout.session.async_payment_failed`);
 * - expired: a session expired (`checkout.session.expired`);
 * - refunded: a charge was refunded, fully or in part (`charge.refunded`);
 * - disputed: a chargeback was opened (`charge.dispute.created`);
 * - ignored: anything else, or an event without a usable object id (`reason` becomes the outcome).
 */
export type WebhookAction =
  | { action: "paid" | "failed" | "expired"; data: { sessionId: string } }
  | { action: "refunded"; data: { chargeId: string } }
  | { action: "disputed"; data: { disputeId: string } }
  | { action: "ignored"; data: { reason: string } };

const SESSION_ACTIONS: Record<string, "paid" | "failed" | "expired"> = {
  "checkout.session.completed": "paid",
  "checkout.session.async_payment_succeeded": "paid",
  "checkout.session.async_payment_failed": "failed",
  "checkout.session.expired": "expired",
};

/** Turns a verified Stripe event (its type and `data.object`) into an action and its data. Pure. */
export function webhookAction(type: string, object: unknown): WebhookAction {
  const raw = (object as { id?: unknown } | null | undefined)?.id;
  const id = typeof raw === "string" && raw !== "" ? raw : null;
  const session = Object.hasOwn(SESSION_ACTIONS, type) ? SESSION_ACTIONS[type] : undefined;
  if (session) {
    if (!id || !SESSION_ID.test(id)) return { action: "ignored", data: { reason: "no_session_id" } };
    return { action: session, data: { sessionId: id } };
  }
  if (type === "charge.refunded") {
    return id
      ? { action: "refunded", data: { chargeId: id } }
      : { action: "ignored", data: { reason: "no_charge_id" } };
  }
  if (type === "charge.dispute.created") {
    return id
      ? { action: "disputed", data: { disputeId: id } }
      : { action: "ignored", data: { reason: "no_dispute_id" } };
  }
  return { action: "ignored", data: { reason: "unhandled_type" } };
}

/** What the webhook flow calls for each action; each answers the outcome stored with the event. */
export interface WebhookHandlers {
  syncSession(sessionId: string, failed: boolean): Promise<{ outcome: string }>;
  chargeRefunded(chargeId: string): Promise<string>;
  disputeCreated(disputeId: string): Promise<string>;
}

/** Runs one action. */
export async function dispatch(a: WebhookAction, h: WebhookHandlers): Promise<string> {
  switch (a.action) {
    case "paid":
    case "failed":
    case "expired":
      return (await h.syncSession(a.data.sessionId, a.action === "failed")).outcome;
    case "refunded":
      return h.chargeRefunded(a.data.chargeId);
    case "disputed":
      return h.disputeCreated(a.data.disputeId);
    case "ignored":
      return `ignored:${a.data.reason}`;
  }
}

/**
 * Verifies and handles one webhook delivery. Bad or missing signature → 400 and nothing is
 * recorded. Events are stored by id: a delivery of an already processed event does nothing.
 */
export async function receiveWebhook(
  ctx: CardContext,
  handlers: WebhookHandlers,
  raw: Buffer,
  signature: string | undefined,
): Promise<WebhookResult> {
  const secret = ctx.config.stripe.webhookSecret;
  if (!secret) {
    throw new Problem(
      503,
      "stripe_webhook_not_configured",
      "Stripe webhooks are not configured (STRIPE_WEBHOOK_SECRET is not set): no event can be verified.",
      { missing: { stripe_webhook: ["STRIPE_WEBHOOK_SECRET"] } },
    );
  }
  // The signature is checked first, with the static helper (no API key needed): a bad or
  // missing signature is always 400, whatever else is missing; only a signed event can get 503.
  if (!signature) throw new Problem(400, "missing_signature", "The Stripe-Signature header is required.");
  let event: Stripe.Event;
  try {
    event = StripeSdk.webhooks.constructEvent(raw, signature, secret);
  } catch {
    throw new Problem(400, "bad_signature", "The Stripe-Signature does not verify for this body.");
  }
  if (!ctx.stripe) {
    throw new Problem(
      503,
      "stripe_webhook_not_configured",
      "This event is signed correctly, but it cannot be handled: STRIPE_SECRET_KEY is not set (sessions are re-read from Stripe). Stripe delivers it again later.",
      { missing: { stripe_webhook: ["STRIPE_SECRET_KEY"] } },
    );
  }
  const object = (event.data?.object ?? {}) as { id?: unknown };
  const row: WebhookEventRow = {
    id: event.id,
    provider: "stripe",
    type: event.type,
    object_id: typeof object.id === "string" ? object.id : null,
    livemode: event.livemode ? 1 : 0,
    payload_sha256: sha256(raw),
    received_at: nowIso(),
    processed_at: null,
    outcome: null,
    attempts: 1,
  };
  const { row: stored, fresh } = await cardStore.recordEvent(ctx.db, row);
  if (!fresh && stored.processed_at !== null) {
    return {
      event_id: event.id,
      type: event.type,
      duplicate: true,
      handled: false,
      outcome: stored.outcome ?? "processed",
    };
  }
  let outcome: string;
  try {
    outcome = await dispatch(webhookAction(event.type, object), handlers);
  } catch (err) {
    const problem = err instanceof Problem ? err : stripeProblem(err, "handling the event");
    await cardStore.noteEventError(ctx.db, event.id, `error:${problem.code}`);
    throw problem; // non-2xx: Stripe delivers the event again later
  }
  await cardStore.finishEvent(ctx.db, event.id, outcome, nowIso());
  return { event_id: event.id, type: event.type, duplicate: !fresh, handled: true, outcome };
}
