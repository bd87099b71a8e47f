import { type Kysely, sql } from "kysely";

// Per-IP daily budgets of free surfaces (issue #21; src/db/ip-daily.ts): one row per (scope, keyed
// IP hash, UTC day), incremented atomically in the transaction that creates what is counted
// (`join-work` identities, olympiad `register`). It replaces `identity_issuance` (0010), whose
// counts move over; rows older than two days are deleted as new days begin.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("ip_daily_counts")
    .addColumn("scope", "text", (c) => c.notNull())
    .addColumn("ip_hash", "text", (c) => c.notNull())
    // UTC calendar day: YYYY-MM-DD
    .addColumn("day", "text", (c) => c.notNull())
    .addColumn("count", "integer", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("ip_daily_counts_pk", ["scope", "ip_hash", "day"])
    .execute();
  await sql`insert into ip_daily_counts (scope, ip_hash, day, count, updated_at) select ${"join-work"}, ip_hash, day, count, updated_at from identity_issuance`.execute(
    db,
  );
  await db.schema.dropTable("identity_issuance").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("identity_issuance")
    .addColumn("ip_hash", "text", (c) => c.notNull())
    .addColumn("day", "text", (c) => c.notNull())
    .addColumn("count", "integer", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("identity_issuance_pk", ["ip_hash", "day"])
    .execute();
  await db.schema.dropTable("ip_daily_counts").execute();
}
