/** Freemium identities from POST /api/join-work. Neither the token nor the seed phrase is stored. */
export interface IdentityRow {
  /** idn_… */
  id: string;
  name: string;
  intent: string;
  /** random salt (hex) and SHA-256(salt ‖ seed) (hex): lets the holder of the seed renew the token */
  seed_salt: string;
  seed_sha256: string;
  /** HMAC-SHA256(identity key, token) (hex); unique */
  token_hash: string;
  expires_at: string;
  created_at: string;
  updated_at: string;
}

export interface IdentityTables {
  identities: IdentityRow;
}
