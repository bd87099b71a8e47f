import type { Kysely } from "kysely";

// Issue #21 item 8: per-IP rate limits shared by every service instance on PostgreSQL
// (src/http/rate-limit-store-pg.ts, docs/limits.md "Rate limits"). One row per key
// (`<client ip>|<group>`): the start of its fixed window (ms since the epoch) and the requests
// counted in it. Counted with one INSERT ... ON CONFLICT DO UPDATE ... RETURNING; rows whose window
// ended are deleted by a sweep (the index). Created on SQLite too, where it stays empty: one
// process counts in its memory.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("rate_limits")
    .addColumn("key", "text", (c) => c.primaryKey())
    .addColumn("window_start", "bigint", (c) => c.notNull())
    .addColumn("count", "integer", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("rate_limits_window_idx").on("rate_limits").column("window_start").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("rate_limits").execute();
}
