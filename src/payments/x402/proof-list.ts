import type { Kysely } from "kysely";
import type { Database } from "../../db/schema.js";
import { proofStore } from "./store.js";
import type { ProofState } from "./tables.js";

/** Operator view of the proof ledger (no payloads: they are bearer payment authorizations). */
export async function listProofs(db: Kysely<Database>, q: { state?: ProofState; limit: number; offset: number }) {
  const { total, items } = await proofStore.list(db, q);
  return {
    total,
    items: items.map((r) => ({
      proof_key: r.proof_key,
      kind: r.kind,
      rail: r.rail,
      network: r.network,
      sku: r.sku,
      amount_units: r.amount_units,
      payer: r.payer,
      state: r.state,
      settlement_tx: r.settlement_tx,
      expected_tx: r.expected_tx,
      order_id: r.order_id,
      error_reason: r.error_reason,
      error_detail: r.error_detail,
      attempts: r.attempts,
      created_at: r.created_at,
      updated_at: r.updated_at,
      settled_at: r.settled_at,
    })),
  };
}
