/** Tables of the shared hash chain (migration 0008): `src/db/hash-chain.ts`, docs/olympiad-records.md. */

export interface ChainEntryRow {
  /** the chain's name: `olympiad`, `audit` */
  chain: string;
  /** 1, 2, 3, … per chain, without gaps */
  seq: number;
  /** ISO 8601 time of the append */
  at: string;
  /** what the entry records (`result`, `correction`, an audit action, …) */
  kind: string;
  /** canonical JSON of the entry's body (sorted keys, no whitespace) */
  body: string;
  /** the previous entry's hash; 64 zeros for seq 1 */
  prev_hash: string;
  /** SHA-256 (hex) of the entry's canonical serialization */
  hash: string;
}

/** One row per chain: its last seq and hash. Locked by every append (the chain's write lock). */
export interface ChainHeadRow {
  chain: string;
  seq: number;
  hash: string;
  updated_at: string;
}

export interface HashChainTables {
  chain_entries: ChainEntryRow;
  chain_heads: ChainHeadRow;
}
