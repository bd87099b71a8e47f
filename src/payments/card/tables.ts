/** Card rails (Stripe): hosted checkout sessions we know of, and every webhook event received. */

export type CardSessionStatus = "open" | "awaiting_payment" | "paid" | "failed" | "expired" | "mismatch";

export interface CardSessionRow {
  /** Stripe Checkout Session id (cs_…). */
  id: string;
  /** card_checkout (created by POST /api/checkout) or card_payment_link (seen first in a webhook). */
  rail: string;
  sku: string;
  email: string | null;
  amount_cents: number;
  currency: string;
  /** plink_… for payment-link sessions. */
  payment_link_id: string | null;
  payment_intent_id: string | null;
  status: CardSessionStatus;
  /** Hosted checkout URL (checkout sessions only). */
  url: string | null;
  /** Deterministic key of the (sku, email, window) that created it: retried POSTs reuse the session. */
  request_key: string | null;
  order_id: string | null;
  /** Set when a full refund was seen for the payment intent (possibly before the payment event). */
  refunded_at: string | null;
  note: string | null;
  created_at: string;
  updated_at: string;
  /** What the session buys: a catalog `product` (sku) or a suite `quote` (item_ref = quote id). */
  item_kind: "product" | "quote";
  item_ref: string | null;
  /** The priced item this session pays for, as JSON (migration 0017; null on older rows). */
  item: string | null;
  /** The suite job a paid quote session created. */
  job_id: string | null;
}

export interface WebhookEventRow {
  /** Provider event id (evt_…): the dedupe key. */
  id: string;
  provider: string;
  type: string;
  /** Id of the object the event is about (cs_…, ch_…). */
  object_id: string | null;
  livemode: number;
  /** SHA-256 of the raw body as received. */
  payload_sha256: string;
  received_at: string;
  processed_at: string | null;
  /** What handling it did: granted, awaiting_payment, failed, expired, refunded, ignored:<why>, error:<why>. */
  outcome: string | null;
  attempts: number;
}

/** A refund seen on a charge, keyed by payment intent (kept even when the payment event is still to come). */
export interface CardRefundRow {
  payment_intent_id: string;
  charge_id: string;
  amount_refunded_cents: number;
  /** 1 when the charge is fully refunded (the entitlement is revoked), 0 for a partial refund. */
  full: number;
  seen_at: string;
}

export interface CardTables {
  card_sessions: CardSessionRow;
  card_refunds: CardRefundRow;
  webhook_events: WebhookEventRow;
}
