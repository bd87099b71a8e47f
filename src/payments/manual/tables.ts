/** Manual rails: claims for crypto transfers and wire/ACH invoices, decided by an operator. */

export type ClaimState = "submitted" | "approved" | "rejected" | "revoked";

export interface ClaimRow {
  /** clm_… (random, 128 bits: also the buyer's handle to read the claim's state). */
  id: string;
  rail: string;
  sku: string;
  email: string;
  amount_cents: number;
  /** As given by the payer (trimmed). */
  tx_ref: string | null;
  /** Canonical, unique: `solana:<sig>`, `evm:<hash lower-case>`, `btc:<txid>`, `wire:<ref>`. */
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
}

export interface ClaimTables {
  claims: ClaimRow;
}
