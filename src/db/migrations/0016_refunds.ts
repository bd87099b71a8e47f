import type { Kysely } from "kysely";

// Refunds (issue #22 item 4; src/refunds): one row per order (unique order_id), the signed
// transaction stored before it is broadcast; buyer refund-request challenges; the first opening of
// an access link (what "unused" means for the auto-approve policy).

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("refunds")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("order_id", "text", (c) => c.notNull().unique())
    .addColumn("rail", "text", (c) => c.notNull())
    .addColumn("method", "text", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("origin", "text", (c) => c.notNull())
    .addColumn("reason", "text", (c) => c.notNull())
    .addColumn("actor", "text", (c) => c.notNull())
    .addColumn("payer", "text")
    .addColumn("network", "text")
    .addColumn("asset", "text")
    .addColumn("amount_units", "text")
    .addColumn("amount_cents", "integer", (c) => c.notNull())
    .addColumn("tx", "text")
    .addColumn("raw_tx", "text")
    .addColumn("evm_nonce", "integer")
    .addColumn("valid_until", "integer")
    .addColumn("attempts", "integer", (c) => c.notNull())
    .addColumn("error", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .addColumn("approved_at", "text")
    .addColumn("done_at", "text")
    .execute();
  await db.schema.createIndex("refunds_state_idx").on("refunds").columns(["state", "updated_at"]).execute();
  await db.schema
    .createTable("refund_challenges")
    .addColumn("nonce", "text", (c) => c.primaryKey())
    .addColumn("order_id", "text", (c) => c.notNull())
    .addColumn("chain", "text", (c) => c.notNull())
    .addColumn("address", "text", (c) => c.notNull())
    .addColumn("message", "text", (c) => c.notNull())
    .addColumn("expires_at", "text", (c) => c.notNull())
    .addColumn("used_at", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("access_opens")
    .addColumn("order_id", "text", (c) => c.primaryKey())
    .addColumn("first_opened_at", "text", (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("access_opens").execute();
  await db.schema.dropTable("refund_challenges").execute();
  await db.schema.dropTable("refunds").execute();
}
