import { sql } from "kysely";
import type { Executor } from "../../db/executor.js";
import type { OrderRow } from "../../orders/tables.js";
import type { TeamMemberRow, TeamRow, Who } from "../tables.js";
import type { Composition } from "./ratio.js";
import { memberKind } from "./ratio.js";

export interface MemberRow {
  participant_id: string;
  name: string;
  who: Who;
  joined_at: string;
  /** status of the member's entry order for the season, null without an entry */
  order_status: OrderRow["status"] | null;
}

/** Data access for teams and their members. No rules here, only queries. */
export const teamStore = {
  async insertTeam(db: Executor, row: TeamRow): Promise<void> {
    await db.insertInto("olympiad_teams").values(row).execute();
  },

  byId(db: Executor, id: string): Promise<TeamRow | undefined> {
    return db.selectFrom("olympiad_teams").selectAll().where("id", "=", id).executeTakeFirst();
  },

  byName(db: Executor, name: string): Promise<TeamRow | undefined> {
    return db.selectFrom("olympiad_teams").selectAll().where("name", "=", name).executeTakeFirst();
  },

  byCodeHash(db: Executor, hash: string): Promise<TeamRow | undefined> {
    return db.selectFrom("olympiad_teams").selectAll().where("join_code_hash", "=", hash).executeTakeFirst();
  },

  /** The team (id, lock) the participant is a member of, if any. */
  teamOf(db: Executor, participantId: string): Promise<Pick<TeamRow, "id" | "locked_at"> | undefined> {
    return db
      .selectFrom("olympiad_team_members as m")
      .innerJoin("olympiad_teams as t", "t.id", "m.team_id")
      .select(["t.id", "t.locked_at"])
      .where("m.participant_id", "=", participantId)
      .executeTakeFirst();
  },

  membership(db: Executor, participantId: string): Promise<TeamMemberRow | undefined> {
    return db
      .selectFrom("olympiad_team_members")
      .selectAll()
      .where("participant_id", "=", participantId)
      .executeTakeFirst();
  },

  async insertMember(db: Executor, row: TeamMemberRow): Promise<void> {
    await db.insertInto("olympiad_team_members").values(row).execute();
  },

  async deleteMember(db: Executor, teamId: string, participantId: string): Promise<boolean> {
    const r = await db
      .deleteFrom("olympiad_team_members")
      .where("team_id", "=", teamId)
      .where("participant_id", "=", participantId)
      .executeTakeFirst();
    return Number(r.numDeletedRows) === 1;
  },

  /** Takes one seat: a single conditional update, so of two racing joins for the last seat one wins. */
  async takeSeat(db: Executor, teamId: string, rosterSize: number, at: string): Promise<boolean> {
    const r = await db
      .updateTable("olympiad_teams")
      .set({ member_count: sql`member_count + 1`, updated_at: at })
      .where("id", "=", teamId)
      .where("member_count", "<", rosterSize)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  },

  /** Frees one seat; never the last one (a team's last member dissolves it instead). */
  async freeSeat(db: Executor, teamId: string, at: string): Promise<boolean> {
    const r = await db
      .updateTable("olympiad_teams")
      .set({ member_count: sql`member_count - 1`, updated_at: at })
      .where("id", "=", teamId)
      .where("member_count", ">", 1)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  },

  /** Deletes a team that has exactly one member left (its captain). */
  async dissolve(db: Executor, teamId: string, captainId: string): Promise<boolean> {
    const r = await db
      .deleteFrom("olympiad_teams")
      .where("id", "=", teamId)
      .where("captain_id", "=", captainId)
      .where("member_count", "=", 1)
      .executeTakeFirst();
    return Number(r.numDeletedRows) === 1;
  },

  async setCaptain(db: Executor, teamId: string, from: string, to: string, at: string): Promise<boolean> {
    const r = await db
      .updateTable("olympiad_teams")
      .set({ captain_id: to, updated_at: at })
      .where("id", "=", teamId)
      .where("captain_id", "=", from)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  },

  async lock(db: Executor, teamId: string, seasonId: string, at: string): Promise<boolean> {
    const r = await db
      .updateTable("olympiad_teams")
      .set({ locked_at: at, season_id: seasonId, updated_at: at })
      .where("id", "=", teamId)
      .where("locked_at", "is", null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  },

  async setCodeHash(db: Executor, teamId: string, hash: string, at: string): Promise<void> {
    await db
      .updateTable("olympiad_teams")
      .set({ join_code_hash: hash, updated_at: at })
      .where("id", "=", teamId)
      .execute();
  },

  /** Human and autonomous members, counted from the member rows (not from member_count). */
  async composition(db: Executor, teamId: string): Promise<Composition> {
    const rows = await db
      .selectFrom("olympiad_team_members as m")
      .innerJoin("olympiad_participants as p", "p.id", "m.participant_id")
      .select(["p.who", (eb) => eb.fn.countAll<number | string>().as("n")])
      .where("m.team_id", "=", teamId)
      .groupBy("p.who")
      .execute();
    const c: Composition = { humans: 0, autonomous: 0 };
    for (const r of rows) {
      if (memberKind(r.who) === "human") c.humans += Number(r.n);
      else c.autonomous += Number(r.n);
    }
    return c;
  },

  /** Members with their entry's order status for a season (entered = active). */
  members(db: Executor, teamId: string, seasonId: string): Promise<MemberRow[]> {
    return db
      .selectFrom("olympiad_team_members as m")
      .innerJoin("olympiad_participants as p", "p.id", "m.participant_id")
      .leftJoin("olympiad_entries as e", (j) =>
        j.onRef("e.participant_id", "=", "m.participant_id").on("e.season_id", "=", seasonId),
      )
      .leftJoin("orders as o", "o.id", "e.order_id")
      .select(["m.participant_id", "p.name", "p.who", "m.joined_at", "o.status as order_status"])
      .where("m.team_id", "=", teamId)
      .orderBy("m.joined_at")
      .orderBy("m.participant_id")
      .execute();
  },
};
