import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Db } from "../../../src/db/database.js";
import type { ProposeAction } from "../../../src/olympiad/governance/schemas.js";
import { Governance, MAX_OPEN_PER_PROPOSER } from "../../../src/olympiad/governance/service.js";
import type { DecisionKind, ParticipantRow, Who } from "../../../src/olympiad/tables.js";
import { type TestApp, testApp } from "../../support/app.js";
import { ENGINES, freshDatabase } from "../../support/databases.js";
import { problemOf } from "../../support/problem.js";

const ADMIN_TOKEN = "admin-token-for-governance-tests";
const HOUR = 3_600_000;
const BASE = new Date("2030-03-02T12:00:00.000Z");

const rid = (prefix: string) => `${prefix}_${randomBytes(8).toString("hex")}`;

/**
 * Small fixtures written straight into the tables (the participants and teams services are O2's).
 * A participant is bound to a join-work identity of its own unless `free` (public_community standing,
 * issue #21 item 4); test/security/sybil-governance.test.ts does the same through the HTTP actions.
 */
function fixtures(db: Db) {
  const k = db.kysely;
  return {
    async participant(
      who: Who = "human_for_self",
      opts: { free?: boolean; identity?: string } = {},
    ): Promise<ParticipantRow> {
      const id = rid("par");
      const row: ParticipantRow = {
        id,
        token_hash: randomBytes(32).toString("hex"),
        who,
        name: `p ${id}`,
        agent_id: who === "human_for_self" ? null : `agent-${id}`,
        operator_name: who === "human_for_agent" ? "Ada" : null,
        email: null,
        created_at: BASE.toISOString(),
        identity_id: opts.free ? null : (opts.identity ?? `idn_${id}`),
      };
      await k.insertInto("olympiad_participants").values(row).execute();
      return row;
    },
    async team(
      captain: ParticipantRow,
      members: ParticipantRow[] = [],
      opts: { locked?: boolean } = {},
    ): Promise<string> {
      const id = rid("team");
      const at = BASE.toISOString();
      await k
        .insertInto("olympiad_teams")
        .values({
          id,
          name: id,
          captain_id: captain.id,
          join_code_hash: randomBytes(32).toString("hex"),
          member_count: 1 + members.length,
          locked_at: opts.locked ? at : null,
          season_id: opts.locked ? "2030" : null,
          created_at: at,
          updated_at: at,
        })
        .execute();
      for (const m of [captain, ...members]) {
        await k
          .insertInto("olympiad_team_members")
          .values({ team_id: id, participant_id: m.id, joined_at: at })
          .execute();
      }
      return id;
    },
    /** A gao-entry order (active unless told) and the participant's entry with it; returns the order id. */
    async enter(p: ParticipantRow, status: "active" | "revoked" | "refunded" = "active"): Promise<string> {
      const orderId = rid("ord");
      const at = BASE.toISOString();
      await k
        .insertInto("orders")
        .values({
          id: orderId,
          proof_key: rid("proof"),
          sku: "gao-entry",
          amount_cents: 100,
          currency: "USD",
          rail: "card_checkout",
          transaction_ref: null,
          email: null,
          agent_id: p.agent_id,
          status,
          access_token_hash: randomBytes(32).toString("hex"),
          license_key: null,
          meta: "{}",
          created_at: at,
          updated_at: at,
          revoked_at: null,
          revoke_reason: null,
        })
        .execute();
      await k
        .insertInto("olympiad_entries")
        .values({
          id: rid("ent"),
          participant_id: p.id,
          season_id: "2030",
          order_id: orderId,
          proof: "access_token",
          created_at: at,
        })
        .execute();
      return orderId;
    },
    async role(p: ParticipantRow, role: "steward" | "integrity") {
      await k
        .insertInto("olympiad_roles")
        .values({ participant_id: p.id, role, appointed_by: "admin:test", appointed_at: BASE.toISOString() })
        .execute();
    },
    async voteRows(proposalId: string) {
      return k.selectFrom("olympiad_votes").selectAll().where("proposal_id", "=", proposalId).execute();
    },
  };
}

const proposeBody = (kind: DecisionKind = "new_games", extra: Partial<ProposeAction> = {}): ProposeAction => ({
  action: "propose",
  kind,
  title: "Add a relay sprint",
  body: "A relay sprint between the speed events.",
  ...extra,
});

