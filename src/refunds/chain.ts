/** A signed refund transaction, stored before it is broadcast. */
export interface SignedRefund {
  /** EVM transaction hash / Solana signature. */
  tx: string;
  /** EVM: 0x serialized; Solana: base64 wire bytes. */
  raw_tx: string;
  evm_nonce: number | null;
  /** Solana: lastValidBlockHeight of the blockhash the transaction is bound to. */
  valid_until: number | null;
}

/**
 * What the chain says of a stored transaction: `confirmed` (landed, succeeded); `reverted`
 * (landed, moved nothing); `pending` (not seen, may still land: rebroadcast the same bytes);
 * `dead` (not on chain and can never land: EVM nonce used by another transaction, Solana blockhash
 * expired), so only then may a new transaction be signed.
 */
export type OnChain = "confirmed" | "reverted" | "pending" | "dead";

/** One chain's refund wallet. */
export interface ChainRefunder {
  readonly address: string;
  /** Signs a transfer of `units` of `asset` to `to` (nothing is sent). */
  sign(to: string, asset: string, units: bigint, minNonce?: number): Promise<SignedRefund>;
  /** Sends stored bytes (again); a duplicate of what the chain already has is not an error. */
  broadcast(raw: string): Promise<void>;
  status(tx: string, nonceOrValidUntil: number | null): Promise<OnChain>;
}
