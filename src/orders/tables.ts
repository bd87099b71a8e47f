export interface OrderRow {
  id: string;
  /** Canonical payment proof key: one proof → at most one order, enforced by a unique index. */
  proof_key: string;
  sku: string;
  amount_cents: number;
  currency: string;
  /** x402_base_usdc | x402_solana_usdc | card_checkout | card_payment_link | crypto_manual_* | wire_invoice_ach */
  rail: string;
  /** On-chain transaction, Stripe payment intent or claimed reference. */
  transaction_ref: string | null;
  email: string | null;
  agent_id: string | null;
  status: "active" | "revoked" | "refunded";
  access_token_hash: string;
  license_key: string | null;
  meta: string;
  created_at: string;
  updated_at: string;
  revoked_at: string | null;
  revoke_reason: string | null;
}

export interface AuditRow {
  id: string;
  at: string;
  actor: string;
  action: string;
  subject: string;
  detail: string;
}

/**
 * One on-chain payment (chain + transaction id): at most one order, whatever the rail. The holder
 * (an x402 proof key or `claim:<id>`) is the only one that may grant on it.
 */
export interface PaymentReferenceRow {
  /** `<chain>:<tx>`: `evm:0x…` (lower case), `solana:<signature>`, `btc:<txid>`. */
  ref: string;
  chain: PaymentChain;
  tx: string;
  holder: string;
  order_id: string | null;
  /** The paying wallet (lower-case EVM address, Solana address), when known. */
  payer: string | null;
  rail: string;
  created_at: string;
  granted_at: string | null;
  /** The suite job a quote's payment bought (instead of an order). */
  job_id: string | null;
}

export type PaymentChain = "evm" | "solana" | "btc";

/** Single-use challenges of order recovery by wallet signature. */
export interface RecoveryChallengeRow {
  nonce: string;
  chain: string;
  address: string;
  message: string;
  expires_at: string;
  used_at: string | null;
  created_at: string;
}

export interface OrderTables {
  orders: OrderRow;
  audit_log: AuditRow;
  payment_references: PaymentReferenceRow;
  recovery_challenges: RecoveryChallengeRow;
}
