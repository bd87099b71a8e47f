import { createHash, randomBytes } from "node:crypto";
import type { Kysely } from "kysely";
import type { Config } from "../../config.js";
import { isUniqueViolation } from "../../db/database.js";
import type { Executor } from "../../db/executor.js";
import type { Database } from "../../db/schema.js";
import { badRequest, conflict, notFound, Problem } from "../../http/problem.js";
import { type TeamStanding, teamStanding } from "../governance/constituencies.js";
import { seasonOf } from "../season.js";
import type { ParticipantRow, TeamRow, Who } from "../tables.js";
import {
  type Composition,
  changed,
  checkRatio,
  type MemberKind,
  memberKind,
  type RatioReason,
  ROSTER_SIZE,
  SHARE_MAX_PCT,
  SHARE_MIN_PCT,
  type Shares,
} from "./ratio.js";
import { teamStore } from "./store.js";

/**
 * Olympiad teams (POST /api/olympiad { action: "team", op }), docs/olympiad-teams.md.
 *
 * - create: the creator becomes captain and first member; the join code is shown once (SHA-256 stored).
 * - join: by join code; at most ROSTER_SIZE members. A seat is taken by one conditional update
 *   (`member_count < 50`), which also serialises every roster change of a team on its row.
 * - leave: a captain must transfer first unless they are the last member (then the team dissolves).
 * - lock: captain only, only while the ratio rule holds; sets the season. A locked team refuses a
 *   join or leave that would break the rule (409 `ratio_rule` with current and resulting shares).
 * - transfer: captain → another member. code: captain only, a new join code (the old one stops working).
 * - view: the caller's team. Every op answers the team view, which always says `eligible` and why not.
 */

export type TeamOp = "create" | "join" | "leave" | "lock" | "transfer" | "code" | "view";

export interface TeamMemberView {
  participant_id: string;
  name: string;
  who: Who;
  member_kind: MemberKind;
  captain: boolean;
  /** entered in the team's season (its locked season, else the current one): the entry's order is active */
  entered: boolean;
  joined_at: string;
}

export interface TeamView {
  team_id: string;
  name: string;
  captain_id: string;
  roster_size: number;
  member_count: number;
  seats_left: number;
  locked: boolean;
  locked_at: string | null;
  season_id: string | null;
  created_at: string;
  shares: Shares;
  /** the ratio rule holds now (human and autonomous share each within 30-70 %) */
  eligible: boolean;
  /** why not eligible (empty when eligible) */
  reasons: RatioReason[];
  entered_members: number;
  /** whether the captain's vote counts in team_captains: locked, and eligible over the paid members */
  governance: TeamStanding;
  members: TeamMemberView[];
}

export interface TeamResult {
  action: "team";
  op: TeamOp;
  /** the team after the op; null after the last member left (the team dissolved) */
  team: TeamView | null;
  /** create and code only: shown once, stored hashed */
  join_code?: string;
  dissolved?: boolean;
}

export type TeamAction =
  | { op: "create"; name: string }
  | { op: "join"; join_code: string }
  | { op: "leave" }
  | { op: "lock" }
  | { op: "transfer"; to: string }
  | { op: "code" }
  | { op: "view" };

const codeHash = (code: string) => createHash("sha256").update(code, "utf8").digest("hex");
const newJoinCode = () => `join_${randomBytes(18).toString("base64url")}`;

export class Teams {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly config: Pick<Config, "olympiad">,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async act(participant: ParticipantRow, action: TeamAction): Promise<TeamResult> {
    switch (action.op) {
      case "create":
        return this.create(participant, action.name);
      case "join":
        return this.join(participant, action.join_code);
      case "leave":
        return this.leave(participant);
      case "lock":
        return this.lock(participant);
      case "transfer":
        return this.transfer(participant, action.to);
      case "code":
        return this.rotateCode(participant);
      case "view":
        return { action: "team", op: "view", team: await this.view((await this.myTeam(participant)).id) };
    }
  }

  async create(participant: ParticipantRow, rawName: string): Promise<TeamResult> {
    const name = rawName.trim();
    if (name.length === 0) throw badRequest("team_name_required", "A team name is required (1-80 characters).");
    if (await teamStore.membership(this.db, participant.id)) throw alreadyInTeam();
    const code = newJoinCode();
    const at = this.now().toISOString();
    const team: TeamRow = {
      id: `team_${randomBytes(12).toString("base64url")}`,
      name,
      captain_id: participant.id,
      join_code_hash: codeHash(code),
      member_count: 1,
      locked_at: null,
      season_id: null,
      created_at: at,
      updated_at: at,
    };
    try {
      await this.db.transaction().execute(async (trx) => {
        await teamStore.insertTeam(trx, team);
        await teamStore.insertMember(trx, { team_id: team.id, participant_id: participant.id, joined_at: at });
      });
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      if (await teamStore.byName(this.db, name)) {
        throw conflict("team_name_taken", `A team named "${name}" already exists.`);
      }
      throw alreadyInTeam();
    }
    return { action: "team", op: "create", team: await this.view(team.id), join_code: code };
  }

