import type { Kysely } from "kysely";

// Issue #23 item 1: signed job webhooks (src/webhooks, docs/suite.md "Webhooks").
//
// - `quotes.callback_url`: the checked https URL a suite request asked for (null: none); the job the
//   quote buys carries it.
// - `job_webhooks`: one row per job with a callback URL, written in the transaction that creates
//   the job; `closed_at` once nothing more can happen to the job (expired or deleted), so the
//   event sweep only reads open subscriptions.
// - `webhook_deliveries`: the outbox, one row per (job, event) (unique): the sweep records an event
//   once the job's state shows it, whatever changed the state, so a crash right after the change
//   loses nothing. Senders claim due rows by a conditional update of `lease_until` (SQLite and
//   PostgreSQL, one or many instances).
// - `webhook_attempts`: every POST of a delivery, with its status or error and its duration.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("quotes").addColumn("callback_url", "text").execute();
  await db.schema
    .createTable("job_webhooks")
    .addColumn("job_id", "text", (c) => c.primaryKey())
    .addColumn("url", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("closed_at", "text")
    .execute();
  await db.schema.createIndex("job_webhooks_open_idx").on("job_webhooks").columns(["closed_at"]).execute();
  await db.schema
    .createTable("webhook_deliveries")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("job_id", "text", (c) => c.notNull())
    .addColumn("event", "text", (c) => c.notNull())
    .addColumn("url", "text", (c) => c.notNull())
    .addColumn("payload", "text", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("deadline_at", "text", (c) => c.notNull())
    .addColumn("next_attempt_at", "text")
    .addColumn("lease_until", "text")
    .addColumn("lease_owner", "text")
    .addColumn("delivered_at", "text")
    .addColumn("updated_at", "text", (c) => c.notNull())
    .addUniqueConstraint("webhook_deliveries_job_event_key", ["job_id", "event"])
    .execute();
  await db.schema
    .createIndex("webhook_deliveries_due_idx")
    .on("webhook_deliveries")
    .columns(["state", "next_attempt_at"])
    .execute();
  await db.schema
    .createTable("webhook_attempts")
    .addColumn("delivery_id", "text", (c) => c.notNull())
    .addColumn("n", "integer", (c) => c.notNull())
    .addColumn("at", "text", (c) => c.notNull())
    .addColumn("status", "integer")
    .addColumn("error", "text")
    .addColumn("duration_ms", "integer", (c) => c.notNull())
    .addPrimaryKeyConstraint("webhook_attempts_pk", ["delivery_id", "n"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("webhook_attempts").execute();
  await db.schema.dropIndex("webhook_deliveries_due_idx").execute();
  await db.schema.dropTable("webhook_deliveries").execute();
  await db.schema.dropIndex("job_webhooks_open_idx").execute();
  await db.schema.dropTable("job_webhooks").execute();
  await db.schema.alterTable("quotes").dropColumn("callback_url").execute();
}
