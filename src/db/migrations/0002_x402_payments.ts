import { type Kysely, sql } from "kysely";

// x402 payment proofs (the replay ledger) and settlement attempts. Portable subset only.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("payment_proofs")
    .addColumn("proof_key", "text", (c) => c.primaryKey())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("rail", "text", (c) => c.notNull())
    .addColumn("network", "text", (c) => c.notNull())
    .addColumn("sku", "text", (c) => c.notNull())
    .addColumn("amount_cents", "integer", (c) => c.notNull())
    .addColumn("amount_units", "text", (c) => c.notNull())
    .addColumn("payer", "text")
    .addColumn("request_fingerprint", "text", (c) => c.notNull())
    .addColumn("request", "text", (c) => c.notNull().defaultTo("{}"))
    .addColumn("state", "text", (c) =>
      c.notNull().check(sql`state in ('reserved', 'settling', 'settled', 'granted', 'failed', 'pending_unknown')`),
    )
    .addColumn("payload", "text", (c) => c.notNull())
    .addColumn("requirements", "text", (c) => c.notNull())
    .addColumn("expected_tx", "text")
    .addColumn("settlement_tx", "text", (c) => c.unique())
    .addColumn("order_id", "text", (c) => c.unique())
    .addColumn("settle_response", "text")
    .addColumn("error_reason", "text")
    .addColumn("error_detail", "text")
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .addColumn("settled_at", "text")
    .execute();
  await db.schema.createIndex("payment_proofs_state_idx").on("payment_proofs").column("state").execute();

  await db.schema
    .createTable("settlement_attempts")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("proof_key", "text", (c) => c.notNull().references("payment_proofs.proof_key"))
    .addColumn("at", "text", (c) => c.notNull())
    .addColumn("source", "text", (c) => c.notNull())
    .addColumn("outcome", "text", (c) => c.notNull())
    .addColumn("transaction", "text")
    .addColumn("reason", "text")
    .addColumn("detail", "text")
    .execute();
  await db.schema.createIndex("settlement_attempts_proof_idx").on("settlement_attempts").column("proof_key").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("settlement_attempts").execute();
  await db.schema.dropTable("payment_proofs").execute();
}
