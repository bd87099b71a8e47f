import { type Kysely, sql } from "kysely";

// Who may redeem (issue #9): payments bound to their payer.
// - payment_references: one on-chain payment (chain + transaction id) buys one order, across every rail.
//   Owned by the order core; written in the grant transaction (x402 also reserves its own settlements
//   there as soon as their transaction id is known, so nobody else can redeem them meanwhile).
// - payment_proofs.buyer_key_hash: hash of the buyer's payment identifier / Idempotency-Key (a secret
//   that never goes on chain); a replayed proof is answered with its order only when it matches.
// - claims rebuilt without the unique tx_key (several claims may name one transfer), with the
//   transfer's sender, whether the claimant proved control of it, and the `closed` state.
// - recovery_challenges: single-use nonces of wallet-signature order recovery.
// Portable subset only.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("payment_references")
    .addColumn("ref", "text", (c) => c.primaryKey())
    .addColumn("chain", "text", (c) => c.notNull())
    .addColumn("tx", "text", (c) => c.notNull())
    // who holds it: an x402 proof key or `claim:<id>`; only the holder may grant on it
    .addColumn("holder", "text", (c) => c.notNull())
    .addColumn("order_id", "text", (c) => c.unique())
    .addColumn("payer", "text")
    .addColumn("rail", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("granted_at", "text")
    .execute();
  await db.schema.createIndex("payment_references_payer_idx").on("payment_references").column("payer").execute();
  await db.schema.createIndex("payment_references_holder_idx").on("payment_references").column("holder").execute();

  await db.schema.alterTable("payment_proofs").addColumn("buyer_key_hash", "text").execute();
  await db.schema
    .createIndex("payment_proofs_buyer_key_idx")
    .on("payment_proofs")
    .column("buyer_key_hash")
    .unique()
    .execute();
  await db.schema.createIndex("payment_proofs_payer_idx").on("payment_proofs").column("payer").execute();

  // Existing orders with an on-chain reference keep it (x402 settlements and approved crypto claims).
  const orders = await sql<{
    id: string;
    rail: string;
    transaction_ref: string | null;
    proof_key: string;
    created_at: string;
  }>`select id, rail, transaction_ref, proof_key, created_at from orders where transaction_ref is not null`.execute(db);
  for (const o of orders.rows) {
    const chain =
      o.rail === "x402_base_usdc" || o.rail === "crypto_manual_evm"
        ? "evm"
        : o.rail === "x402_solana_usdc" || o.rail === "crypto_manual_solana"
          ? "solana"
          : o.rail === "crypto_manual_btc"
            ? "btc"
            : undefined;
    if (!chain || !o.transaction_ref) continue;
    const tx = chain === "solana" ? o.transaction_ref : o.transaction_ref.toLowerCase();
    await sql`insert into payment_references (ref, chain, tx, holder, order_id, payer, rail, created_at, granted_at)
      values (${`${chain}:${tx}`}, ${chain}, ${tx}, ${o.proof_key}, ${o.id}, ${null}, ${o.rail}, ${o.created_at}, ${o.created_at})
      on conflict (ref) do nothing`.execute(db);
  }

  await db.schema
    .createTable("claims_v2")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("rail", "text", (c) => c.notNull())
    .addColumn("sku", "text", (c) => c.notNull())
    .addColumn("email", "text", (c) => c.notNull())
    .addColumn("amount_cents", "integer", (c) => c.notNull())
    .addColumn("tx_ref", "text")
    .addColumn("tx_key", "text")
    .addColumn("company", "text")
    .addColumn("billing_address", "text")
    .addColumn("currency", "text")
    .addColumn("terms", "text")
    .addColumn("state", "text", (c) =>
      c.notNull().check(sql`state in ('submitted', 'approved', 'rejected', 'revoked', 'closed')`),
    )
    .addColumn("order_id", "text")
    .addColumn("decided_by", "text")
    .addColumn("decided_at", "text")
    .addColumn("reason", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .addColumn("sender", "text")
    .addColumn("sender_source", "text")
    .addColumn("sender_proven", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`insert into claims_v2 (id, rail, sku, email, amount_cents, tx_ref, tx_key, company, billing_address,
      currency, terms, state, order_id, decided_by, decided_at, reason, created_at, updated_at)
    select id, rail, sku, email, amount_cents, tx_ref, tx_key, company, billing_address, currency, terms, state,
      order_id, decided_by, decided_at, reason, created_at, updated_at from claims`.execute(db);
  await db.schema.dropTable("claims").execute();
  await db.schema.alterTable("claims_v2").renameTo("claims").execute();
  await db.schema.createIndex("claims_v2_created_idx").on("claims").column("created_at").execute();
  await db.schema.createIndex("claims_v2_state_idx").on("claims").column("state").execute();
  await db.schema.createIndex("claims_v2_tx_key_idx").on("claims").column("tx_key").execute();

  await db.schema
    .createTable("recovery_challenges")
    .addColumn("nonce", "text", (c) => c.primaryKey())
    .addColumn("chain", "text", (c) => c.notNull())
    .addColumn("address", "text", (c) => c.notNull())
    .addColumn("message", "text", (c) => c.notNull())
    .addColumn("expires_at", "text", (c) => c.notNull())
    .addColumn("used_at", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("recovery_challenges").execute();
  await db.schema.dropIndex("payment_proofs_buyer_key_idx").execute();
  await db.schema.dropIndex("payment_proofs_payer_idx").execute();
  await db.schema.alterTable("payment_proofs").dropColumn("buyer_key_hash").execute();
  await db.schema.dropTable("payment_references").execute();
}
