import type { Kysely } from "kysely";

// Free suite work belongs to a caller, not to a job (issue #21 item 2; docs/suite.md "Who gets
// free work"). A quote keeps a keyed hash of its client's IP (the anonymous allowance is counted
// per IP per UTC day from these rows); a job keeps its caller (`idn:<identity id>` or
// `ip:<hash>`), which admission counts (queued and running free jobs per caller). Identities
// issued per IP per UTC day are counted in `identity_issuance`. All of it lives in the database,
// so several service instances sharing one PostgreSQL hold the same counters.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("quotes").addColumn("client_ip_hash", "text").execute();
  await db.schema.createIndex("quotes_client_ip_idx").on("quotes").columns(["client_ip_hash", "created_at"]).execute();
  await db.schema.alterTable("jobs").addColumn("caller", "text").execute();
  await db.schema.createIndex("jobs_caller_idx").on("jobs").columns(["caller", "state"]).execute();
  await db.schema
    .createTable("identity_issuance")
    // keyed hash of the client IP (an IPv6 address counts by its /64)
    .addColumn("ip_hash", "text", (c) => c.notNull())
    // UTC calendar day: YYYY-MM-DD
    .addColumn("day", "text", (c) => c.notNull())
    .addColumn("count", "integer", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("identity_issuance_pk", ["ip_hash", "day"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("identity_issuance").execute();
  await db.schema.dropIndex("jobs_caller_idx").execute();
  await db.schema.alterTable("jobs").dropColumn("caller").execute();
  await db.schema.dropIndex("quotes_client_ip_idx").execute();
  await db.schema.alterTable("quotes").dropColumn("client_ip_hash").execute();
}
