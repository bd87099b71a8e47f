import { type Kysely, PostgresAdapter, sql } from "kysely";

// Human payments: Stripe sessions, webhook events (dedupe by event id), manual claims,
// and the audit log (from 0001) made append-only by triggers on both engines.
// Portable subset only: TEXT ids, INTEGER cents, TEXT ISO timestamps, TEXT JSON.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("card_sessions")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("rail", "text", (c) => c.notNull())
    .addColumn("sku", "text", (c) => c.notNull())
    .addColumn("email", "text")
    .addColumn("amount_cents", "integer", (c) => c.notNull())
    .addColumn("currency", "text", (c) => c.notNull())
    .addColumn("payment_link_id", "text")
    .addColumn("payment_intent_id", "text")
    .addColumn("status", "text", (c) =>
      c.notNull().check(sql`status in ('open', 'awaiting_payment', 'paid', 'failed', 'expired', 'mismatch')`),
    )
    .addColumn("url", "text")
    .addColumn("request_key", "text")
    .addColumn("order_id", "text")
    .addColumn("refunded_at", "text")
    .addColumn("note", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("card_sessions_pi_idx").on("card_sessions").column("payment_intent_id").execute();
  await db.schema.createIndex("card_sessions_request_idx").on("card_sessions").column("request_key").execute();

  await db.schema
    .createTable("card_refunds")
    .addColumn("payment_intent_id", "text", (c) => c.primaryKey())
    .addColumn("charge_id", "text", (c) => c.notNull())
    .addColumn("amount_refunded_cents", "integer", (c) => c.notNull())
    .addColumn("full", "integer", (c) => c.notNull())
    .addColumn("seen_at", "text", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("webhook_events")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("provider", "text", (c) => c.notNull())
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("object_id", "text")
    .addColumn("livemode", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("payload_sha256", "text", (c) => c.notNull())
    .addColumn("received_at", "text", (c) => c.notNull())
    .addColumn("processed_at", "text")
    .addColumn("outcome", "text")
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema.createIndex("webhook_events_received_idx").on("webhook_events").column("received_at").execute();

  await db.schema
    .createTable("claims")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("rail", "text", (c) => c.notNull())
    .addColumn("sku", "text", (c) => c.notNull())
    .addColumn("email", "text", (c) => c.notNull())
    .addColumn("amount_cents", "integer", (c) => c.notNull())
    .addColumn("tx_ref", "text")
    .addColumn("tx_key", "text", (c) => c.unique())
    .addColumn("company", "text")
    .addColumn("billing_address", "text")
    .addColumn("currency", "text")
    .addColumn("terms", "text")
    .addColumn("state", "text", (c) =>
      c.notNull().check(sql`state in ('submitted', 'approved', 'rejected', 'revoked')`),
    )
    .addColumn("order_id", "text")
    .addColumn("decided_by", "text")
    .addColumn("decided_at", "text")
    .addColumn("reason", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("claims_created_idx").on("claims").column("created_at").execute();
  await db.schema.createIndex("claims_state_idx").on("claims").column("state").execute();

  // The audit log is append-only: the database itself refuses UPDATE and DELETE.
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`create function audit_log_append_only() returns trigger language plpgsql as $$
begin raise exception 'audit_log is append-only'; end $$`.execute(db);
    await sql`create trigger audit_log_append_only before update or delete on audit_log
for each row execute function audit_log_append_only()`.execute(db);
  } else {
    await sql`create trigger audit_log_no_update before update on audit_log
begin select raise(abort, 'audit_log is append-only'); end`.execute(db);
    await sql`create trigger audit_log_no_delete before delete on audit_log
begin select raise(abort, 'audit_log is append-only'); end`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`drop trigger if exists audit_log_append_only on audit_log`.execute(db);
    await sql`drop function if exists audit_log_append_only()`.execute(db);
  } else {
    await sql`drop trigger if exists audit_log_no_update`.execute(db);
    await sql`drop trigger if exists audit_log_no_delete`.execute(db);
  }
  await db.schema.dropTable("claims").execute();
  await db.schema.dropTable("webhook_events").execute();
  await db.schema.dropTable("card_refunds").execute();
  await db.schema.dropTable("card_sessions").execute();
}
