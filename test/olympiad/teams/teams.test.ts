import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Problem } from "../../../src/http/problem.js";
import type { ParticipantRow, Who } from "../../../src/olympiad/tables.js";
import type { TeamResult } from "../../../src/olympiad/teams/service.js";
import { type TestApp, testApp } from "../../support/app.js";
import { ENGINES } from "../../support/databases.js";
import { problemOf } from "../../support/problem.js";

/**
 * Teams: create, join, leave, lock, transfer, code, view; the ratio rule at its boundaries
 * (3/10 and 7/10 lock, 2/10 and 8/10 do not), the 50-member roster, and the last seat under
 * concurrent joins on both databases.
 */

interface Member {
  row: ParticipantRow;
  token: string;
}

describe.each(ENGINES)("olympiad teams (%s)", (engine) => {
  let t: TestApp;
  let n = 0;
  beforeAll(async () => {
    t = await testApp(engine);
  });
  afterAll(async () => t?.close());

  const teams = () => t.app.services.teams;
  const person = async (who: Who): Promise<Member> => {
    n += 1;
    const { participants } = t.app.services;
    const r = await participants.register(
      who === "human_for_self"
        ? { who, name: `Human ${n}` }
        : {
            who,
            name: `Agent ${n}`,
            agent_id: `agent-${engine}-${n}`,
            operator_name: who === "human_for_agent" ? "Op" : undefined,
          },
    );
    return { row: await participants.authenticate(r.participant_token), token: r.participant_token };
  };
  const humans = (k: number) => Promise.all(Array.from({ length: k }, () => person("human_for_self")));
  const agents = (k: number) =>
    Promise.all(Array.from({ length: k }, (_, i) => person(i % 2 === 0 ? "agent_self" : "human_for_agent")));

  /** A team with `h` humans and `a` autonomous members (captain first: a human when h > 0). */
  const team = async (h: number, a: number, name = `Team ${engine} ${++n}`) => {
    const people = [...(await humans(h)), ...(await agents(a))];
    const [captain, ...rest] = people as [Member, ...Member[]];
    const created = await teams().create(captain.row, name);
    const code = created.join_code as string;
    for (const m of rest) await teams().join(m.row, code);
    return { captain, rest, code, id: created.team?.team_id as string };
  };

  const act = (token: string, payload: Record<string, unknown>) =>
    t.app.inject({
      method: "POST",
      url: "/api/olympiad",
      headers: { authorization: `Bearer ${token}` },
      payload: { action: "team", ...payload },
    });

  it("create → captain and first member, join code shown once and stored hashed; join; view", async () => {
    const [cap, other] = [await person("human_for_self"), await person("agent_self")];
    const created = await act(cap.token, { op: "create", name: `Founders ${engine}` });
    expect(created.statusCode, created.body).toBe(200);
    const body = created.json() as TeamResult;
    expect(body).toMatchObject({ action: "team", op: "create" });
    expect(body.join_code).toMatch(/^join_/);
    expect(body.team).toMatchObject({
      captain_id: cap.row.id,
      member_count: 1,
      roster_size: 50,
      seats_left: 49,
      locked: false,
      eligible: false,
      shares: { humans: 1, autonomous: 0, members: 1, human_pct: 100, autonomous_pct: 0 },
    });
    expect(body.team?.reasons.map((r) => r.code)).toEqual(["human_share_above_max", "autonomous_share_below_min"]);
    const row = await t.app.services.db.kysely
      .selectFrom("olympiad_teams")
      .selectAll()
      .where("id", "=", body.team?.team_id as string)
      .executeTakeFirstOrThrow();
    expect(row.join_code_hash).toBe(
      createHash("sha256")
        .update(body.join_code as string)
        .digest("hex"),
    );
    expect(JSON.stringify(row)).not.toContain(body.join_code);

    const joined = await act(other.token, { op: "join", join_code: body.join_code });
    expect(joined.statusCode, joined.body).toBe(200);
    expect(joined.json().team).toMatchObject({ member_count: 2, eligible: true, reasons: [] });
    expect(joined.json().join_code).toBeUndefined();
    const view = await act(other.token, { op: "view" });
    expect(view.json().team.members.map((m: { participant_id: string; captain: boolean }) => m.captain)).toEqual([
      true,
      false,
    ]);
    const me = await t.app.inject({
      method: "GET",
      url: "/api/olympiad/me",
      headers: { authorization: `Bearer ${other.token}` },
    });
    expect(me.json().team).toMatchObject({ team_id: body.team?.team_id, eligible: true });
  });

  it("errors: wrong code 404, already in a team 409, name taken 409, no team 404, captain-only 403", async () => {
    const { captain, rest, code } = await team(1, 1, `Taken ${engine}`);
    const stranger = await person("human_for_self");
    const wrong = await act(stranger.token, { op: "join", join_code: "join_nope" });
    expect(wrong.statusCode).toBe(404);
    expect(wrong.json().code).toBe("join_code_invalid");
    const twice = await act(rest[0]?.token as string, { op: "join", join_code: code });
    expect(twice.statusCode).toBe(409);
    expect(twice.json().code).toBe("already_in_team");
    const second = await act(captain.token, { op: "create", name: "Another" });
    expect(second.json().code).toBe("already_in_team");
    const sameName = await act(stranger.token, { op: "create", name: `Taken ${engine}` });
    expect(sameName.statusCode).toBe(409);
    expect(sameName.json().code).toBe("team_name_taken");
    const lonely = await person("agent_self");
    for (const op of ["view", "leave", "lock"]) {
      const r = await act(lonely.token, { op });
      expect(r.statusCode).toBe(404);
      expect(r.json().code).toBe("not_in_team");
    }
    const notCaptain = await act(rest[0]?.token as string, { op: "lock" });
    expect(notCaptain.statusCode).toBe(403);
    expect(notCaptain.json()).toMatchObject({ code: "captain_only", captain_id: captain.row.id });
    expect((await act(rest[0]?.token as string, { op: "transfer", to: captain.row.id })).statusCode).toBe(403);
    const missing = await act(captain.token, { op: "join" });
    expect(missing.statusCode).toBe(400);
  });

  it("lock: 3 humans of 10 locks, 2 of 10 does not (409 ratio_rule with the shares)", async () => {
    const three = await team(3, 7);
    const locked = await act(three.captain.token, { op: "lock" });
    expect(locked.statusCode, locked.body).toBe(200);
    expect(locked.json().team).toMatchObject({
      locked: true,
      season_id: "2026",
      eligible: true,
      shares: { humans: 3, members: 10, human_pct: 30, autonomous_pct: 70 },
    });
    const two = await team(2, 8);
    const refused = await act(two.captain.token, { op: "lock" });
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({
      code: "ratio_rule",
      current: { humans: 2, autonomous: 8, members: 10, human_pct: 20 },
      reasons: [{ code: "human_share_below_min" }, { code: "autonomous_share_above_max" }],
    });
    const view = await act(two.captain.token, { op: "view" });
    expect(view.json().team).toMatchObject({ locked: false, eligible: false });
  });

  it("lock: 7 humans of 10 locks, 8 of 10 does not", async () => {
    const seven = await team(7, 3);
    expect((await act(seven.captain.token, { op: "lock" })).json().team).toMatchObject({ locked: true });
    const eight = await team(8, 2);
    const refused = await act(eight.captain.token, { op: "lock" });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().current).toMatchObject({ humans: 8, members: 10, human_pct: 80, autonomous_pct: 20 });
    // locking twice is harmless
    expect((await act(seven.captain.token, { op: "lock" })).statusCode).toBe(200);
  });

  it("a locked team refuses a join or leave that breaks the rule, with current and resulting shares", async () => {
    const t3 = await team(3, 7);
    await teams().lock(t3.captain.row);
    // an autonomous join: 3/11 = 27 % human → refused
    const bot = await person("agent_self");
    const join = await act(bot.token, { op: "join", join_code: t3.code });
    expect(join.statusCode).toBe(409);
    expect(join.json()).toMatchObject({
      code: "ratio_rule",
      current: { humans: 3, autonomous: 7, members: 10, human_pct: 30 },
      resulting: { humans: 3, autonomous: 8, members: 11, human_pct: 27 },
    });
    expect(join.json().detail).toContain("3/10 human");
    // a human leaving: 2/9 = 22 % → refused
    const human = t3.rest.find((m) => m.row.who === "human_for_self") as Member;
    const leave = await act(human.token, { op: "leave" });
    expect(leave.statusCode).toBe(409);
    expect(leave.json()).toMatchObject({ current: { humans: 3, members: 10 }, resulting: { humans: 2, members: 9 } });
    // nothing changed
    const view = await teams().view(t3.id);
    expect(view).toMatchObject({ member_count: 10, shares: { humans: 3, members: 10 } });
    expect(
      await t.app.services.db.kysely
        .selectFrom("olympiad_team_members")
        .selectAll()
        .where("participant_id", "=", bot.row.id)
        .executeTakeFirst(),
    ).toBeUndefined();
    // a human join keeps it within: 4/11
    const ok = await act((await person("human_for_self")).token, { op: "join", join_code: t3.code });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().team).toMatchObject({ member_count: 11, eligible: true, shares: { humans: 4, members: 11 } });
    // an agent leaving 4/10 stays within too
    const agent = t3.rest.find((m) => m.row.who !== "human_for_self") as Member;
    expect((await act(agent.token, { op: "leave" })).statusCode).toBe(200);

    const t7 = await team(7, 3);
    await teams().lock(t7.captain.row);
    const eighth = await act((await person("human_for_self")).token, { op: "join", join_code: t7.code });
    expect(eighth.statusCode).toBe(409);
    expect(eighth.json().resulting).toMatchObject({ humans: 8, members: 11, human_pct: 72 });
  });

  it("an unlocked team forms freely, whatever its ratio", async () => {
    const all = await team(6, 0);
    const view = await teams().view(all.id);
    expect(view).toMatchObject({ member_count: 6, eligible: false, locked: false });
    expect(view.reasons.map((r) => r.code)).toContain("autonomous_share_below_min");
  });

  it("the 50th member joins, the 51st gets 409 team_full", async () => {
    const big = await team(25, 24);
    expect((await teams().view(big.id)).member_count).toBe(49);
    const fiftieth = await person("agent_self");
    const r50 = await act(fiftieth.token, { op: "join", join_code: big.code });
    expect(r50.statusCode, r50.body).toBe(200);
    expect(r50.json().team).toMatchObject({ member_count: 50, seats_left: 0, eligible: true });
    const r51 = await act((await person("human_for_self")).token, { op: "join", join_code: big.code });
    expect(r51.statusCode).toBe(409);
    expect(r51.json()).toMatchObject({ code: "team_full", roster_size: 50 });
    const rows = await t.app.services.db.kysely
      .selectFrom("olympiad_team_members")
      .select((eb) => eb.fn.countAll<number | string>().as("n"))
      .where("team_id", "=", big.id)
      .executeTakeFirstOrThrow();
    expect(Number(rows.n)).toBe(50);
  });

  it("two concurrent joins for the last seat: exactly one wins", async () => {
    const big = await team(25, 24);
    const [a, b] = [await person("human_for_self"), await person("agent_self")];
    const results = await Promise.allSettled([teams().join(a.row, big.code), teams().join(b.row, big.code)]);
    const won = results.filter((r) => r.status === "fulfilled");
    const lost = results.filter((r) => r.status === "rejected") as PromiseRejectedResult[];
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect((lost[0] as PromiseRejectedResult).reason as Problem).toMatchObject({ code: "team_full" });
    const view = await teams().view(big.id);
    expect(view.member_count).toBe(50);
    expect(view.members).toHaveLength(50);
  });

  it("five concurrent joins for two seats: exactly two win, and the count matches the rows", async () => {
    const big = await team(24, 24);
    const joiners = [...(await humans(3)), ...(await agents(2))];
    const results = await Promise.allSettled(joiners.map((j) => teams().join(j.row, big.code)));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(2);
    const view = await teams().view(big.id);
    expect(view.member_count).toBe(50);
    expect(view.members).toHaveLength(50);
  });

  it("leave and transfer: the captain transfers first; the last member dissolves the team", async () => {
    const { captain, rest, id } = await team(1, 1, `Transfer ${engine}`);
    const member = rest[0] as Member;
    const blocked = await act(captain.token, { op: "leave" });
    expect(blocked.statusCode).toBe(409);
    expect(blocked.json().code).toBe("captain_must_transfer");
    const outsider = await person("human_for_self");
    const toOutsider = await act(captain.token, { op: "transfer", to: outsider.row.id });
    expect(toOutsider.statusCode).toBe(404);
    expect(toOutsider.json().code).toBe("member_not_found");
    expect((await teams().view(id)).captain_id).toBe(captain.row.id);
    const self = await act(captain.token, { op: "transfer", to: captain.row.id });
    expect(self.json().code).toBe("transfer_to_self");
    const moved = await act(captain.token, { op: "transfer", to: member.row.id });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json().team.captain_id).toBe(member.row.id);
    const left = await act(captain.token, { op: "leave" });
    expect(left.statusCode).toBe(200);
    expect(left.json().team).toMatchObject({ member_count: 1, captain_id: member.row.id });
    const last = await act(member.token, { op: "leave" });
    expect(last.json()).toMatchObject({ op: "leave", team: null, dissolved: true });
    expect(
      await t.app.services.db.kysely.selectFrom("olympiad_teams").selectAll().where("id", "=", id).executeTakeFirst(),
    ).toBeUndefined();
    // the name is free again, and the former members may found or join another team
    const again = await act(member.token, { op: "create", name: `Transfer ${engine}` });
    expect(again.statusCode).toBe(200);
  });

  it("code: the captain gets a new join code; the old one stops working", async () => {
    const { captain, code } = await team(1, 0);
    const r = await act(captain.token, { op: "code" });
    expect(r.statusCode).toBe(200);
    const fresh = r.json().join_code as string;
    expect(fresh).not.toBe(code);
    const late = await person("agent_self");
    expect((await act(late.token, { op: "join", join_code: code })).statusCode).toBe(404);
    expect((await act(late.token, { op: "join", join_code: fresh })).statusCode).toBe(200);
  });

  it("the ratio problem is refused at the service too (same rule, no HTTP)", async () => {
    const two = await team(2, 8);
    const p = await problemOf(teams().lock(two.captain.row));
    expect(p.status).toBe(409);
    expect(p.extra).toMatchObject({ current: { humans: 2, members: 10 } });
  });
});
