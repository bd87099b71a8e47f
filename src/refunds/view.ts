import type { RefundMethod, RefundRow, RefundState } from "./tables.js";

/** A refund as the routes answer it. */
export interface RefundView {
  refund_id: string;
  order_id: string;
  state: RefundState;
  method: RefundMethod;
  origin: "operator" | "buyer";
  rail: string;
  reason: string;
  payer: string | null;
  network: string | null;
  asset: string | null;
  amount_units: string | null;
  amount_cents: number;
  transaction: string | null;
  error: string | null;
  created_at: string;
  approved_at: string | null;
  done_at: string | null;
}

/** The public view of a refund row (no raw transaction bytes). */
export function refundView(r: RefundRow): RefundView {
  return {
    refund_id: r.id,
    order_id: r.order_id,
    state: r.state,
    method: r.method,
    origin: r.origin,
    rail: r.rail,
    reason: r.reason,
    payer: r.payer,
    network: r.network,
    asset: r.asset,
    amount_units: r.amount_units,
    amount_cents: r.amount_cents,
    transaction: r.tx,
    error: r.error,
    created_at: r.created_at,
    approved_at: r.approved_at,
    done_at: r.done_at,
  };
}
