import type { Kysely, Transaction } from "kysely";
import type { Database } from "../db/schema.js";
import type { ProposalRow, RoleRow, VoteRow } from "./tables.js";

/** Reads and writes of proposals, votes and roles (no rules here: see governance.ts). */

type Executor = Kysely<Database> | Transaction<Database>;

export const governanceStore = {
  async insertProposal(db: Executor, row: ProposalRow): Promise<void> {
    await db.insertInto("olympiad_proposals").values(row).execute();
  },

  async proposal(db: Executor, id: string): Promise<ProposalRow | undefined> {
    return db.selectFrom("olympiad_proposals").selectAll().where("id", "=", id).executeTakeFirst();
  },

  /** Every proposal, newest first (opens_at, then id, for a stable order). */
  async proposals(db: Executor): Promise<ProposalRow[]> {
    return db.selectFrom("olympiad_proposals").selectAll().orderBy("opens_at", "desc").orderBy("id", "desc").execute();
  },

  /** Open proposals whose window has ended at `nowIso`. */
  async due(db: Executor, nowIso: string): Promise<string[]> {
    const rows = await db
      .selectFrom("olympiad_proposals")
      .select("id")
      .where("state", "=", "open")
      .where("closes_at", "<=", nowIso)
      .execute();
    return rows.map((r) => r.id);
  },

  async openCountBy(db: Executor, proposerId: string, nowIso: string): Promise<number> {
    const row = await db
      .selectFrom("olympiad_proposals")
      .select((eb) => eb.fn.countAll<string | number>().as("n"))
      .where("proposer_id", "=", proposerId)
      .where("state", "=", "open")
      .where("closes_at", ">", nowIso)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  /**
   * Takes the proposal's row for a vote (the row lock orders a vote and the closing on PostgreSQL;
   * SQLite runs one write transaction at a time): true while it is open and its window has not ended.
   */
  async lockOpen(trx: Transaction<Database>, id: string, nowIso: string): Promise<boolean> {
    const r = await trx
      .updateTable("olympiad_proposals")
      .set({ state: "open" })
      .where("id", "=", id)
      .where("state", "=", "open")
      .where("closes_at", ">", nowIso)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  },

  /** Closes an open proposal whose window has ended: true for the one caller that closed it. */
  async claimClose(trx: Transaction<Database>, id: string, nowIso: string): Promise<boolean> {
    const r = await trx
      .updateTable("olympiad_proposals")
      .set({ state: "closed" })
      .where("id", "=", id)
      .where("state", "=", "open")
      .where("closes_at", "<=", nowIso)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  },

  async fixOutcome(
    trx: Transaction<Database>,
    id: string,
    outcome: NonNullable<ProposalRow["outcome"]>,
    tally: string,
  ) {
    await trx.updateTable("olympiad_proposals").set({ outcome, tally }).where("id", "=", id).execute();
  },

  async votes(db: Executor, proposalId: string): Promise<VoteRow[]> {
    return db.selectFrom("olympiad_votes").selectAll().where("proposal_id", "=", proposalId).execute();
  },

  /** Votes of several proposals, grouped by proposal. */
  async votesOf(db: Executor, proposalIds: readonly string[]): Promise<Map<string, VoteRow[]>> {
    const out = new Map<string, VoteRow[]>(proposalIds.map((id) => [id, []]));
    for (let i = 0; i < proposalIds.length; i += 500) {
      const part = proposalIds.slice(i, i + 500);
      const rows = await db.selectFrom("olympiad_votes").selectAll().where("proposal_id", "in", part).execute();
      for (const r of rows) out.get(r.proposal_id)?.push(r);
    }
    return out;
  },

  async vote(db: Executor, proposalId: string, voterId: string): Promise<VoteRow | undefined> {
    return db
      .selectFrom("olympiad_votes")
      .selectAll()
      .where("proposal_id", "=", proposalId)
      .where("voter_id", "=", voterId)
      .executeTakeFirst();
  },

  /** Casts or replaces the voter's vote (one row per voter and proposal); `cast_at` stays the first cast. */
  async upsertVote(db: Executor, row: VoteRow): Promise<void> {
    await db
      .insertInto("olympiad_votes")
      .values(row)
      .onConflict((oc) =>
        oc.columns(["proposal_id", "voter_id"]).doUpdateSet({
          choice: row.choice,
          constituency: row.constituency,
          updated_at: row.updated_at,
        }),
      )
      .execute();
  },

  /** Another member of the team already voted in team_captains on this proposal (a transferred captaincy). */
  async teamCaptainVoted(db: Executor, proposalId: string, teamId: string, voterId: string): Promise<boolean> {
    const row = await db
      .selectFrom("olympiad_votes as v")
      .innerJoin("olympiad_team_members as m", "m.participant_id", "v.voter_id")
      .select("v.voter_id")
      .where("v.proposal_id", "=", proposalId)
      .where("v.constituency", "=", "team_captains")
      .where("v.voter_id", "!=", voterId)
      .where("m.team_id", "=", teamId)
      .executeTakeFirst();
    return row !== undefined;
  },

  async participantExists(db: Executor, id: string): Promise<boolean> {
    const row = await db.selectFrom("olympiad_participants").select("id").where("id", "=", id).executeTakeFirst();
    return row !== undefined;
  },

  async roles(db: Executor, participantId?: string): Promise<RoleRow[]> {
    let q = db.selectFrom("olympiad_roles").selectAll();
    if (participantId) q = q.where("participant_id", "=", participantId);
    return q.orderBy("participant_id").orderBy("role").execute();
  },

  /** True when the role was newly given. */
  async appoint(db: Executor, row: RoleRow): Promise<boolean> {
    const r = await db
      .insertInto("olympiad_roles")
      .values(row)
      .onConflict((oc) => oc.columns(["participant_id", "role"]).doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0n) === 1;
  },

  /** True when the role was held and is now removed. */
  async remove(db: Executor, participantId: string, role: RoleRow["role"]): Promise<boolean> {
    const r = await db
      .deleteFrom("olympiad_roles")
      .where("participant_id", "=", participantId)
      .where("role", "=", role)
      .executeTakeFirst();
    return Number(r.numDeletedRows) === 1;
  },
};
