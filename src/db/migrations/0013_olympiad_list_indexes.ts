import type { Kysely } from "kysely";

// Bounded olympiad lists (issue #21 item 5, docs/olympiad.md "Pages and caching"). A proposals page
// is read in (opens_at desc, id desc) order from a cursor, and every request reads the data version
// (src/olympiad/documents/page-cache.ts): counts and latest timestamps of the olympiad tables. These indexes
// answer both from the index alone. On SQLite that matters beyond speed: a proposal's 8,000-character
// body spills into overflow pages stored before the later columns, so a scan for opens_at or
// closes_at read every body and held the (synchronous) driver, and with it /healthz, for as long.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex("olympiad_proposals_opens_idx")
    .on("olympiad_proposals")
    .columns(["opens_at", "id"])
    .execute();
  await db.schema
    .createIndex("olympiad_proposals_state_closes_idx")
    .on("olympiad_proposals")
    .columns(["state", "closes_at"])
    .execute();
  await db.schema.createIndex("olympiad_proposals_closes_idx").on("olympiad_proposals").column("closes_at").execute();
  await db.schema.createIndex("olympiad_votes_updated_idx").on("olympiad_votes").column("updated_at").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("olympiad_votes_updated_idx").execute();
  await db.schema.dropIndex("olympiad_proposals_closes_idx").execute();
  await db.schema.dropIndex("olympiad_proposals_state_closes_idx").execute();
  await db.schema.dropIndex("olympiad_proposals_opens_idx").execute();
}
