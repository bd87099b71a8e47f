import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../../src/db/database.js";
import type { App } from "../../../src/http/types.js";
import { bearerToken } from "../../../src/olympiad/entry/participants.js";
import { appOn } from "../../support/app.js";
import { ENGINES, freshDatabase } from "../../support/databases.js";

/** POST /api/olympiad { action: "register" } and the participant token; the union's validation; restarts. */

describe.each(ENGINES)("olympiad participants (%s)", (engine) => {
  let db: Db;
  let app: App;
  beforeAll(async () => {
    db = (await freshDatabase(engine)).db;
    app = await appOn(db, {});
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  const act = (payload: unknown, token?: string) =>
    app.inject({
      method: "POST",
      url: "/api/olympiad",
      payload: payload as object,
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    });
  const register = async (body: Record<string, unknown>) => {
    const r = await act({ action: "register", ...body });
    expect(r.statusCode, r.body).toBe(201);
    return r.json() as { participant_id: string; participant_token: string; participant: Record<string, unknown> };
  };

  it("registers each kind of participant and returns the token once, stored only as SHA-256", async () => {
    const agent = await register({ who: "agent_self", name: "Agent Smith", agent_id: "agent-smith-1" });
    expect(agent.participant_id).toMatch(/^par_/);
    expect(agent.participant_token).toMatch(/^gao_[A-Za-z0-9_-]{43}$/);
    expect(agent.participant).toMatchObject({
      who: "agent_self",
      agent_id: "agent-smith-1",
      member_kind: "autonomous",
    });
    const human = await register({ who: "human_for_self", name: "Ada", email: "ada@example.com" });
    expect(human.participant).toMatchObject({ who: "human_for_self", agent_id: null, member_kind: "human" });
    const operated = await register({
      who: "human_for_agent",
      name: "Helper bot",
      agent_id: "helper-bot",
      operator_name: "Grace",
    });
    expect(operated.participant).toMatchObject({ operator_name: "Grace", member_kind: "autonomous" });

    const row = await db.kysely
      .selectFrom("olympiad_participants")
      .selectAll()
      .where("id", "=", agent.participant_id)
      .executeTakeFirstOrThrow();
    expect(row.token_hash).toBe(createHash("sha256").update(agent.participant_token).digest("hex"));
    expect(JSON.stringify(row)).not.toContain(agent.participant_token);
    const r = await act({ action: "register", who: "agent_self", name: "x", agent_id: "cache-check" });
    expect(r.headers["cache-control"]).toContain("no-store");
    expect(r.json().links).toMatchObject({ me: "http://lab.test/api/olympiad/me" });
  });

  it("refuses bodies that do not fit `who` with 400s naming the rule", async () => {
    const code = async (body: Record<string, unknown>) => {
      const r = await act({ action: "register", ...body });
      expect(r.statusCode, r.body).toBe(400);
      return r.json().code as string;
    };
    expect(await code({ who: "agent_self", name: "No id" })).toBe("agent_id_required");
    expect(await code({ who: "human_for_agent", name: "No id", operator_name: "Op" })).toBe("agent_id_required");
    expect(await code({ who: "human_for_agent", name: "No op", agent_id: "bot-no-op" })).toBe("operator_name_required");
    expect(await code({ who: "human_for_self", name: "Eve", agent_id: "eve-bot" })).toBe("agent_id_not_allowed");
    expect(await code({ who: "human_for_self", name: "Eve", operator_name: "Op" })).toBe("operator_name_not_allowed");
    expect(await code({ who: "agent_self", name: "Bad id", agent_id: "has space" })).toBe("invalid_agent_id");
    expect(await code({ who: "human_for_self", name: "Eve", email: "not-an-email" })).toBe("invalid_email");
    expect(await code({ who: "human_for_self", name: "   " })).toBe("name_required");
    expect(await code({ who: "robot", name: "Who?" })).toBe("validation_failed");
    expect(await code({ who: "human_for_self", name: "Bell\u0007" })).toBe("invalid_text");
  });

  it("an unproven agent_id is a self-asserted label: a second registration with it is no 409 (issue #21 item 7)", async () => {
    const first = await register({ who: "agent_self", name: "Once", agent_id: "agent-once" });
    expect(first.participant).toMatchObject({ agent_id_source: "self_asserted", agent_address: null });
    const again = await act({
      action: "register",
      who: "human_for_agent",
      name: "Once again",
      agent_id: "agent-once",
      operator_name: "Op",
    });
    expect(again.statusCode, again.body).toBe(201);
    expect(again.json().participant).toMatchObject({ agent_id: "agent-once", agent_id_source: "self_asserted" });
    // proven ids: test/olympiad/entry/agent-proof.test.ts
  });

  it("other actions need the bearer token: 401 required / invalid", async () => {
    const none = await act({ action: "intent" });
    expect(none.statusCode).toBe(401);
    expect(none.json().code).toBe("participant_token_required");
    expect(none.headers["www-authenticate"]).toContain("Bearer");
    const wrong = await act({ action: "intent" }, `gao_${"A".repeat(43)}`);
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().code).toBe("participant_token_invalid");
    const garbage = await act({ action: "team", op: "view" }, "nonsense");
    expect(garbage.json().code).toBe("participant_token_invalid");
    const me = await app.inject({ method: "GET", url: "/api/olympiad/me" });
    expect(me.statusCode).toBe(401);
    expect(bearerToken({ authorization: "Basic abc" })).toBeNull();
    expect(bearerToken({ authorization: "bearer  tok " })).toBe("tok");
  });

  it("an unknown action (or team op) is a 400 naming the valid ones", async () => {
    const r = await act({ action: "dance" });
    expect(r.statusCode).toBe(400);
    expect(r.json().code).toBe("validation_failed");
    expect(r.json().detail).toContain(
      "register, agent_challenge, enter, bind_order, bind_identity, intent, team, propose, vote",
    );
    const missing = await act({ name: "no action" });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().detail).toContain("action must be one of");
    const op = await act({ action: "team", op: "explode" });
    expect(op.statusCode).toBe(400);
    expect(op.json().detail).toContain("create, join, leave, lock, transfer, code, view");
  });

  it("intent is recorded once per season (idempotent; the first note is kept)", async () => {
    const p = await register({ who: "human_for_self", name: "Intender" });
    const first = await act({ action: "intent", note: "I will compete in speed events." }, p.participant_token);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({
      action: "intent",
      participant_id: p.participant_id,
      season_id: "2026",
      note: "I will compete in speed events.",
      created: true,
      registration_open: false,
    });
    const again = await act({ action: "intent", note: "changed my mind" }, p.participant_token);
    expect(again.json()).toMatchObject({ created: false, note: "I will compete in speed events." });
    const rows = await db.kysely
      .selectFrom("olympiad_intents")
      .selectAll()
      .where("participant_id", "=", p.participant_id)
      .execute();
    expect(rows).toHaveLength(1);
  });

  it("GET /api/olympiad/me shows the participant, not entered, no team; the token survives a restart", async () => {
    const p = await register({ who: "agent_self", name: "Restart", agent_id: "restart-agent" });
    const before = await app.inject({
      method: "GET",
      url: "/api/olympiad/me",
      headers: { authorization: `Bearer ${p.participant_token}` },
    });
    expect(before.statusCode, before.body).toBe(200);
    expect(before.json()).toMatchObject({
      participant: { participant_id: p.participant_id, who: "agent_self" },
      entry: { entered: false, withdrawn: false, entry: null },
      team: null,
    });
    expect(before.body).not.toContain("token_hash");
    await app.close();
    app = await appOn(db, {});
    const after = await app.inject({
      method: "GET",
      url: "/api/olympiad/me",
      headers: { authorization: `Bearer ${p.participant_token}` },
    });
    expect(after.statusCode).toBe(200);
    expect(after.json().participant.participant_id).toBe(p.participant_id);
  });

  it("the OpenAPI document shows the action union", async () => {
    const r = await app.inject({ method: "GET", url: "/openapi.json" });
    const doc = r.statusCode === 200 ? r.json() : undefined;
    const text = doc ? JSON.stringify(doc.paths["/api/olympiad"].post) : (await app.inject("/openapi.yaml")).body;
    for (const action of ["register", "enter", "intent", "team", "propose", "vote"]) expect(text).toContain(action);
    expect(text).toContain("oneOf");
  });
});

