import type { Executor } from "../../db/executor.js";
import type { Who } from "../tables.js";
import { checkRatio, memberKind } from "../teams/ratio.js";
import { CONSTITUENCIES, type Constituency, GOVERNANCE_WEIGHTS_BP } from "./weights.js";

/**
 * Who votes where (docs/olympiad-governance.md, issue #21 item 4: only participants who paid govern).
 *
 * A participant is *paid* while a `gao-entry` order bound to them is `active`: an order they entered
 * with (`olympiad_entries`) or bound for governance (`olympiad_order_bindings`, action `bind_order`).
 * One order is bound to one participant (the binding's primary key is the order id).
 *
 * - team_captains: a paid participant who captains a team that is locked and eligible, the ratio
 *   rule counted over its paid members only (so a team needs at least one paid human and one paid
 *   autonomous member, and every seat the rule counts cost an order);
 * - entered_agents: a paid participant registered as an agent (`agent_self`) or for one (`human_for_agent`);
 * - lab_stewards / residual_integrity: the operator's appointments (`olympiad_roles` steward / integrity);
 * - public_community: a participant who holds none of the others and is paid or bound to a join-work
 *   identity (one identity backs one public vote per proposal: governance.ts).
 * A participant holding none of these has no standing: no vote, no proposal. A participant in
 * several votes in the one with the largest weight.
 */

/** The constituencies a participant can hold, largest weight first (ties: the spec's order). */
export const BY_WEIGHT: readonly Constituency[] = [...CONSTITUENCIES].sort(
  (a, b) =>
    GOVERNANCE_WEIGHTS_BP[b] - GOVERNANCE_WEIGHTS_BP[a] || CONSTITUENCIES.indexOf(a) - CONSTITUENCIES.indexOf(b),
);

/** The largest-weight constituency among those held; undefined when none (no standing). */
export function largest(held: ReadonlySet<Constituency>): Constituency | undefined {
  return BY_WEIGHT.find((c) => held.has(c));
}

const CHUNK = 500;
const ENTRY_SKU = "gao-entry";

/** Of `ids`, those holding an active gao-entry order bound to them (by entry or by bind_order). */
export async function paidIds(db: Executor, ids: readonly string[]): Promise<Set<string>> {
  const paid = new Set<string>();
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += CHUNK) {
    const part = unique.slice(i, i + CHUNK);
    const bound = await db
      .selectFrom("olympiad_order_bindings as b")
      .innerJoin("orders as o", "o.id", "b.order_id")
      .select("b.participant_id")
      .where("b.participant_id", "in", part)
      .where("o.status", "=", "active")
      .where("o.sku", "=", ENTRY_SKU)
      .execute();
    for (const r of bound) paid.add(r.participant_id);
    const entered = await db
      .selectFrom("olympiad_entries as e")
      .innerJoin("orders as o", "o.id", "e.order_id")
      .select("e.participant_id")
      .where("e.participant_id", "in", part)
      .where("o.status", "=", "active")
      .where("o.sku", "=", ENTRY_SKU)
      .execute();
    for (const r of entered) paid.add(r.participant_id);
  }
  return paid;
}

export interface TeamStanding {
  /** the team is locked */
  locked: boolean;
  /** members holding an active gao-entry order */
  paid_members: number;
  paid_humans: number;
  paid_autonomous: number;
  /** locked, and the ratio rule holds over the paid members: its (paid) captain votes in team_captains */
  counts: boolean;
  /** why not (empty when it counts) */
  reasons: string[];
}

/** A team's governance standing: locked and eligible over its paid members (docs/olympiad-governance.md). */
export async function teamStanding(db: Executor, teamId: string): Promise<TeamStanding> {
  const team = await db.selectFrom("olympiad_teams").select("locked_at").where("id", "=", teamId).executeTakeFirst();
  const members = await db
    .selectFrom("olympiad_team_members as m")
    .innerJoin("olympiad_participants as p", "p.id", "m.participant_id")
    .select(["m.participant_id", "p.who"])
    .where("m.team_id", "=", teamId)
    .execute();
  const paid = await paidIds(
    db,
    members.map((m) => m.participant_id),
  );
  const c = { humans: 0, autonomous: 0 };
  for (const m of members) {
    if (!paid.has(m.participant_id)) continue;
    if (memberKind(m.who as Who) === "human") c.humans += 1;
    else c.autonomous += 1;
  }
  const locked = team?.locked_at != null;
  const check = checkRatio(c);
  const reasons: string[] = [];
  if (!locked) reasons.push("The team has not locked its roster.");
  if (!check.eligible) {
    reasons.push(
      `Counted over its ${c.humans + c.autonomous} paid members (${c.humans} human, ${c.autonomous} autonomous), the ratio rule does not hold: ${check.reasons.map((r) => r.detail).join(" ")}`,
    );
  }
  return {
    locked,
    paid_members: c.humans + c.autonomous,
    paid_humans: c.humans,
    paid_autonomous: c.autonomous,
    counts: reasons.length === 0,
    reasons,
  };
}

/**
 * The constituencies each participant holds now, with standing (an empty set: no standing).
 * Participants that do not exist are absent from the result.
 */
export async function heldConstituencies(
  db: Executor,
  ids: readonly string[],
): Promise<Map<string, Set<Constituency>>> {
  const held = new Map<string, Set<Constituency>>();
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += CHUNK) {
    const part = unique.slice(i, i + CHUNK);
    const known = await db
      .selectFrom("olympiad_participants")
      .select(["id", "who", "identity_id"])
      .where("id", "in", part)
      .execute();
    const paid = await paidIds(db, part);
    const add = (id: string, c: Constituency) => held.get(id)?.add(c);
    for (const p of known) held.set(p.id, new Set());

    const captains = await db
      .selectFrom("olympiad_teams")
      .select(["id", "captain_id"])
      .where("captain_id", "in", part)
      .where("locked_at", "is not", null)
      .execute();
    for (const r of captains) {
      if (paid.has(r.captain_id) && (await teamStanding(db, r.id)).counts) add(r.captain_id, "team_captains");
    }

    for (const p of known) {
      if (paid.has(p.id) && (p.who === "agent_self" || p.who === "human_for_agent")) add(p.id, "entered_agents");
    }

    const roles = await db
      .selectFrom("olympiad_roles")
      .select(["participant_id", "role"])
      .where("participant_id", "in", part)
      .execute();
    for (const r of roles) add(r.participant_id, r.role === "steward" ? "lab_stewards" : "residual_integrity");

    for (const p of known) {
      const set = held.get(p.id);
      if (set && set.size === 0 && (paid.has(p.id) || p.identity_id != null)) set.add("public_community");
    }
  }
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

/** The team a participant is a member of now, if any. */
export async function memberTeam(db: Executor, participantId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom("olympiad_team_members")
    .select("team_id")
    .where("participant_id", "=", participantId)
    .executeTakeFirst();
  return row?.team_id;
}
