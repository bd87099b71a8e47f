import { randomBytes } from "node:crypto";
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.js";
import type { OrderRow } from "../orders/tables.js";
import { protocolOfRail } from "../payments/protocols.js";
import { refundStore } from "./store.js";
import type { RefundRow, RefundState } from "./tables.js";

/**
 * What a refund of this order sends, and how: the path of the protocol that took the payment
 * (src/payments/protocols.ts) and the payment's own payer, asset and atomic amount.
 */
export async function planRefund(
  db: Kysely<Database>,
  order: OrderRow,
  r: { origin: "operator" | "buyer"; actor: string; reason: string; state: RefundState; at: string },
): Promise<RefundRow> {
  const { origin, actor, reason, state, at } = r;
  const base: RefundRow = {
    id: `rf_${randomBytes(12).toString("hex")}`,
    order_id: order.id,
    rail: order.rail,
    method: "manual",
    state,
    origin,
    reason,
    actor,
    payer: null,
    network: null,
    asset: null,
    amount_units: null,
    amount_cents: order.amount_cents,
    tx: null,
    raw_tx: null,
    evm_nonce: null,
    valid_until: null,
    attempts: 0,
    error: null,
    created_at: at,
    updated_at: at,
    approved_at: state === "approved" ? at : null,
    done_at: null,
  };
  // How the protocol that took the payment gives it back (src/payments/protocols.ts).
  const path = protocolOfRail(order.rail)?.refund ?? "hand";
  if (path === "processor") return { ...base, method: "card" };
  const paid = await refundStore.paidWith(db, order.id);
  // x402 and MPP (one ledger): back to the payer, the same atomic amount of the same asset.
  if (path === "chain") {
    const chain = paid?.network?.startsWith("eip155:") ? "evm" : paid?.network?.startsWith("solana:") ? "solana" : null;
    if (paid?.payer && paid.amount_units && paid.asset && chain && /^[0-9]{1,30}$/.test(paid.amount_units)) {
      return {
        ...base,
        method: chain,
        payer: paid.payer,
        network: paid.network,
        asset: paid.asset,
        amount_units: paid.amount_units,
      };
    }
  }
  // Manual claims (crypto, wire) and anything without a complete on-chain record: owed, paid by hand.
  return { ...base, payer: paid?.payer ?? null };
}