describe("olympiad participant tokens and logs", () => {
  it("at LOG_LEVEL=debug no log line carries a participant token or a join code", async () => {
    const fresh = await freshDatabase("sqlite");
    const lines: string[] = [];
    const app = await appOn(
      fresh.db,
      { LOG_LEVEL: "debug" },
      { logStream: { write: (line: string) => void lines.push(line) } },
    );
    try {
      const reg = await app.inject({
        method: "POST",
        url: "/api/olympiad",
        payload: { action: "register", who: "agent_self", name: "Quiet", agent_id: "quiet-agent" },
      });
      const token = reg.json().participant_token as string;
      const auth = { authorization: `Bearer ${token}` };
      const team = await app.inject({
        method: "POST",
        url: "/api/olympiad",
        headers: auth,
        payload: { action: "team", op: "create", name: "Quiet team" },
      });
      const code = team.json().join_code as string;
      await app.inject({ method: "GET", url: "/api/olympiad/me", headers: auth });
      await app.inject({ method: "GET", url: `/api/olympiad/${token}` });
      await app.inject({ method: "POST", url: "/api/olympiad", headers: auth, payload: { action: "enter" } });
      expect(lines.length).toBeGreaterThan(3);
      for (const line of lines) {
        expect(line).not.toContain(token);
        expect(line).not.toContain(token.slice(4));
        expect(line).not.toContain(code);
      }
    } finally {
      await app.close();
      await fresh.db.close();
    }
  });
});
