import { type Kysely, sql } from "kysely";

// Governance standing and proven agent ids (issue #21 items 4 and 7, docs/olympiad-governance.md,
// docs/olympiad-teams.md).
//
// - olympiad_order_bindings: every paid gao-entry order bound to a participant for governance,
//   whether by `enter` or by `bind_order` (before open registration). `order_id` is the primary key:
//   one order gives standing to one participant, across both ways. Backfilled from the entries.
// - olympiad_participants.identity_id: the join-work identity a participant is bound to (public
//   community votes); agent ids: `agent_id` becomes a label anyone may carry (the unique index
//   goes), `proven_agent_id` is unique and set only when the registration proved the id with a
//   wallet signature (`agent_address` is the signer).
// - olympiad_agent_challenges: single-use, expiring nonces for those proofs.
// - olympiad_votes.identity_id: the identity behind a public_community vote; unique per proposal
//   (one identity, one public vote per proposal; NULLs, the other constituencies, never collide).
// - olympiad_proposals.team_id / identity_id: the proposer's team and identity when proposed, for
//   the per-team and per-identity caps on open proposals.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("olympiad_order_bindings")
    .addColumn("order_id", "text", (c) => c.primaryKey())
    .addColumn("participant_id", "text", (c) => c.notNull())
    .addColumn("season_id", "text", (c) => c.notNull())
    // how the order was bound: enter | bind_order
    .addColumn("via", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("olympiad_order_bindings_participant_idx")
    .on("olympiad_order_bindings")
    .column("participant_id")
    .execute();
  await sql`insert into olympiad_order_bindings (order_id, participant_id, season_id, via, created_at)
    select order_id, participant_id, season_id, 'enter', created_at from olympiad_entries`.execute(db);

  await db.schema.dropIndex("olympiad_participants_agent_idx").execute();
  await db.schema
    .createIndex("olympiad_participants_agent_label_idx")
    .on("olympiad_participants")
    .column("agent_id")
    .execute();
  await db.schema.alterTable("olympiad_participants").addColumn("proven_agent_id", "text").execute();
  await db.schema.alterTable("olympiad_participants").addColumn("agent_address", "text").execute();
  await db.schema.alterTable("olympiad_participants").addColumn("identity_id", "text").execute();
  // Every agent id registered before this migration was unique; none was proven.
  await db.schema
    .createIndex("olympiad_participants_proven_agent_idx")
    .on("olympiad_participants")
    .column("proven_agent_id")
    .unique()
    .execute();
  await db.schema
    .createIndex("olympiad_participants_identity_idx")
    .on("olympiad_participants")
    .column("identity_id")
    .execute();

  await db.schema
    .createTable("olympiad_agent_challenges")
    .addColumn("nonce", "text", (c) => c.primaryKey())
    .addColumn("agent_id", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("expires_at", "text", (c) => c.notNull())
    .addColumn("used_at", "text")
    .execute();
  await db.schema
    .createIndex("olympiad_agent_challenges_expiry_idx")
    .on("olympiad_agent_challenges")
    .column("expires_at")
    .execute();

  await db.schema.alterTable("olympiad_votes").addColumn("identity_id", "text").execute();
  await db.schema
    .createIndex("olympiad_votes_identity_idx")
    .on("olympiad_votes")
    .columns(["proposal_id", "identity_id"])
    .unique()
    .execute();

  await db.schema.alterTable("olympiad_proposals").addColumn("team_id", "text").execute();
  await db.schema.alterTable("olympiad_proposals").addColumn("identity_id", "text").execute();
  await db.schema
    .createIndex("olympiad_proposals_open_idx")
    .on("olympiad_proposals")
    .columns(["state", "closes_at"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("olympiad_proposals_open_idx").execute();
  await db.schema.alterTable("olympiad_proposals").dropColumn("identity_id").execute();
  await db.schema.alterTable("olympiad_proposals").dropColumn("team_id").execute();
  await db.schema.dropIndex("olympiad_votes_identity_idx").execute();
  await db.schema.alterTable("olympiad_votes").dropColumn("identity_id").execute();
  await db.schema.dropTable("olympiad_agent_challenges").execute();
  await db.schema.dropIndex("olympiad_participants_identity_idx").execute();
  await db.schema.dropIndex("olympiad_participants_proven_agent_idx").execute();
  await db.schema.alterTable("olympiad_participants").dropColumn("identity_id").execute();
  await db.schema.alterTable("olympiad_participants").dropColumn("agent_address").execute();
  await db.schema.alterTable("olympiad_participants").dropColumn("proven_agent_id").execute();
  await db.schema.dropIndex("olympiad_participants_agent_label_idx").execute();
  await db.schema
    .createIndex("olympiad_participants_agent_idx")
    .on("olympiad_participants")
    .column("agent_id")
    .unique()
    .execute();
  await db.schema.dropTable("olympiad_order_bindings").execute();
}
