import type { Transaction } from "kysely";
import type { Executor } from "../../db/executor.js";
import { type KeysetPage, type KeysetRequest, keysetPage } from "../../db/paginate.js";
import type { Database } from "../../db/schema.js";
import type { ProposalRow, RoleRow, VoteRow } from "../tables.js";

/** Reads and writes of proposals, votes and roles (no rules here: see governance.ts). */

export const governanceStore = {
  async insertProposal(db: Executor, row: ProposalRow): Promise<void> {
    await db.insertInto("olympiad_proposals").values(row).execute();
  },

  async proposal(db: Executor, id: string): Promise<ProposalRow | undefined> {
    return db.selectFrom("olympiad_proposals").selectAll().where("id", "=", id).executeTakeFirst();
  },

  /**
   * One page of proposals, newest first (opens_at, then id, for a stable order): at most
   * `limit` (default 20, at most 100) after the cursor (docs/olympiad.md "Pages").
   */
  async proposalsPage(db: Executor, page: KeysetRequest): Promise<KeysetPage<ProposalRow>> {
    return keysetPage<ProposalRow>(
      db.selectFrom("olympiad_proposals"),
      [
        ["opens_at", "desc"],
        ["id", "desc"],
      ],
      page,
      (r) => [r.opens_at, r.id],
    );
  },

  /** Proposals by state (the counts a page shows next to one page of them). */
  async stateCounts(db: Executor): Promise<{ open: number; closed: number }> {
    const rows = await db
      .selectFrom("olympiad_proposals")
      .select(["state", (eb) => eb.fn.countAll<string | number>().as("n")])
      .groupBy("state")
      .execute();
    const n = (state: string) => Number(rows.find((r) => r.state === state)?.n ?? 0);
    return { open: n("open"), closed: n("closed") };
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

  /** Open proposals (window not ended) in all, or of one proposer, team or identity. */
  async openCount(
    db: Executor,
    by: { proposer_id?: string; team_id?: string; identity_id?: string },
    nowIso: string,
  ): Promise<number> {
    let q = db
      .selectFrom("olympiad_proposals")
      .select((eb) => eb.fn.countAll<string | number>().as("n"))
      .where("state", "=", "open")
      .where("closes_at", ">", nowIso);
    if (by.proposer_id !== undefined) q = q.where("proposer_id", "=", by.proposer_id);
    if (by.team_id !== undefined) q = q.where("team_id", "=", by.team_id);
    if (by.identity_id !== undefined) q = q.where("identity_id", "=", by.identity_id);
    const row = await q.executeTakeFirstOrThrow();
    return Number(row.n);
  },

  /** When the next open proposal closes (the earliest `closes_at` after now). */
  async nextClose(db: Executor, nowIso: string): Promise<string | undefined> {
    const row = await db
      .selectFrom("olympiad_proposals")
      .select("closes_at")
      .where("state", "=", "open")
      .where("closes_at", ">", nowIso)
      .orderBy("closes_at")
      .limit(1)
      .executeTakeFirst();
    return row?.closes_at;
  },

  /** Another participant's public vote on the proposal is backed by this identity. */
  async identityVotedAs(db: Executor, proposalId: string, identityId: string, voterId: string): Promise<boolean> {
    const row = await db
      .selectFrom("olympiad_votes")
      .select("voter_id")
      .where("proposal_id", "=", proposalId)
      .where("identity_id", "=", identityId)
      .where("voter_id", "!=", voterId)
      .executeTakeFirst();
    return row !== undefined;
  },

  /** The join-work identity a participant is bound to, or null. */
  async participantIdentity(db: Executor, participantId: string): Promise<string | null> {
    const row = await db
      .selectFrom("olympiad_participants")
      .select("identity_id")
      .where("id", "=", participantId)
      .executeTakeFirst();
    return row?.identity_id ?? null;
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
          identity_id: row.identity_id ?? null,
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
