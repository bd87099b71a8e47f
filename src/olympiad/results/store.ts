import type { Executor } from "../../db/executor.js";

/** Read-only lookups the records service needs from the olympiad's other tables. */
export const recordsStore = {
  /** The ids among `ids` that are not registered participants. */
  async unknownParticipants(db: Executor, ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const found = await db.selectFrom("olympiad_participants").select("id").where("id", "in", ids).execute();
    const known = new Set(found.map((r) => r.id));
    return ids.filter((id) => !known.has(id));
  },

  /** The ids among `ids` that are not teams. */
  async unknownTeams(db: Executor, ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const found = await db.selectFrom("olympiad_teams").select("id").where("id", "in", ids).execute();
    const known = new Set(found.map((r) => r.id));
    return ids.filter((id) => !known.has(id));
  },
};
