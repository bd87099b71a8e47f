import { type Kysely, sql } from "kysely";

// Metered suite jobs (issue #10): persisted quotes, jobs and their segments, the usage ledger the
// free cap reads, and the in-process task queue of the SQLite default. Byte counts are bigint
// (a job may be hundreds of GB); USDC amounts are decimal strings of atomic units. Portable subset.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("quotes")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("product", "text", (c) => c.notNull())
    .addColumn("data_class", "text", (c) => c.notNull())
    .addColumn("op", "text", (c) => c.notNull())
    .addColumn("level", "text", (c) => c.notNull())
    .addColumn("bytes", "bigint", (c) => c.notNull())
    .addColumn("billable_bytes", "bigint", (c) => c.notNull())
    .addColumn("free_bytes", "bigint", (c) => c.notNull())
    .addColumn("amount_units", "text", (c) => c.notNull())
    .addColumn("amount_cents", "integer", (c) => c.notNull())
    .addColumn("tiers", "text", (c) => c.notNull())
    .addColumn("identity_id", "text")
    .addColumn("email", "text")
    .addColumn("state", "text", (c) => c.notNull().check(sql`state in ('open', 'paid', 'used', 'expired')`))
    .addColumn("job_id", "text", (c) => c.unique())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("expires_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("quotes_identity_idx").on("quotes").column("identity_id").execute();

  await db.schema
    .createTable("jobs")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("quote_id", "text", (c) => c.notNull().unique())
    .addColumn("token_hash", "text", (c) => c.notNull().unique())
    .addColumn("state", "text", (c) =>
      c
        .notNull()
        .check(sql`state in ('awaiting_input', 'uploading', 'queued', 'running', 'done', 'failed', 'cancelled')`),
    )
    .addColumn("product", "text", (c) => c.notNull())
    .addColumn("data_class", "text", (c) => c.notNull())
    .addColumn("op", "text", (c) => c.notNull())
    .addColumn("level", "text", (c) => c.notNull())
    .addColumn("bytes_quoted", "bigint", (c) => c.notNull())
    .addColumn("bytes_in", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("bytes_out", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("input_sha256", "text")
    .addColumn("output_sha256", "text")
    .addColumn("segments_total", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("segments_done", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("error_code", "text")
    .addColumn("error_detail", "text")
    // how it was paid: free | x402_base_usdc | x402_solana_usdc | card_checkout
    .addColumn("paid_by", "text", (c) => c.notNull())
    .addColumn("payment_ref", "text")
    .addColumn("identity_id", "text")
    .addColumn("email", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .addColumn("started_at", "text")
    .addColumn("finished_at", "text")
    .execute();
  await db.schema.createIndex("jobs_state_idx").on("jobs").column("state").execute();

  await db.schema
    .createTable("job_segments")
    .addColumn("job_id", "text", (c) => c.notNull())
    .addColumn("idx", "integer", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull().check(sql`state in ('pending', 'running', 'done', 'failed')`))
    .addColumn("in_offset", "bigint", (c) => c.notNull())
    .addColumn("in_length", "bigint", (c) => c.notNull())
    .addColumn("out_bytes", "bigint")
    .addColumn("out_sha256", "text")
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("worker", "text")
    .addColumn("error", "text")
    .addColumn("updated_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("job_segments_pk", ["job_id", "idx"])
    .execute();

  await db.schema
    .createTable("usage_events")
    // idempotency key, e.g. suite:<job_id>:<op>
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("identity_id", "text")
    .addColumn("meter", "text", (c) => c.notNull())
    .addColumn("value_bytes", "bigint", (c) => c.notNull())
    // calendar month (UTC) the event counts in: YYYY-MM
    .addColumn("period", "text", (c) => c.notNull())
    .addColumn("job_id", "text")
    .addColumn("quote_id", "text")
    .addColumn("occurred_at", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("usage_events_identity_idx")
    .on("usage_events")
    .columns(["identity_id", "meter", "period"])
    .execute();

  // The in-process queue of the SQLite default (one machine): leased tasks.
  await db.schema
    .createTable("queue_tasks")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("queue", "text", (c) => c.notNull())
    .addColumn("payload", "text", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull().check(sql`state in ('ready', 'leased', 'done', 'failed')`))
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("max_attempts", "integer", (c) => c.notNull())
    .addColumn("run_after", "text", (c) => c.notNull())
    .addColumn("lease_until", "text")
    .addColumn("worker", "text")
    .addColumn("error", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("queue_tasks_ready_idx")
    .on("queue_tasks")
    .columns(["queue", "state", "run_after"])
    .execute();

  // x402 and card payments sell priced items: a catalog product or a persisted quote.
  await db.schema
    .alterTable("payment_proofs")
    .addColumn("item_kind", "text", (c) => c.notNull().defaultTo("product"))
    .execute();
  await db.schema.alterTable("payment_proofs").addColumn("item_ref", "text").execute();
  await db.schema.alterTable("payment_proofs").addColumn("resource", "text").execute();
  await db.schema
    .alterTable("card_sessions")
    .addColumn("item_kind", "text", (c) => c.notNull().defaultTo("product"))
    .execute();
  await db.schema.alterTable("card_sessions").addColumn("item_ref", "text").execute();
  await db.schema.alterTable("card_sessions").addColumn("job_id", "text").execute();
  // A quote's payment buys a job instead of an order: the reference names it.
  await db.schema.alterTable("payment_references").addColumn("job_id", "text").execute();
  await db.schema
    .createIndex("payment_references_job_idx")
    .on("payment_references")
    .column("job_id")
    .unique()
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ["queue_tasks", "usage_events", "job_segments", "jobs", "quotes"]) {
    await db.schema.dropTable(t).execute();
  }
}
