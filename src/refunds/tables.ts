/**
 * Refunds (src/refunds): one row per order. On chain the row moves
 * approved → signed (the signed transaction and its hash stored BEFORE broadcasting) → sent → done;
 * without a refund key for the chain (or for manual claims) it is `owed` until the operator marks it
 * `paid` with a reference. A buyer's request waits as `requested` until approved or `rejected`.
 */
export type RefundState = "requested" | "approved" | "signed" | "sent" | "done" | "owed" | "paid" | "rejected";

/** evm: ERC-20 transfer on Base; solana: SPL transfer; card: Stripe refund; manual: by hand. */
export type RefundMethod = "evm" | "solana" | "card" | "manual";

export interface RefundRow {
  /** rf_… */
  id: string;
  /** unique: exactly one refund per order */
  order_id: string;
  rail: string;
  method: RefundMethod;
  state: RefundState;
  /** operator | buyer */
  origin: "operator" | "buyer";
  reason: string;
  /** who asked (admin:<fingerprint>, or buyer:<payer address>) */
  actor: string;
  /** The paying wallet the money goes back to (never an address given in a request). */
  payer: string | null;
  /** CAIP-2 network of the payment (eip155:8453, solana:…). */
  network: string | null;
  /** ERC-20 contract / SPL mint of the payment. */
  asset: string | null;
  /** Token atomic units, decimal string (the payment's amount). */
  amount_units: string | null;
  amount_cents: number;
  /** EVM transaction hash, Solana signature, Stripe refund id, or the operator's reference. */
  tx: string | null;
  /** The signed transaction (EVM: 0x serialized; Solana: base64 wire), stored before broadcast. */
  raw_tx: string | null;
  /** EVM: the nonce of the signed transaction. */
  evm_nonce: number | null;
  /** Solana: lastValidBlockHeight of the signed transaction's blockhash. */
  valid_until: number | null;
  attempts: number;
  error: string | null;
  created_at: string;
  updated_at: string;
  approved_at: string | null;
  done_at: string | null;
}

/** Single-use challenges a buyer signs with the paying wallet to request a refund. */
export interface RefundChallengeRow {
  nonce: string;
  order_id: string;
  chain: "evm" | "solana";
  address: string;
  message: string;
  expires_at: string;
  used_at: string | null;
  created_at: string;
}

/** First opening of an order's access link (the auto-approve policy's "unused"). */
export interface AccessOpenRow {
  order_id: string;
  first_opened_at: string;
}

export interface RefundTables {
  refunds: RefundRow;
  refund_challenges: RefundChallengeRow;
  access_opens: AccessOpenRow;
}
