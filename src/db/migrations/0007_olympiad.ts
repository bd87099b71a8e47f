import { type Kysely, sql } from "kysely";

// The olympiad (issue #11): participants (token stored hashed), season intents and paid entries,
// teams and their members, proposals, votes and operator-appointed roles. Records and standings
// live on the shared hash chain (0008). Portable subset of SQLite and PostgreSQL.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("olympiad_participants")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("token_hash", "text", (c) => c.notNull().unique())
    .addColumn("who", "text", (c) => c.notNull().check(sql`who in ('agent_self', 'human_for_self', 'human_for_agent')`))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("agent_id", "text")
    .addColumn("operator_name", "text")
    .addColumn("email", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("olympiad_participants_agent_idx")
    .on("olympiad_participants")
    .column("agent_id")
    .unique()
    .execute();

  await db.schema
    .createTable("olympiad_intents")
    .addColumn("participant_id", "text", (c) => c.notNull())
    .addColumn("season_id", "text", (c) => c.notNull())
    .addColumn("note", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("olympiad_intents_pk", ["participant_id", "season_id"])
    .execute();

  await db.schema
    .createTable("olympiad_entries")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("participant_id", "text", (c) => c.notNull())
    .addColumn("season_id", "text", (c) => c.notNull())
    // one order enters one participant once
    .addColumn("order_id", "text", (c) => c.notNull().unique())
    // how the holder proved the order: access_token | x402
    .addColumn("proof", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addUniqueConstraint("olympiad_entries_participant_season", ["participant_id", "season_id"])
    .execute();

  await db.schema
    .createTable("olympiad_teams")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull().unique())
    .addColumn("captain_id", "text", (c) => c.notNull())
    .addColumn("join_code_hash", "text", (c) => c.notNull().unique())
    // members counted here too, so a seat is taken with one conditional update (both engines)
    .addColumn("member_count", "integer", (c) => c.notNull())
    .addColumn("locked_at", "text")
    .addColumn("season_id", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("olympiad_team_members")
    .addColumn("team_id", "text", (c) => c.notNull())
    // a participant is in at most one team
    .addColumn("participant_id", "text", (c) => c.notNull().unique())
    .addColumn("joined_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("olympiad_team_members_pk", ["team_id", "participant_id"])
    .execute();

  await db.schema
    .createTable("olympiad_proposals")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("title", "text", (c) => c.notNull())
    .addColumn("body", "text", (c) => c.notNull())
    .addColumn("proposer_id", "text", (c) => c.notNull())
    .addColumn("opens_at", "text", (c) => c.notNull())
    .addColumn("closes_at", "text", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull().check(sql`state in ('open', 'closed')`))
    // fixed when the window closes: passed | failed | no_quorum
    .addColumn("outcome", "text")
    .addColumn("tally", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("olympiad_proposals_state_idx").on("olympiad_proposals").column("state").execute();

  await db.schema
    .createTable("olympiad_votes")
    .addColumn("proposal_id", "text", (c) => c.notNull())
    .addColumn("voter_id", "text", (c) => c.notNull())
    .addColumn("choice", "text", (c) => c.notNull().check(sql`choice in ('yes', 'no', 'abstain')`))
    .addColumn("constituency", "text", (c) => c.notNull())
    .addColumn("cast_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("olympiad_votes_pk", ["proposal_id", "voter_id"])
    .execute();

  await db.schema
    .createTable("olympiad_roles")
    .addColumn("participant_id", "text", (c) => c.notNull())
    .addColumn("role", "text", (c) => c.notNull().check(sql`role in ('steward', 'integrity')`))
    .addColumn("appointed_by", "text", (c) => c.notNull())
    .addColumn("appointed_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("olympiad_roles_pk", ["participant_id", "role"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    "olympiad_roles",
    "olympiad_votes",
    "olympiad_proposals",
    "olympiad_team_members",
    "olympiad_teams",
    "olympiad_entries",
    "olympiad_intents",
    "olympiad_participants",
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
