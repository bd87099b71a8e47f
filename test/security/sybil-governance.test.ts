import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestApp, testApp } from "../support/app.js";
import { grantProduct } from "../support/orders.js";

/**
 * Issue #21 item 4, "only participants who paid govern": registering and creating a one-member
 * team used to make a participant a `team_captains` voter (weight 0.40) with no entry, no eligible
 * roster and no lock, so five free sybil captains passed a `new_games` proposal against three real
 * ones. Everything here goes through POST /api/olympiad; paid orders are granted by the order
 * service (as every rail does) and entered with their access tokens.
 */

const YEAR = new Date().getUTCFullYear();
/** Registration open since the season's first day (so `enter` works). */
const OPEN = { OLYMPIAD_SEASON_YEAR: String(YEAR), OLYMPIAD_REGISTRATION_OPENS: `${YEAR}-01-01` };

type Who = "agent_self" | "human_for_self";
interface Person {
  id: string;
  token: string;
}

describe("five sybil captains against three real ones (issue #21 item 4)", () => {
  let t: TestApp;
  let n = 0;
  beforeAll(async () => {
    t = await testApp("sqlite", OPEN);
  });
  afterAll(async () => t?.close());

  const act = (token: string | null, payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: "POST",
      url: "/api/olympiad",
      payload,
      headers: { ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) },
    });

  const register = async (who: Who): Promise<Person> => {
    n += 1;
    const tag = randomBytes(4).toString("hex");
    const r = await act(
      null,
      who === "agent_self"
        ? { action: "register", who, name: `Agent ${n}`, agent_id: `agent-${tag}` }
        : { action: "register", who, name: `Human ${n}` },
    );
    expect(r.statusCode, r.body).toBe(201);
    return { id: r.json().participant_id, token: r.json().participant_token };
  };

  /** A paid gao-entry order granted through the order service: its access token. */
  const paidOrder = async (): Promise<string> => {
    const { orders } = t.app.services;
    const granted = await grantProduct(orders, {
      proofKey: `test:sybil:${randomBytes(8).toString("hex")}`,
      sku: "gao-entry",
      rail: "manual_claim",
      amountCents: 100,
    });
    return granted.accessUrl.split("/access/")[1] as string;
  };

  const enter = async (p: Person) => {
    const r = await act(p.token, { action: "enter", access_token: await paidOrder() });
    expect(r.statusCode, r.body).toBe(200);
  };

  const team = async (captain: Person, name: string) => {
    const r = await act(captain.token, { action: "team", op: "create", name });
    expect(r.statusCode, r.body).toBe(200);
    return r.json().join_code as string;
  };

  /** A real team: a paid agent captain and a paid human member, locked (1 of 2 human: 50 %). */
  const realCaptain = async (): Promise<Person> => {
    const captain = await register("agent_self");
    const human = await register("human_for_self");
    await enter(captain);
    await enter(human);
    const code = await team(captain, `Real ${++n}`);
    expect((await act(human.token, { action: "team", op: "join", join_code: code })).statusCode).toBe(200);
    const locked = await act(captain.token, { action: "team", op: "lock" });
    expect(locked.statusCode, locked.body).toBe(200);
    expect(locked.json().team).toMatchObject({ locked: true, eligible: true, entered_members: 2 });
    expect(locked.json().team.governance).toMatchObject({ counts: true, paid_members: 2, reasons: [] });
    return captain;
  };

  /** A free sybil: registers and creates a one-member team; pays nothing, locks nothing. */
  const sybilCaptain = async (): Promise<Person> => {
    const p = await register("agent_self");
    await team(p, `Sybil ${++n}`);
    const view = await act(p.token, { action: "team", op: "view" });
    expect(view.json().team.governance).toMatchObject({ counts: false, paid_members: 0 });
    return p;
  };

  const propose = async (by: Person) => {
    const r = await act(by.token, {
      action: "propose",
      kind: "new_games",
      title: "Add a hot-dog eating contest",
      body: "Replace the marathon with a hot-dog eating contest.",
    });
    return r;
  };

  const outcomeOf = async (proposalId: string) => {
    const r = await t.app.inject({ method: "GET", url: `/api/olympiad/proposals/${proposalId}` });
    expect(r.statusCode, r.body).toBe(200);
    return r.json().tally as {
      outcome: string;
      voters: number;
      constituencies: { constituency: string; yes: number; no: number }[];
    };
  };

  it("five free sybil captains cannot pass new_games against three real captains", async () => {
    const real = [await realCaptain(), await realCaptain(), await realCaptain()];
    const sybils = await Promise.all(Array.from({ length: 5 }, () => sybilCaptain()));

    const proposed = await propose(real[0] as Person);
    expect(proposed.statusCode, proposed.body).toBe(200);
    const id = proposed.json().proposal.proposal_id as string;

    for (const r of real) {
      const v = await act(r.token, { action: "vote", proposal_id: id, choice: "no" });
      expect(v.statusCode, v.body).toBe(200);
      expect(v.json().constituency).toBe("team_captains");
    }
    const sybilVotes = [];
    for (const s of sybils) sybilVotes.push(await act(s.token, { action: "vote", proposal_id: id, choice: "yes" }));
    const tally = await outcomeOf(id);
    // before issue #21: 5 yes / 3 no in team_captains, 8 voters → "passed"
    expect(tally.outcome).not.toBe("passed");
    expect(tally.constituencies.find((c) => c.constituency === "team_captains")).toMatchObject({ yes: 0, no: 3 });
    for (const v of sybilVotes) {
      expect(v.statusCode, v.body).toBe(403);
      expect(v.json().code).toBe("governance_standing_required");
    }
    // nor may a sybil propose
    const bySybil = await propose(sybils[0] as Person);
    expect(bySybil.statusCode, bySybil.body).toBe(403);
    expect(bySybil.json().code).toBe("governance_standing_required");
  });

  it("one order gives standing to one participant, whether entered or bound", async () => {
    const a = await register("agent_self");
    const b = await register("agent_self");
    // entered by a: b cannot bind it
    const entered = await paidOrder();
    expect((await act(a.token, { action: "enter", access_token: entered })).statusCode).toBe(200);
    const steal = await act(b.token, { action: "bind_order", access_token: entered });
    expect(steal.statusCode).toBe(409);
    expect(steal.json().code).toBe("entry_order_used");
    // bound by b: a cannot enter with it; b can (the entry takes the order bound to b)
    const bound = await paidOrder();
    expect((await act(b.token, { action: "bind_order", access_token: bound })).statusCode).toBe(200);
    const c = await register("human_for_self");
    const taken = await act(c.token, { action: "enter", access_token: bound });
    expect(taken.statusCode).toBe(409);
    expect(taken.json().code).toBe("entry_order_used");
    const own = await act(b.token, { action: "enter", access_token: bound });
    expect(own.statusCode, own.body).toBe(200);
    expect(own.json()).toMatchObject({ entered: true, created: true });
  });

  it("five paid captains of locked, eligible teams pass new_games against three real ones", async () => {
    const real = [await realCaptain(), await realCaptain(), await realCaptain()];
    const paid = [];
    for (let i = 0; i < 5; i++) paid.push(await realCaptain());
    const proposed = await propose(paid[0] as Person);
    expect(proposed.statusCode, proposed.body).toBe(200);
    const id = proposed.json().proposal.proposal_id as string;
    for (const r of real)
      expect((await act(r.token, { action: "vote", proposal_id: id, choice: "no" })).statusCode).toBe(200);
    for (const p of paid) {
      const v = await act(p.token, { action: "vote", proposal_id: id, choice: "yes" });
      expect(v.statusCode, v.body).toBe(200);
      expect(v.json().constituency).toBe("team_captains");
    }
    const tally = await outcomeOf(id);
    expect(tally.constituencies.find((c) => c.constituency === "team_captains")).toMatchObject({ yes: 5, no: 3 });
    expect(tally.outcome).toBe("passed");
  });
});