describe.each(ENGINES)("governance service (%s)", (engine) => {
  let db: Db;
  let clock: Date;
  let gov: Governance;
  let fx: ReturnType<typeof fixtures>;
  const audits: { actor: string; action: string; subject: string }[] = [];

  beforeAll(async () => {
    ({ db } = await freshDatabase(engine));
    gov = new Governance(db.kysely, {
      now: () => clock,
      audit: async (actor, action, subject) => {
        audits.push({ actor, action, subject });
      },
    });
    fx = fixtures(db);
  });
  afterAll(async () => db?.close());
  beforeEach(() => {
    clock = BASE;
  });

  const open = async (kind: DecisionKind = "new_games", extra: Partial<ProposeAction> = {}) =>
    (await gov.propose(await fx.participant(), proposeBody(kind, extra))).proposal;
  const vote = (p: ParticipantRow, proposal_id: string, choice: "yes" | "no" | "abstain") =>
    gov.vote(p, { action: "vote", proposal_id, choice });
  const people = async (n: number, who: Who = "human_for_self") =>
    Promise.all(Array.from({ length: n }, () => fx.participant(who)));

  it("opens a proposal with the kind's default window, or the one asked for", async () => {
    const ordinary = await open("new_games");
    expect(ordinary).toMatchObject({ state: "open", outcome: null, opens_at: BASE.toISOString() });
    expect(ordinary.proposal_id).toMatch(/^prop_/);
    expect(Date.parse(ordinary.closes_at) - BASE.getTime()).toBe(72 * HOUR);
    expect(ordinary.tally).toMatchObject({ voters: 0, mixed_yes: null, outcome: "no_quorum", quorum: 5 });
    const heavy = await open("prize_pool_release");
    expect(Date.parse(heavy.closes_at) - BASE.getTime()).toBe(168 * HOUR);
    expect(heavy.tally).toMatchObject({ quorum: 15, min_constituencies: 3, threshold: { num: "2", den: "3" } });
    const asked = await open("ratio_appeals", { window_hours: 30 });
    expect(Date.parse(asked.closes_at) - BASE.getTime()).toBe(30 * HOUR);
  });

  it(`refuses a proposer's ${MAX_OPEN_PER_PROPOSER + 1}th open proposal`, async () => {
    const p = await fx.participant();
    for (let i = 0; i < MAX_OPEN_PER_PROPOSER; i++) await gov.propose(p, proposeBody());
    const problem = await problemOf(gov.propose(p, proposeBody()));
    expect(problem).toMatchObject({ status: 409, code: "too_many_open_proposals" });
    // once the windows have closed the proposer may propose again
    clock = new Date(BASE.getTime() + 73 * HOUR);
    await expect(gov.propose(p, proposeBody())).resolves.toMatchObject({ action: "propose" });
  });

  it("mixes uneven constituencies: 1 captain yes, 10 agents no, 3 community yes → 12/17, passed", async () => {
    const prop = await open();
    // a paid agent captain of a locked team with two paid humans (1 of 3 autonomous: eligible)
    const captain = await fx.participant("agent_self");
    const crew = await people(2);
    for (const p of [captain, ...crew]) await fx.enter(p);
    await fx.team(captain, crew, { locked: true });
    const agents = await people(10, "agent_self");
    for (const a of agents) await fx.enter(a);
    const community = await people(3);
    expect((await vote(captain, prop.proposal_id, "yes")).constituency).toBe("team_captains");
    for (const a of agents) expect((await vote(a, prop.proposal_id, "no")).constituency).toBe("entered_agents");
    for (const c of community) expect((await vote(c, prop.proposal_id, "yes")).constituency).toBe("public_community");
    const { tally } = await gov.proposal(prop.proposal_id);
    expect(tally).toMatchObject({
      voters: 14,
      mixed_yes: { num: "12", den: "17" },
      mixed_yes_ppm: 705_882,
      outcome: "passed",
    });
    const by = Object.fromEntries(tally.constituencies.map((c) => [c.constituency, c]));
    expect(by.team_captains).toMatchObject({ yes: 1, no: 0, effective_weight: { num: "8", den: "17" } });
    expect(by.entered_agents).toMatchObject({ yes: 0, no: 10, effective_weight: { num: "5", den: "17" } });
    expect(by.lab_stewards).toMatchObject({ empty: true, effective_weight: { num: "0", den: "1" } });
  });

  it("counts a voter with several roles once, in the largest-weight constituency", async () => {
    const prop = await open();
    // captain + entered agent + steward + integrity → team_captains only
    const all = await fx.participant("human_for_agent");
    const mate = await fx.participant("human_for_self");
    await fx.enter(mate);
    await fx.team(all, [mate], { locked: true });
    await fx.enter(all);
    await fx.role(all, "steward");
    await fx.role(all, "integrity");
    // entered agent + steward → entered_agents (0.25 > 0.1)
    const agentSteward = await fx.participant("agent_self");
    await fx.enter(agentSteward);
    await fx.role(agentSteward, "steward");
    // steward only → lab_stewards (a steward is not in the public community)
    const steward = await fx.participant();
    await fx.role(steward, "steward");
    // integrity only → residual_integrity
    const auditor = await fx.participant();
    await fx.role(auditor, "integrity");
    // a human competing for themself with an entry is not an entered agent; a revoked agent entry counts for nothing
    const human = await fx.participant("human_for_self");
    await fx.enter(human);
    const revoked = await fx.participant("agent_self");
    await fx.enter(revoked, "revoked");

    const cast = async (p: ParticipantRow) => (await vote(p, prop.proposal_id, "yes")).constituency;
    expect(await cast(all)).toBe("team_captains");
    expect(await cast(agentSteward)).toBe("entered_agents");
    expect(await cast(steward)).toBe("lab_stewards");
    expect(await cast(auditor)).toBe("residual_integrity");
    expect(await cast(human)).toBe("public_community");
    expect(await cast(revoked)).toBe("public_community");
    const { tally } = await gov.proposal(prop.proposal_id);
    expect(tally.voters).toBe(6);
    const yes = Object.fromEntries(tally.constituencies.map((c) => [c.constituency, c.yes]));
    expect(yes).toEqual({
      team_captains: 1,
      entered_agents: 1,
      public_community: 2,
      lab_stewards: 1,
      residual_integrity: 1,
    });
    expect((await fx.voteRows(prop.proposal_id)).length).toBe(6);
  });

  it("replaces a changed vote inside the window (one row, first cast time kept)", async () => {
    const prop = await open();
    const p = await fx.participant();
    const first = await vote(p, prop.proposal_id, "yes");
    expect(first).toMatchObject({ replaced: false, choice: "yes" });
    clock = new Date(BASE.getTime() + HOUR);
    const second = await vote(p, prop.proposal_id, "no");
    expect(second).toMatchObject({ replaced: true, choice: "no", cast_at: first.cast_at });
    expect(second.updated_at).toBe(clock.toISOString());
    const rows = await fx.voteRows(prop.proposal_id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ choice: "no", voter_id: p.id });
    const community = second.tally.constituencies.find((c) => c.constituency === "public_community");
    expect(community).toMatchObject({ yes: 0, no: 1, abstain: 0 });
  });

  it("counts one captain's vote per team after a captaincy transfer", async () => {
    const prop = await open();
    const a = await fx.participant("agent_self");
    const b = await fx.participant();
    await fx.enter(a);
    await fx.enter(b);
    const team = await fx.team(a, [b], { locked: true });
    expect((await vote(a, prop.proposal_id, "yes")).constituency).toBe("team_captains");
    await db.kysely.updateTable("olympiad_teams").set({ captain_id: b.id }).where("id", "=", team).execute();
    // the team's captain seat already voted: the new captain votes in their own next constituency
    expect((await vote(b, prop.proposal_id, "yes")).constituency).toBe("public_community");
    // once the old captain re-votes (now an entered agent), the new captain may take the seat
    expect((await vote(a, prop.proposal_id, "no")).constituency).toBe("entered_agents");
    expect((await vote(b, prop.proposal_id, "yes")).constituency).toBe("team_captains");
  });

  it("free participants have no standing: no vote, no proposal (403 governance_standing_required)", async () => {
    const prop = await open();
    const free = await fx.participant("agent_self", { free: true });
    expect(await problemOf(vote(free, prop.proposal_id, "yes"))).toMatchObject({
      status: 403,
      code: "governance_standing_required",
    });
    expect(await problemOf(gov.propose(free, proposeBody()))).toMatchObject({
      status: 403,
      code: "governance_standing_required",
    });
    // a revoked order is no standing either; a steward needs no payment
    const revoked = await fx.participant("agent_self", { free: true });
    await fx.enter(revoked, "revoked");
    expect(await problemOf(vote(revoked, prop.proposal_id, "yes"))).toMatchObject({ status: 403 });
    const steward = await fx.participant("human_for_self", { free: true });
    await fx.role(steward, "steward");
    expect((await vote(steward, prop.proposal_id, "yes")).constituency).toBe("lab_stewards");
    expect(await fx.voteRows(prop.proposal_id)).toHaveLength(1);
  });

  it("a captain counts only when paid, for a locked team eligible over its paid members", async () => {
    const prop = await open();
    // paid agent captain, unlocked team: votes as an entered agent
    const unlocked = await fx.participant("agent_self");
    const h1 = await fx.participant();
    for (const p of [unlocked, h1]) await fx.enter(p);
    await fx.team(unlocked, [h1]);
    expect((await vote(unlocked, prop.proposal_id, "yes")).constituency).toBe("entered_agents");
    // locked, but only the captain paid: 1 paid member is never eligible
    const lonely = await fx.participant("agent_self");
    await fx.enter(lonely);
    await fx.team(lonely, [await fx.participant()], { locked: true });
    expect((await vote(lonely, prop.proposal_id, "yes")).constituency).toBe("entered_agents");
    // locked and eligible, but the captain did not pay: the captain has only the identity's public standing
    const unpaid = await fx.participant("agent_self");
    const h2 = await fx.participant();
    const a2 = await fx.participant("agent_self");
    for (const p of [h2, a2]) await fx.enter(p);
    await fx.team(unpaid, [h2, a2], { locked: true });
    expect((await vote(unpaid, prop.proposal_id, "yes")).constituency).toBe("public_community");
  });

  it("one join-work identity backs one public vote per proposal and its share of open proposals", async () => {
    const prop = await open();
    const identity = rid("idn");
    const [a, b, c, d] = await Promise.all(
      Array.from({ length: 4 }, () => fx.participant("human_for_self", { identity })),
    );
    expect((await vote(a as ParticipantRow, prop.proposal_id, "yes")).constituency).toBe("public_community");
    expect(await problemOf(vote(b as ParticipantRow, prop.proposal_id, "yes"))).toMatchObject({
      status: 409,
      code: "identity_already_voted",
    });
    // a re-vote by the same participant is fine
    await expect(vote(a as ParticipantRow, prop.proposal_id, "no")).resolves.toMatchObject({ replaced: true });
    const community = (await gov.proposal(prop.proposal_id)).tally.constituencies.find(
      (x) => x.constituency === "public_community",
    );
    expect(community).toMatchObject({ yes: 0, no: 1 });
    // concurrently: five participants behind one fresh identity, one counted public vote
    const racePro = await open();
    const shared = rid("idn");
    const five = await Promise.all(
      Array.from({ length: 5 }, () => fx.participant("human_for_self", { identity: shared })),
    );
    const raced = await Promise.allSettled(five.map((p) => vote(p, racePro.proposal_id, "yes")));
    expect(raced.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    for (const r of raced) {
      if (r.status === "rejected") expect(r.reason).toMatchObject({ status: 409, code: "identity_already_voted" });
    }
    expect((await gov.proposal(racePro.proposal_id)).tally.voters).toBe(1);
    // proposals: the identity's participants share one participant's cap
    const before = await db.kysely
      .selectFrom("olympiad_proposals")
      .select("id")
      .where("identity_id", "=", identity)
      .execute();
    expect(before).toHaveLength(0);
    await gov.propose(a as ParticipantRow, proposeBody());
    await gov.propose(b as ParticipantRow, proposeBody());
    await gov.propose(c as ParticipantRow, proposeBody());
    expect(await problemOf(gov.propose(d as ParticipantRow, proposeBody()))).toMatchObject({
      status: 409,
      code: "too_many_open_proposals",
      extra: { scope: "identity", max: MAX_OPEN_PER_PROPOSER },
    });
  });

  it("caps open proposals per team and in all (settings; 0 turns a cap off)", async () => {
    const { db: own } = await freshDatabase(engine);
    try {
      const ofx = fixtures(own);
      const capped = new Governance(own.kysely, { now: () => clock, caps: { maxOpen: 5, perTeam: 2 } });
      const members = await Promise.all(Array.from({ length: 3 }, () => ofx.participant()));
      await ofx.team(members[0] as ParticipantRow, members.slice(1));
      await capped.propose(members[0] as ParticipantRow, proposeBody());
      await capped.propose(members[1] as ParticipantRow, proposeBody());
      expect(await problemOf(capped.propose(members[2] as ParticipantRow, proposeBody()))).toMatchObject({
        status: 409,
        code: "too_many_open_team_proposals",
        extra: { open: 2, max: 2 },
      });
      for (let i = 0; i < 3; i++) await capped.propose(await ofx.participant(), proposeBody());
      const full = await problemOf(capped.propose(await ofx.participant(), proposeBody()));
      expect(full).toMatchObject({ status: 409, code: "too_many_open_proposals_global", extra: { open: 5, max: 5 } });
      expect(full.extra.next_closes_at).toBe(new Date(BASE.getTime() + 72 * HOUR).toISOString());
      // concurrent proposals never pass the global cap
      const more = new Governance(own.kysely, { now: () => clock, caps: { maxOpen: 8, perTeam: 0 } });
      const racers = await Promise.all(Array.from({ length: 8 }, () => ofx.participant()));
      const results = await Promise.allSettled(racers.map((r) => more.propose(r, proposeBody())));
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(3);
      const open = await own.kysely.selectFrom("olympiad_proposals").select("id").where("state", "=", "open").execute();
      expect(open).toHaveLength(8);
      // caps off: the fixture of a flood test
      const off = new Governance(own.kysely, { now: () => clock, caps: { maxOpen: 0, perTeam: 0, perParticipant: 0 } });
      const one = await ofx.participant();
      for (let i = 0; i < 5; i++) await off.propose(one, proposeBody());
    } finally {
      await own.close();
    }
  });

  it("answers 404 for an unknown proposal", async () => {
    const p = await fx.participant();
    expect(await problemOf(vote(p, "prop_nope", "yes"))).toMatchObject({ status: 404, code: "proposal_not_found" });
    expect(await problemOf(gov.proposal("prop_nope"))).toMatchObject({ status: 404, code: "proposal_not_found" });
  });

  it("fixes tally and outcome when the window closes; later votes get 409 and later changes change nothing", async () => {
    const prop = await open("new_games", { window_hours: 24 });
    const voters = await people(5);
    for (const v of voters.slice(0, 4)) await vote(v, prop.proposal_id, "yes");
    // a community voter who becomes a steward inside the window keeps the constituency of their cast
    await vote(voters[4] as ParticipantRow, prop.proposal_id, "no");
    await fx.role(voters[4] as ParticipantRow, "steward");
    // one millisecond before the end a vote is still taken
    clock = new Date(Date.parse(prop.closes_at) - 1);
    await expect(vote(voters[0] as ParticipantRow, prop.proposal_id, "yes")).resolves.toMatchObject({ replaced: true });

    clock = new Date(prop.closes_at);
    const late = await problemOf(vote(await fx.participant(), prop.proposal_id, "no"));
    expect(late).toMatchObject({ status: 409, code: "voting_closed" });
    expect(late.extra).toMatchObject({ proposal_id: prop.proposal_id, closes_at: prop.closes_at, outcome: "passed" });

    const closed = await gov.proposal(prop.proposal_id);
    expect(closed).toMatchObject({ state: "closed", outcome: "passed" });
    expect(closed.tally).toMatchObject({ voters: 5, mixed_yes: { num: "4", den: "5" }, as_of: prop.closes_at });
    const stored = await db.kysely
      .selectFrom("olympiad_proposals")
      .select(["state", "outcome", "tally"])
      .where("id", "=", prop.proposal_id)
      .executeTakeFirstOrThrow();
    expect(stored.state).toBe("closed");
    expect(JSON.parse(stored.tally ?? "null")).toEqual(closed.tally);

    // after the close: roles change, votes are changed behind the service's back, time passes
    await fx.role(voters[0] as ParticipantRow, "integrity");
    await fx.team(voters[1] as ParticipantRow);
    await db.kysely
      .deleteFrom("olympiad_votes")
      .where("voter_id", "=", (voters[2] as ParticipantRow).id)
      .execute();
    await db.kysely
      .insertInto("olympiad_votes")
      .values(
        (await people(3)).map((p) => ({
          proposal_id: prop.proposal_id,
          voter_id: p.id,
          choice: "no" as const,
          constituency: "team_captains",
          cast_at: clock.toISOString(),
          updated_at: clock.toISOString(),
        })),
      )
      .execute();
    clock = new Date(Date.parse(prop.closes_at) + 30 * 24 * HOUR);
    expect(await gov.closeIfDue(prop.proposal_id)).toMatchObject({ state: "closed", outcome: "passed" });
    const again = await gov.proposal(prop.proposal_id);
    expect(again.tally).toEqual(closed.tally);
    const listed = (await gov.proposalsView({ limit: 100 })).proposals.find((p) => p.proposal_id === prop.proposal_id);
    // the list shows the same fixed tally (a list item may add links and cut a long body: issue #21 item 5)
    expect(listed).toMatchObject({
      proposal_id: closed.proposal_id,
      state: "closed",
      outcome: "passed",
      tally: closed.tally,
    });
  });

  it("closes with no_quorum when too few voted", async () => {
    const prop = await open("event_weights");
    for (const v of await people(2)) await vote(v, prop.proposal_id, "yes");
    clock = new Date(Date.parse(prop.closes_at) + 1);
    const view = await gov.proposalsView({ limit: 100 });
    const closed = view.proposals.find((p) => p.proposal_id === prop.proposal_id);
    expect(closed).toMatchObject({ state: "closed", outcome: "no_quorum" });
    expect(closed?.tally).toMatchObject({ voters: 2, quorum_met: false, mixed_yes: { num: "1", den: "1" } });
    expect(view.closed).toBeGreaterThanOrEqual(1);
  });

  it("closes a proposal exactly once under concurrent readers", async () => {
    const prop = await open();
    for (const v of await people(5)) await vote(v, prop.proposal_id, "no");
    clock = new Date(Date.parse(prop.closes_at) + 5);
    const results = await Promise.all(Array.from({ length: 6 }, () => gov.closeIfDue(prop.proposal_id)));
    const tallies = new Set(results.map((r) => r?.tally));
    expect(tallies.size).toBe(1);
    expect(results.every((r) => r?.state === "closed" && r.outcome === "failed")).toBe(true);
  });

  it("keeps one row per voter under concurrent votes and counts every concurrent voter", async () => {
    const prop = await open();
    const p = await fx.participant();
    const choices = ["yes", "no", "abstain", "yes", "no", "yes"] as const;
    await Promise.all(choices.map((c) => vote(p, prop.proposal_id, c)));
    const others = await people(8);
    await Promise.all(others.map((o) => vote(o, prop.proposal_id, "yes")));
    const rows = await fx.voteRows(prop.proposal_id);
    expect(rows).toHaveLength(9);
    expect((await gov.proposal(prop.proposal_id)).tally.voters).toBe(9);
  });

  it("lists open proposals with live tallies and closed ones with fixed tallies", async () => {
    const prop = await open();
    const v = await fx.participant();
    await vote(v, prop.proposal_id, "abstain");
    const view = await gov.proposalsView({ limit: 100 });
    expect(view.view).toBe("proposals");
    const listed = view.proposals.find((p) => p.proposal_id === prop.proposal_id);
    expect(listed).toMatchObject({ state: "open", outcome: null, tally: { voters: 1, as_of: BASE.toISOString() } });
    expect(view.open + view.closed).toBeGreaterThanOrEqual(view.proposals.length);
  });

  it("appoints and removes roles (audited once per change) and refuses unknown participants", async () => {
    const p = await fx.participant();
    const before = audits.length;
    expect(await gov.changeRole("admin:x", { participant_id: p.id, role: "steward", op: "appoint" })).toMatchObject({
      changed: true,
      roles: [{ participant_id: p.id, role: "steward", appointed_by: "admin:x" }],
    });
    expect((await gov.changeRole("admin:x", { participant_id: p.id, role: "steward", op: "appoint" })).changed).toBe(
      false,
    );
    expect((await gov.changeRole("admin:x", { participant_id: p.id, role: "steward", op: "remove" })).roles).toEqual(
      [],
    );
    expect((await gov.changeRole("admin:x", { participant_id: p.id, role: "steward", op: "remove" })).changed).toBe(
      false,
    );
    expect(audits.slice(before).map((a) => a.action)).toEqual(["olympiad.role.appoint", "olympiad.role.remove"]);
    expect(
      await problemOf(gov.changeRole("admin:x", { participant_id: "par_missing", role: "integrity", op: "appoint" })),
    ).toMatchObject({ status: 404, code: "participant_not_found" });
  });
});

