import type { Kysely, Transaction } from "kysely";
import type { Database } from "../db/schema.js";
import { CONSTITUENCIES, type Constituency, GOVERNANCE_WEIGHTS_BP } from "./governance-weights.js";

/**
 * Who votes where (docs/olympiad-governance.md):
 * - team_captains: the `captain_id` of a team;
 * - entered_agents: a participant registered as an agent (`agent_self`) or for one (`human_for_agent`)
 *   holding an entry whose `gao-entry` order is still active (not revoked, not refunded);
 * - lab_stewards / residual_integrity: the operator's appointments (`olympiad_roles` steward / integrity);
 * - public_community: every other registered participant.
 * A participant in several votes in the one with the largest weight.
 */

type Executor = Kysely<Database> | Transaction<Database>;

/** The constituencies a participant can hold, largest weight first (ties: the spec's order). */
export const BY_WEIGHT: readonly Constituency[] = [...CONSTITUENCIES].sort(
  (a, b) =>
    GOVERNANCE_WEIGHTS_BP[b] - GOVERNANCE_WEIGHTS_BP[a] || CONSTITUENCIES.indexOf(a) - CONSTITUENCIES.indexOf(b),
);

/** The largest-weight constituency among those held; public_community when none. */
export function largest(held: ReadonlySet<Constituency>): Constituency {
  return BY_WEIGHT.find((c) => held.has(c)) ?? "public_community";
}

const CHUNK = 500;

/**
 * The constituencies each participant holds now (public_community only for those who hold none of
 * the others). Participants that do not exist are absent from the result.
 */
export async function heldConstituencies(
  db: Executor,
  ids: readonly string[],
): Promise<Map<string, Set<Constituency>>> {
  const held = new Map<string, Set<Constituency>>();
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += CHUNK) {
    const part = unique.slice(i, i + CHUNK);
    const known = await db.selectFrom("olympiad_participants").select("id").where("id", "in", part).execute();
    for (const p of known) held.set(p.id, new Set());
    const add = (id: string, c: Constituency) => held.get(id)?.add(c);

    const captains = await db
      .selectFrom("olympiad_teams")
      .select("captain_id")
      .where("captain_id", "in", part)
      .execute();
    for (const r of captains) add(r.captain_id, "team_captains");

    const agents = await db
      .selectFrom("olympiad_entries as e")
      .innerJoin("orders as o", "o.id", "e.order_id")
      .innerJoin("olympiad_participants as p", "p.id", "e.participant_id")
      .select("e.participant_id")
      .where("e.participant_id", "in", part)
      .where("o.status", "=", "active")
      .where("p.who", "in", ["agent_self", "human_for_agent"])
      .execute();
    for (const r of agents) add(r.participant_id, "entered_agents");

    const roles = await db
      .selectFrom("olympiad_roles")
      .select(["participant_id", "role"])
      .where("participant_id", "in", part)
      .execute();
    for (const r of roles) add(r.participant_id, r.role === "steward" ? "lab_stewards" : "residual_integrity");
  }
  for (const set of held.values()) if (set.size === 0) set.add("public_community");
  return held;
}

/** The team a participant captains now, if any. */
export async function captainedTeam(db: Executor, participantId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom("olympiad_teams")
    .select("id")
    .where("captain_id", "=", participantId)
    .executeTakeFirst();
  return row?.id;
}
