/** States of a payment proof: reserved → settling → settled → granted, or failed / pending_unknown. */
export type ProofState = "reserved" | "settling" | "settled" | "granted" | "failed" | "pending_unknown";

export type ProofKind = "evm_eip3009" | "evm_tx" | "svm_tx";

export interface PaymentProofRow {
  /** Canonical replay key, e.g. `evm:8453:<asset>:<from>:<nonce>`, `evm:8453:tx:<hash>:<logIndex>`, `svm:<cluster>:<message sha256>`. */
  proof_key: string;
  kind: ProofKind;
  /** x402_base_usdc | x402_solana_usdc */
  rail: string;
  network: string;
  sku: string;
  amount_cents: number;
  /** Token atomic units, decimal string. */
  amount_units: string;
  payer: string | null;
  /** sha256 of the canonical request (sku + email + note): same proof, other body → 409. */
  request_fingerprint: string;
  /** JSON: { email, note, agent_id } of the request that reserved the proof. */
  request: string;
  state: ProofState;
  /** JSON of the normalised proof (the signed authorization / transaction), kept for reconciliation. */
  payload: string;
  /** JSON of the payment requirements the proof was checked against. */
  requirements: string;
  /** Settlement transaction known before or after sending (Solana signatures are deterministic). */
  expected_tx: string | null;
  /** The settled on-chain transaction; unique, so one transaction never buys two orders. */
  settlement_tx: string | null;
  order_id: string | null;
  /** JSON SettleResponse returned in PAYMENT-RESPONSE. */
  settle_response: string | null;
  error_reason: string | null;
  error_detail: string | null;
  attempts: number;
  created_at: string;
  updated_at: string;
  settled_at: string | null;
  /**
   * sha256 of the buyer's payment identifier / Idempotency-Key (a secret the chain never sees);
   * unique. A replay of a granted proof gets its order only with the same secret.
   */
  buyer_key_hash: string | null;
  /** What the payment buys: a catalog `product` (item_ref = sku) or a suite `quote` (item_ref = quote id). */
  item_kind: "product" | "quote";
  item_ref: string | null;
  /** The paid route (the resource of the 402). */
  resource: string | null;
  /** The priced item this proof pays for, as JSON (migration 0017; null on older rows). */
  item: string | null;
}

export interface SettlementAttemptRow {
  id: string;
  proof_key: string;
  at: string;
  /** live | reconcile */
  source: string;
  outcome: "success" | "failed" | "pending" | "unavailable";
  transaction: string | null;
  reason: string | null;
  detail: string | null;
}

export interface X402Tables {
  payment_proofs: PaymentProofRow;
  settlement_attempts: SettlementAttemptRow;
}
