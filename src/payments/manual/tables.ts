/** Manual rails: claims for crypto transfers and wire/ACH invoices, decided by an operator. */

/** `closed`: another claim of the same transfer was approved. */
export type ClaimState = "submitted" | "approved" | "rejected" | "revoked" | "closed";

export interface ClaimRow {
  /** clm_… (random, 128 bits: also the buyer's handle to read the claim's state). */
  id: string;
  rail: string;
  sku: string;
  email: string;
  amount_cents: number;
  /** As given by the payer (trimmed). */
  tx_ref: string | null;
  /** Canonical: `solana:<sig>`, `evm:<hash lower-case>`, `btc:<txid>`, `wire:<ref>` (several claims may share one). */
  tx_key: string | null;
  company: string | null;
  billing_address: string | null;
  /** Preferred invoice currency (ISO 4217, lower case); wire claims only. */
  currency: string | null;
  /** net-15 for wire invoices, null otherwise. */
  terms: string | null;
  state: ClaimState;
  order_id: string | null;
  decided_by: string | null;
  decided_at: string | null;
  reason: string | null;
  created_at: string;
  updated_at: string;
  /** The wallet that sent the transfer: read from the chain, else as the claimant states it. */
  sender: string | null;
  sender_source: "chain" | "claimant" | null;
  /** 1 when the claimant signed for `sender` (proves control of the paying wallet). */
  sender_proven: number;
}

export interface ClaimTables {
  claims: ClaimRow;
}
