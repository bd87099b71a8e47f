import { type Kysely, sql } from "kysely";

// Portable subset only: TEXT ids, INTEGER cents, TEXT ISO timestamps, TEXT JSON.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("settings")
    .addColumn("key", "text", (c) => c.primaryKey())
    .addColumn("value", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("orders")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("proof_key", "text", (c) => c.notNull().unique())
    .addColumn("sku", "text", (c) => c.notNull())
    .addColumn("amount_cents", "integer", (c) => c.notNull())
    .addColumn("currency", "text", (c) => c.notNull())
    .addColumn("rail", "text", (c) => c.notNull())
    .addColumn("transaction_ref", "text")
    .addColumn("email", "text")
    .addColumn("agent_id", "text")
    .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('active', 'revoked', 'refunded')`))
    .addColumn("access_token_hash", "text", (c) => c.notNull().unique())
    .addColumn("license_key", "text", (c) => c.unique())
    .addColumn("meta", "text", (c) => c.notNull().defaultTo("{}"))
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .addColumn("revoked_at", "text")
    .addColumn("revoke_reason", "text")
    .execute();
  await db.schema.createIndex("orders_sku_idx").on("orders").column("sku").execute();
  await db.schema.createIndex("orders_created_idx").on("orders").column("created_at").execute();
  await db.schema.createIndex("orders_email_idx").on("orders").column("email").execute();

  await db.schema
    .createTable("audit_log")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("at", "text", (c) => c.notNull())
    .addColumn("actor", "text", (c) => c.notNull())
    .addColumn("action", "text", (c) => c.notNull())
    .addColumn("subject", "text", (c) => c.notNull())
    .addColumn("detail", "text", (c) => c.notNull().defaultTo("{}"))
    .execute();
  await db.schema.createIndex("audit_log_at_idx").on("audit_log").column("at").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("audit_log").execute();
  await db.schema.dropTable("orders").execute();
  await db.schema.dropTable("settings").execute();
}
