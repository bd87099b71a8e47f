import type { Executor } from "../../db/executor.js";
import type { AgentChallengeRow, ParticipantRow } from "../tables.js";

/** The SQL of participants and agent-id challenges (olympiad_participants, olympiad_agent_challenges). */

export const participantStore = {
  async insert(db: Executor, row: ParticipantRow): Promise<void> {
    await db.insertInto("olympiad_participants").values(row).execute();
  },

  byId(db: Executor, id: string): Promise<ParticipantRow | undefined> {
    return db.selectFrom("olympiad_participants").selectAll().where("id", "=", id).executeTakeFirst();
  },

  byTokenHash(db: Executor, hash: string): Promise<ParticipantRow | undefined> {
    return db.selectFrom("olympiad_participants").selectAll().where("token_hash", "=", hash).executeTakeFirst();
  },

  /** The participant that proved this agent id, if any (self-asserted labels are not unique). */
  byProvenAgentId(db: Executor, agentId: string): Promise<ParticipantRow | undefined> {
    return db.selectFrom("olympiad_participants").selectAll().where("proven_agent_id", "=", agentId).executeTakeFirst();
  },

  /** Binds a join-work identity once: true when bound now, false when the participant already had one. */
  async bindIdentity(db: Executor, participantId: string, identityId: string): Promise<boolean> {
    const r = await db
      .updateTable("olympiad_participants")
      .set({ identity_id: identityId })
      .where("id", "=", participantId)
      .where("identity_id", "is", null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  },

  async insertChallenge(db: Executor, row: AgentChallengeRow): Promise<void> {
    await db.insertInto("olympiad_agent_challenges").values(row).execute();
  },

  challenge(db: Executor, nonce: string): Promise<AgentChallengeRow | undefined> {
    return db.selectFrom("olympiad_agent_challenges").selectAll().where("nonce", "=", nonce).executeTakeFirst();
  },

  /** Uses a challenge once, only while unused and unexpired: true for the one caller that used it. */
  async useChallenge(db: Executor, nonce: string, nowIso: string): Promise<boolean> {
    const r = await db
      .updateTable("olympiad_agent_challenges")
      .set({ used_at: nowIso })
      .where("nonce", "=", nonce)
      .where("used_at", "is", null)
      .where("expires_at", ">", nowIso)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  },

  /** Deletes challenges that expired more than a day ago (kept a day so a late replay still reads "used"/"expired"). */
  async sweepChallenges(db: Executor, beforeIso: string): Promise<void> {
    await db.deleteFrom("olympiad_agent_challenges").where("expires_at", "<", beforeIso).execute();
  },
};