  async join(participant: ParticipantRow, code: string): Promise<TeamResult> {
    const team = await teamStore.byCodeHash(this.db, codeHash(code.trim()));
    if (!team) throw notFound("join_code_invalid", "No team has this join code (it may have been replaced).");
    const member = await teamStore.membership(this.db, participant.id);
    if (member) throw alreadyInTeam(member.team_id === team.id ? team.id : undefined);
    const kind = memberKind(participant.who);
    const at = this.now().toISOString();
    try {
      await this.db.transaction().execute(async (trx) => {
        if (!(await teamStore.takeSeat(trx, team.id, ROSTER_SIZE, at))) {
          if (!(await teamStore.byId(trx, team.id))) throw teamGone();
          throw conflict("team_full", `The team is full: at most ${ROSTER_SIZE} members.`, {
            roster_size: ROSTER_SIZE,
          });
        }
        await teamStore.insertMember(trx, { team_id: team.id, participant_id: participant.id, joined_at: at });
        await this.keepRule(trx, team.id, kind, 1, "join");
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw alreadyInTeam();
      throw err;
    }
    return { action: "team", op: "join", team: await this.view(team.id) };
  }

  async leave(participant: ParticipantRow): Promise<TeamResult> {
    const team = await this.myTeam(participant);
    const at = this.now().toISOString();
    if (team.captain_id === participant.id) {
      if (team.member_count > 1) throw captainMustTransfer();
      // The last member leaves: the team dissolves (a concurrent join makes this a transfer case).
      const gone = await this.db.transaction().execute(async (trx) => {
        if (!(await teamStore.dissolve(trx, team.id, participant.id))) return false;
        await teamStore.deleteMember(trx, team.id, participant.id);
        return true;
      });
      if (!gone) throw captainMustTransfer();
      return { action: "team", op: "leave", team: null, dissolved: true };
    }
    const kind = memberKind(participant.who);
    await this.db.transaction().execute(async (trx) => {
      // The seat first: it locks the team row, so a concurrent transfer or lock is decided before this.
      if (!(await teamStore.freeSeat(trx, team.id, at))) throw notInTeam();
      const now = await teamStore.byId(trx, team.id);
      if (now?.captain_id === participant.id) throw captainMustTransfer();
      if (!(await teamStore.deleteMember(trx, team.id, participant.id))) throw notInTeam();
      await this.keepRule(trx, team.id, kind, -1, "leave");
    });
    return { action: "team", op: "leave", team: await this.view(team.id) };
  }

  async lock(participant: ParticipantRow): Promise<TeamResult> {
    const team = await this.myTeam(participant);
    captainOnly(team, participant, "lock the roster");
    if (team.locked_at === null) {
      const at = this.now().toISOString();
      const season = seasonOf(this.config, this.now());
      await this.db.transaction().execute(async (trx) => {
        if (!(await teamStore.lock(trx, team.id, season.id, at))) return; // locked concurrently
        const check = checkRatio(await teamStore.composition(trx, team.id));
        if (!check.eligible) {
          throw new Problem(
            409,
            "ratio_rule",
            `The roster cannot be locked: ${check.reasons.map((r) => r.detail).join(" ")} Both shares must be within ${SHARE_MIN_PCT}-${SHARE_MAX_PCT} %.`,
            { current: check.shares, reasons: check.reasons, rule: RULE },
          );
        }
      });
    }
    return { action: "team", op: "lock", team: await this.view(team.id) };
  }

  async transfer(participant: ParticipantRow, to: string): Promise<TeamResult> {
    const team = await this.myTeam(participant);
    captainOnly(team, participant, "transfer captaincy");
    if (to === participant.id) throw badRequest("transfer_to_self", "You are already the captain.");
    const at = this.now().toISOString();
    await this.db.transaction().execute(async (trx) => {
      if (!(await teamStore.setCaptain(trx, team.id, participant.id, to, at))) {
        throw conflict("captain_changed", "You are no longer this team's captain.");
      }
      const target = await teamStore.membership(trx, to);
      if (target?.team_id !== team.id) {
        throw notFound("member_not_found", `${to} is not a member of this team; captaincy goes to a member.`);
      }
    });
    return { action: "team", op: "transfer", team: await this.view(team.id) };
  }

  async rotateCode(participant: ParticipantRow): Promise<TeamResult> {
    const team = await this.myTeam(participant);
    captainOnly(team, participant, "issue a new join code");
    const code = newJoinCode();
    await teamStore.setCodeHash(this.db, team.id, codeHash(code), this.now().toISOString());
    return { action: "team", op: "code", team: await this.view(team.id), join_code: code };
  }

  /** The participant's team (404 `not_in_team`). */
  async myTeam(participant: ParticipantRow): Promise<TeamRow> {
    const member = await teamStore.membership(this.db, participant.id);
    const team = member ? await teamStore.byId(this.db, member.team_id) : undefined;
    if (!team) throw notInTeam();
    return team;
  }

  /** The participant's team view, or null when they are in no team. */
  async viewOf(participantId: string): Promise<TeamView | null> {
    const member = await teamStore.membership(this.db, participantId);
    return member ? this.view(member.team_id) : null;
  }

  async view(teamId: string, db: Executor = this.db): Promise<TeamView> {
    const team = await teamStore.byId(db, teamId);
    if (!team) throw teamGone();
    const seasonId = team.season_id ?? seasonOf(this.config, this.now()).id;
    const rows = await teamStore.members(db, teamId, seasonId);
    const c: Composition = { humans: 0, autonomous: 0 };
    const members = rows.map((r): TeamMemberView => {
      const kind = memberKind(r.who);
      if (kind === "human") c.humans += 1;
      else c.autonomous += 1;
      return {
        participant_id: r.participant_id,
        name: r.name,
        who: r.who,
        member_kind: kind,
        captain: r.participant_id === team.captain_id,
        entered: r.order_status === "active",
        joined_at: r.joined_at,
      };
    });
    const check = checkRatio(c);
    return {
      team_id: team.id,
      name: team.name,
      captain_id: team.captain_id,
      roster_size: ROSTER_SIZE,
      member_count: team.member_count,
      seats_left: ROSTER_SIZE - team.member_count,
      locked: team.locked_at !== null,
      locked_at: team.locked_at,
      season_id: team.season_id,
      created_at: team.created_at,
      shares: check.shares,
      eligible: check.eligible,
      reasons: check.reasons,
      entered_members: members.filter((m) => m.entered).length,
      governance: await teamStanding(db, teamId),
      members,
    };
  }

  /**
   * Inside a roster change (after it is written, while the team row is locked): a locked team must
   * still satisfy the rule, else 409 `ratio_rule` and the change rolls back.
   */
  private async keepRule(trx: Executor, teamId: string, kind: MemberKind, delta: 1 | -1, what: "join" | "leave") {
    const team = await teamStore.byId(trx, teamId);
    if (!team || team.locked_at === null) return;
    const after = await teamStore.composition(trx, teamId);
    const result = checkRatio(after);
    if (result.eligible) return;
    const before = checkRatio(changed(after, kind, delta === 1 ? -1 : 1));
    const s = (x: Shares) =>
      `${x.humans}/${x.members} human (${x.human_pct} %), ${x.autonomous}/${x.members} autonomous (${x.autonomous_pct} %)`;
    throw new Problem(
      409,
      "ratio_rule",
      `The team is locked and this ${what} would break the ratio rule: now ${s(before.shares)}, after ${s(result.shares)}; both shares must stay within ${SHARE_MIN_PCT}-${SHARE_MAX_PCT} %.`,
      { current: before.shares, resulting: result.shares, reasons: result.reasons, rule: RULE },
    );
  }
}

const RULE = {
  human_min_pct: SHARE_MIN_PCT,
  human_max_pct: SHARE_MAX_PCT,
  autonomous_min_pct: SHARE_MIN_PCT,
  autonomous_max_pct: SHARE_MAX_PCT,
};

function captainOnly(team: TeamRow, participant: ParticipantRow, what: string): void {
  if (team.captain_id !== participant.id) {
    throw new Problem(403, "captain_only", `Only the team's captain may ${what}.`, { captain_id: team.captain_id });
  }
}

function alreadyInTeam(teamId?: string): Problem {
  return conflict(
    "already_in_team",
    teamId
      ? "You are already a member of this team."
      : "You are already a member of a team; leave it first (a participant is in at most one team).",
    teamId ? { team_id: teamId } : {},
  );
}

function notInTeam(): Problem {
  return notFound("not_in_team", "You are not a member of any team.");
}

function teamGone(): Problem {
  return notFound("team_not_found", "The team no longer exists (its last member left).");
}

function captainMustTransfer(): Problem {
  return conflict(
    "captain_must_transfer",
    'The captain cannot leave while other members remain: transfer captaincy first ({ "op": "transfer", "to": "<participant_id>" }).',
  );
}