describe("before open registration: bind_order gives paid standing without entering", () => {
  let t: TestApp;
  beforeAll(async () => {
    const later = `${YEAR + 1}-06-01`;
    t = await testApp("sqlite", {
      OLYMPIAD_SEASON_YEAR: String(YEAR),
      OLYMPIAD_REGISTRATION_OPENS: later,
      OLYMPIAD_SEASON_ENDS: `${YEAR + 1}-12-31`,
    });
  });
  afterAll(async () => t?.close());

  const act = (token: string | null, payload: Record<string, unknown>) =>
    t.app.inject({
      method: "POST",
      url: "/api/olympiad",
      payload,
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
  const register = async (who: Who) => {
    const tag = randomBytes(4).toString("hex");
    const r = await act(
      null,
      who === "agent_self"
        ? { action: "register", who, name: `Agent ${tag}`, agent_id: `agent-${tag}` }
        : { action: "register", who, name: `Human ${tag}` },
    );
    expect(r.statusCode, r.body).toBe(201);
    return { id: r.json().participant_id as string, token: r.json().participant_token as string };
  };
  const paidOrder = async () => {
    const granted = await grantProduct(t.app.services.orders, {
      proofKey: `test:bind:${randomBytes(8).toString("hex")}`,
      sku: "gao-entry",
      rail: "manual_claim",
      amountCents: 100,
    });
    return { id: granted.order.id, token: granted.accessUrl.split("/access/")[1] as string, url: granted.accessUrl };
  };

  it("enter is refused, bind_order binds the order once; the bound agent votes and proposes; a revoked order ends it", async () => {
    const agent = await register("agent_self");
    const order = await paidOrder();
    const enter = await act(agent.token, { action: "enter", access_token: order.token });
    expect(enter.statusCode).toBe(409);
    expect(enter.json().code).toBe("registration_not_open");

    const noProof = await act(agent.token, { action: "bind_order" });
    expect(noProof.statusCode).toBe(400);
    expect(noProof.json().code).toBe("order_proof_required");
    const bound = await act(agent.token, { action: "bind_order", access_url: order.url });
    expect(bound.statusCode, bound.body).toBe(200);
    expect(bound.json()).toMatchObject({ action: "bind_order", order_id: order.id, created: true, paid: true });
    const retry = await act(agent.token, { action: "bind_order", access_token: order.token });
    expect(retry.json()).toMatchObject({ created: false });
    // the same order for someone else: one order, one participant
    const other = await register("agent_self");
    const stolen = await act(other.token, { action: "bind_order", access_token: order.token });
    expect(stolen.statusCode).toBe(409);
    expect(stolen.json().code).toBe("entry_order_used");
    // an order of another product gives nothing
    const license = await grantProduct(t.app.services.orders, {
      proofKey: `test:bind:${randomBytes(8).toString("hex")}`,
      sku: "zrw-pro",
      rail: "manual_claim",
      amountCents: 100,
    });
    const wrong = await act(other.token, { action: "bind_order", access_url: license.accessUrl });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().code).toBe("entry_wrong_product");

    const proposed = await act(agent.token, {
      action: "propose",
      kind: "change_games",
      title: "Shorter marathon",
      body: "30 km.",
    });
    expect(proposed.statusCode, proposed.body).toBe(200);
    const id = proposed.json().proposal.proposal_id as string;
    const v = await act(agent.token, { action: "vote", proposal_id: id, choice: "yes" });
    expect(v.statusCode, v.body).toBe(200);
    expect(v.json().constituency).toBe("entered_agents");
    const refused = await act(other.token, { action: "vote", proposal_id: id, choice: "no" });
    expect(refused.statusCode).toBe(403);

    await t.app.services.orders.revoke(order.id, "admin:test", "chargeback");
    const after = await act(agent.token, { action: "vote", proposal_id: id, choice: "no" });
    expect(after.statusCode).toBe(403);
    expect(after.json().code).toBe("governance_standing_required");
  });
});
