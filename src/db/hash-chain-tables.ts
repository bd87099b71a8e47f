/** Tables of the shared hash chain (migration 0008). OWNED BY THE HASH-CHAIN HELPER: fill in. */
// biome-ignore lint/complexity/noBannedTypes: filled in by the hash-chain work
export type HashChainTables = {};
