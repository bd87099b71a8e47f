import type { Kysely } from "kysely";
import type { Database } from "../../db/schema.js";

/**
 * Display names of standings entrants (participants `par_…` and teams), for the human standings
 * page: the published documents name entrants by id only. Read-only, two queries whatever the
 * number of ids. An id that names nobody (a dissolved team) is absent from the map.
 */
export async function entrantNames(db: Kysely<Database>, ids: readonly string[]): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  const unique = [...new Set(ids)];
  if (unique.length === 0) return names;
  const people = await db
    .selectFrom("olympiad_participants")
    .select(["id", "name"])
    .where("id", "in", unique)
    .execute();
  for (const p of people) names.set(p.id, p.name);
  const rest = unique.filter((id) => !names.has(id));
  if (rest.length > 0) {
    const teams = await db.selectFrom("olympiad_teams").select(["id", "name"]).where("id", "in", rest).execute();
    for (const t of teams) names.set(t.id, t.name);
  }
  return names;
}
