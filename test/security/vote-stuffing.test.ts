import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../src/db/database.js";
import { Governance } from "../../src/olympiad/governance/service.js";
import type { ParticipantRow, Who } from "../../src/olympiad/tables.js";
import { type TestApp, testApp } from "../support/app.js";
import { ENGINES, freshDatabase } from "../support/databases.js";

/**
 * Vote stuffing (SECURITY.md, threat model): one counted vote per participant and proposal,
 * whatever the concurrency; a re-vote replaces; headcount does not buy weight; the action route
 * is rate limited.
 */

const AT = "2030-03-02T12:00:00.000Z";
const rid = (prefix: string) => `${prefix}_${randomBytes(8).toString("hex")}`;

async function participant(db: Db, who: Who = "human_for_self"): Promise<ParticipantRow> {
  const id = rid("par");
  const row: ParticipantRow = {
    id,
    token_hash: randomBytes(32).toString("hex"),
    who,
    name: `p ${id}`,
    agent_id: who === "human_for_self" ? null : `agent-${id}`,
    operator_name: who === "human_for_agent" ? "Ada" : null,
    email: null,
    created_at: AT,
    // a join-work identity of its own: public_community standing (issue #21 item 4)
    identity_id: `idn_${id}`,
  };
  await db.kysely.insertInto("olympiad_participants").values(row).execute();
  return row;
}

/** An active gao-entry order entered by the participant (paid standing). */
async function paid(db: Db, p: ParticipantRow): Promise<void> {
  const orderId = rid("ord");
  await db.kysely
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
      status: "active",
      access_token_hash: randomBytes(32).toString("hex"),
      license_key: null,
      meta: "{}",
      created_at: AT,
      updated_at: AT,
      revoked_at: null,
      revoke_reason: null,
    })
    .execute();
  await db.kysely
    .insertInto("olympiad_entries")
    .values({
      id: rid("ent"),
      participant_id: p.id,
      season_id: "2030",
      order_id: orderId,
      proof: "access_token",
      created_at: AT,
    })
    .execute();
}

/** A locked team of a paid agent captain and a paid human (the captain votes in team_captains). */
async function captainOf(db: Db): Promise<ParticipantRow> {
  const captain = await participant(db, "agent_self");
  const human = await participant(db);
  await paid(db, captain);
  await paid(db, human);
  const id = rid("team");
  await db.kysely
    .insertInto("olympiad_teams")
    .values({
      id,
      name: id,
      captain_id: captain.id,
      join_code_hash: randomBytes(32).toString("hex"),
      member_count: 2,
      locked_at: AT,
      season_id: "2030",
      created_at: AT,
      updated_at: AT,
    })
    .execute();
  await db.kysely
    .insertInto("olympiad_team_members")
    .values([
      { team_id: id, participant_id: captain.id, joined_at: AT },
      { team_id: id, participant_id: human.id, joined_at: AT },
    ])
    .execute();
  return captain;
}

describe.each(ENGINES)("vote stuffing (%s)", (engine) => {
  let db: Db;
  let gov: Governance;
  beforeAll(async () => {
    ({ db } = await freshDatabase(engine));
    gov = new Governance(db.kysely, { now: () => new Date(AT), audit: async () => {} });
  });
  afterAll(async () => db?.close());

  const propose = async () =>
    (
      await gov.propose(await participant(db), {
        action: "propose",
        kind: "new_games",
        title: "Add a relay sprint",
        body: "A relay sprint between the speed events.",
      })
    ).proposal.proposal_id;
  const rows = (proposalId: string) =>
    db.kysely.selectFrom("olympiad_votes").selectAll().where("proposal_id", "=", proposalId).execute();

  it("20 concurrent votes by one participant: one row, one counted voter; a later re-vote replaces it", async () => {
    const id = await propose();
    const p = await participant(db);
    const kinds = ["yes", "no", "abstain"] as const;
    const choices = Array.from({ length: 20 }, (_, i) => kinds[i % 3] ?? "yes");
    const answers = await Promise.allSettled(
      choices.map((choice) => gov.vote(p, { action: "vote", proposal_id: id, choice })),
    );
    expect(answers.filter((a) => a.status === "fulfilled").length).toBeGreaterThan(0);
    expect(await rows(id)).toHaveLength(1);
    const { tally } = await gov.proposal(id);
    expect(tally.voters).toBe(1);
    const counted = tally.constituencies.reduce((n, c) => n + c.yes + c.no + c.abstain, 0);
    expect(counted).toBe(1);

    const again = await gov.vote(p, { action: "vote", proposal_id: id, choice: "no" });
    expect(again).toMatchObject({ replaced: true });
    const after = await rows(id);
    expect(after).toHaveLength(1);
    expect(after[0]?.choice).toBe("no");
    expect((await gov.proposal(id)).tally.voters).toBe(1);
  });

  it("headcount buys no weight: 1 captain yes against 3 or 60 community no gives the same mixed share", async () => {
    const share = async (community: number) => {
      const id = await propose();
      await gov.vote(await captainOf(db), { action: "vote", proposal_id: id, choice: "yes" });
      const members = await Promise.all(Array.from({ length: community }, () => participant(db)));
      for (const m of members) await gov.vote(m, { action: "vote", proposal_id: id, choice: "no" });
      const { tally } = await gov.proposal(id);
      expect(tally.voters).toBe(1 + community);
      return tally.mixed_yes;
    };
    const few = await share(3);
    const many = await share(60);
    expect(many).toEqual(few);
    expect(Number(few?.num)).toBeGreaterThan(0);
  });
});

describe("POST /api/olympiad is rate limited per IP", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp("sqlite", { RATE_LIMIT_ENABLED: "true", RATE_LIMIT_PAID_PER_MINUTE: "3" });
  });
  afterAll(async () => t?.close());

  it("the fourth action a minute from one address gets 429; another address is served", async () => {
    const act = (ip: string, name: string) =>
      t.app.inject({
        method: "POST",
        url: "/api/olympiad",
        remoteAddress: ip,
        payload: { action: "register", who: "human_for_self", name },
      });
    for (let i = 0; i < 3; i++) expect((await act("203.0.113.7", `Reg ${i}`)).statusCode).toBe(201);
    const over = await act("203.0.113.7", "Reg 3");
    expect(over.statusCode).toBe(429);
    expect(over.json()).toMatchObject({ code: "rate_limited", group: "paid", limit: 3 });
    expect(Number(over.headers["retry-after"])).toBeGreaterThan(0);
    expect((await act("203.0.113.8", "Other")).statusCode).toBe(201);
    const registered = await t.app.services.db.kysely.selectFrom("olympiad_participants").select("id").execute();
    expect(registered).toHaveLength(4);
  });
});
