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

export interface OrderTables {
  orders: OrderRow;
  audit_log: AuditRow;
}