describe.each(ENGINES)("governance over HTTP (%s)", (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp(engine, { ADMIN_TOKEN });
  });
  afterAll(async () => t?.close());

  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  /** A join-work identity's token (public_community standing when sent with register, propose or vote). */
  const joinWork = async () => {
    const r = await t.app.inject({
      method: "POST",
      url: "/api/join-work",
      payload: {
        name: "Voter",
        intent: "I want to vote on the games.",
        seed: randomBytes(33).toString("base64").slice(0, 33),
      },
    });
    expect(r.statusCode, r.body).toBe(201);
    return r.json().token as string;
  };
  const register = async (name: string, identity = true) => {
    const r = await t.app.inject({
      method: "POST",
      url: "/api/olympiad",
      payload: { action: "register", who: "human_for_self", name },
      headers: identity ? { "x-identity-token": await joinWork() } : {},
    });
    expect(r.statusCode, r.body).toBe(201);
    return r.json() as { participant_id: string; participant_token: string };
  };
  const act = (token: string, payload: Record<string, unknown>) =>
    t.app.inject({ method: "POST", url: "/api/olympiad", payload, headers: { authorization: `Bearer ${token}` } });

  it("guards the role routes with ADMIN_TOKEN (401 without or with a wrong token)", async () => {
    const p = await register("Rolf");
    const body = { participant_id: p.participant_id, role: "steward", op: "appoint" };
    for (const headers of [
      {},
      { authorization: "Bearer not-the-admin-token" },
      { authorization: `Bearer ${p.participant_token}` },
    ]) {
      const post = await t.app.inject({ method: "POST", url: "/api/admin/olympiad/roles", payload: body, headers });
      expect(post.statusCode).toBe(401);
      expect(post.json()).toMatchObject({ code: "admin_unauthorized" });
      const get = await t.app.inject({ method: "GET", url: "/api/admin/olympiad/roles", headers });
      expect(get.statusCode).toBe(401);
    }
    const roles = await t.app.services.db.kysely.selectFrom("olympiad_roles").selectAll().execute();
    expect(roles.filter((r) => r.participant_id === p.participant_id)).toEqual([]);
  });

  it("appoints, lists and removes a steward, each change in the audit log", async () => {
    const p = await register("Stella");
    const appoint = await t.app.inject({
      method: "POST",
      url: "/api/admin/olympiad/roles",
      headers: { ...admin, "x-operator": "ops1" },
      payload: { participant_id: p.participant_id, role: "steward", op: "appoint" },
    });
    expect(appoint.statusCode, appoint.body).toBe(200);
    expect(appoint.json()).toMatchObject({ op: "appoint", changed: true, roles: [{ role: "steward" }] });
    expect(appoint.json().roles[0].appointed_by).toMatch(/^admin:[0-9a-f]{12}:ops1$/);

    const list = await t.app.inject({
      method: "GET",
      url: `/api/admin/olympiad/roles?participant_id=${p.participant_id}`,
      headers: admin,
    });
    expect(list.statusCode).toBe(200);
    expect(list.json().roles).toHaveLength(1);

    const remove = await t.app.inject({
      method: "POST",
      url: "/api/admin/olympiad/roles",
      headers: admin,
      payload: { participant_id: p.participant_id, role: "steward", op: "remove" },
    });
    expect(remove.json()).toMatchObject({ changed: true, roles: [] });
    const audit = await t.app.services.db.kysely
      .selectFrom("audit_log")
      .selectAll()
      .where("subject", "=", p.participant_id)
      .orderBy("at")
      .execute();
    expect(audit.map((a) => a.action).sort()).toEqual(["olympiad.role.appoint", "olympiad.role.remove"]);
    expect(JSON.parse(audit[0]?.detail ?? "{}")).toEqual({ role: "steward" });

    const unknown = await t.app.inject({
      method: "POST",
      url: "/api/admin/olympiad/roles",
      headers: admin,
      payload: { participant_id: "par_unknown", role: "integrity", op: "appoint" },
    });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ code: "participant_not_found" });
    const bad = await t.app.inject({
      method: "POST",
      url: "/api/admin/olympiad/roles",
      headers: admin,
      payload: { participant_id: p.participant_id, role: "king", op: "appoint" },
    });
    expect(bad.statusCode).toBe(400);
  });

  it("proposes and votes through POST /api/olympiad; a steward appointed by the operator votes as steward", async () => {
    const proposer = await register("Paula");
    const steward = await register("Sam");
    const voter = await register("Vic");
    await t.app.inject({
      method: "POST",
      url: "/api/admin/olympiad/roles",
      headers: admin,
      payload: { participant_id: steward.participant_id, role: "steward", op: "appoint" },
    });
    const proposed = await act(proposer.participant_token, {
      action: "propose",
      kind: "change_games",
      title: "Shorten the marathon",
      body: "Make the marathon 30 km.",
    });
    expect(proposed.statusCode, proposed.body).toBe(200);
    const id = proposed.json().proposal.proposal_id as string;

    const s = await act(steward.participant_token, { action: "vote", proposal_id: id, choice: "yes" });
    expect(s.statusCode, s.body).toBe(200);
    expect(s.json()).toMatchObject({ action: "vote", constituency: "lab_stewards", replaced: false });
    const v = await act(voter.participant_token, { action: "vote", proposal_id: id, choice: "no" });
    expect(v.json()).toMatchObject({ constituency: "public_community" });
    const again = await act(voter.participant_token, { action: "vote", proposal_id: id, choice: "yes" });
    expect(again.json()).toMatchObject({ replaced: true });

    const one = await t.app.inject({ method: "GET", url: `/api/olympiad/proposals/${id}` });
    expect(one.statusCode).toBe(200);
    expect(one.json()).toMatchObject({
      proposal_id: id,
      state: "open",
      tally: { voters: 2, mixed_yes: { num: "1", den: "1" } },
    });

    const missing = await act(voter.participant_token, { action: "vote", proposal_id: "prop_missing", choice: "yes" });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ code: "proposal_not_found" });
    const badChoice = await act(voter.participant_token, { action: "vote", proposal_id: id, choice: "maybe" });
    expect(badChoice.statusCode).toBe(400);
    const badKind = await act(voter.participant_token, {
      action: "propose",
      kind: "abolish_games",
      title: "xyz",
      body: "b",
    });
    expect(badKind.statusCode).toBe(400);
    const shortWindow = await act(voter.participant_token, {
      action: "propose",
      kind: "new_games",
      title: "Too fast",
      body: "b",
      window_hours: 1,
    });
    expect(shortWindow.statusCode).toBe(400);
    const anonymous = await t.app.inject({
      method: "POST",
      url: "/api/olympiad",
      payload: { action: "vote", proposal_id: id, choice: "yes" },
    });
    expect(anonymous.statusCode).toBe(401);
    const notFound = await t.app.inject({ method: "GET", url: "/api/olympiad/proposals/prop_missing" });
    expect(notFound.statusCode).toBe(404);
  });

  it("a free participant gets 403 until an X-Identity-Token binds a join-work identity; a bad token is 401", async () => {
    const proposer = await register("Prue");
    const proposed = await act(proposer.participant_token, {
      action: "propose",
      kind: "event_weights",
      title: "Weigh the relay",
      body: "Double it.",
    });
    const id = proposed.json().proposal.proposal_id as string;
    const free = await register("Fred", false);
    const refused = await act(free.participant_token, { action: "vote", proposal_id: id, choice: "yes" });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: "governance_standing_required" });
    const bad = await t.app.inject({
      method: "POST",
      url: "/api/olympiad",
      payload: { action: "vote", proposal_id: id, choice: "yes" },
      headers: { authorization: `Bearer ${free.participant_token}`, "x-identity-token": "lpi_forged" },
    });
    expect(bad.statusCode).toBe(401);
    const token = await joinWork();
    const ok = await t.app.inject({
      method: "POST",
      url: "/api/olympiad",
      payload: { action: "vote", proposal_id: id, choice: "yes" },
      headers: { authorization: `Bearer ${free.participant_token}`, "x-identity-token": token },
    });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toMatchObject({ constituency: "public_community" });
    // bound for good: later votes need no header; another identity is refused
    expect((await act(free.participant_token, { action: "vote", proposal_id: id, choice: "no" })).statusCode).toBe(200);
    const other = await t.app.inject({
      method: "POST",
      url: "/api/olympiad",
      payload: { action: "bind_identity" },
      headers: { authorization: `Bearer ${free.participant_token}`, "x-identity-token": await joinWork() },
    });
    expect(other.statusCode).toBe(409);
    expect(other.json()).toMatchObject({ code: "participant_identity_bound" });
    // a second participant behind the same identity: bound, but its public vote is the identity's one
    const twin = await register("Twin", false);
    const bind = await t.app.inject({
      method: "POST",
      url: "/api/olympiad",
      payload: { action: "bind_identity" },
      headers: { authorization: `Bearer ${twin.participant_token}`, "x-identity-token": token },
    });
    expect(bind.statusCode, bind.body).toBe(200);
    const twinVote = await act(twin.participant_token, { action: "vote", proposal_id: id, choice: "yes" });
    expect(twinVote.statusCode).toBe(409);
    expect(twinVote.json()).toMatchObject({ code: "identity_already_voted" });
  });
});

describe("governance admin routes without ADMIN_TOKEN", () => {
  it("are disabled (503 admin_disabled)", async () => {
    const t = await testApp("sqlite");
    try {
      const r = await t.app.inject({ method: "GET", url: "/api/admin/olympiad/roles" });
      expect(r.statusCode).toBe(503);
      expect(r.json()).toMatchObject({ code: "admin_disabled" });
    } finally {
      await t.close();
    }
  });
});
