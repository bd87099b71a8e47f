import { createHash } from "node:crypto";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Db } from "../../../src/db/database.js";
import { verifyChain } from "../../../src/db/hash-chain.js";
import type { Database } from "../../../src/db/schema.js";
import type { App } from "../../../src/http/types.js";
import { EVENTS } from "../../../src/olympiad/events/events.js";
import { OlympiadTasks } from "../../../src/olympiad/events/tasks/service.js";
import { verifyStandingsDocument } from "../../../src/olympiad/results/verify.js";
import { httpClient, problemCode } from "../../mcp/helpers.js";
import { appOn } from "../../support/app.js";
import { ENGINES, freshDatabase } from "../../support/databases.js";

/**
 * Scored olympiad events (issue #26, docs/olympiad-tasks.md) over HTTP, on both engines: the task,
 * submissions (validation, quota under concurrency, entry rules), scoring by the sweep (and after a
 * restart), the public leaderboard, the close onto the chain, the key published, a correction, and
 * that nothing secret is served before the close.
 */

const ADMIN_TOKEN = "admin-token-for-olympiad-tasks-0123456";
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const ENV = { ADMIN_TOKEN, OLYMPIAD_SEASON_YEAR: "2026", OLYMPIAD_REGISTRATION_OPENS: "2026-01-08" };
const OPENS = "2026-08-01T00:00:00.000Z";
const CLOSES = "2026-08-20T00:00:00.000Z";
const SEED = "00112233445566778899aabbccddeeff";

const individual = EVENTS.find((e) => e.entrants === "individual") as { id: string };
const teamEvent = EVENTS.find((e) => e.entrants === "team") as { id: string };

// The key: 40 rows r01..r40 with labels that appear nowhere else (a leak would show them).
const LABELS = ["lbl-zq-cat", "lbl-zq-dog", "lbl-zq-emu"];
const IDS = Array.from({ length: 40 }, (_, i) => `r${String(i + 1).padStart(2, "0")}`);
const TRUTH = new Map(IDS.map((id, i) => [id, LABELS[i % 3] as string]));
const KEY_CSV = `id,prediction\n${IDS.map((id) => `${id},${TRUTH.get(id)}`).join("\n")}\n`;
const wrong = (label: string) => LABELS[(LABELS.indexOf(label) + 1) % 3] as string;

// The split, recomputed here from the published rule (not by the code under test):
// public when parseInt(sha256(seed:id)[0:8], 16) % 10000 < 3000.
const isPublic = (id: string) =>
  Number.parseInt(createHash("sha256").update(`${SEED}:${id}`).digest("hex").slice(0, 8), 16) % 10_000 < 3000;
const PUBLIC = IDS.filter(isPublic);
const PRIVATE = IDS.filter((id) => !isPublic(id));

const csv = (pred: (id: string) => string, ids = IDS) =>
  `id,prediction\n${ids.map((id) => `${id},${pred(id)}`).join("\n")}\n`;
/** a's file: right everywhere but the first private row → private (n-1)/n */
const fileA = csv((id) => (id === PRIVATE[0] ? wrong(TRUTH.get(id) as string) : (TRUTH.get(id) as string)));
/** b's file: right on public rows, wrong on private ones → public 1, private 0 */
const fileB = csv((id) => (isPublic(id) ? (TRUTH.get(id) as string) : wrong(TRUTH.get(id) as string)));
/** c's file: wrong on public rows, right on private ones → public 0, private 1 */
const fileC = csv((id) => (isPublic(id) ? wrong(TRUTH.get(id) as string) : (TRUTH.get(id) as string)));

/** n-1 of n as published: 9 decimals, trailing zeros dropped (worked out here, not by the service). */
function fraction(num: number, den: number): string {
  const scaled = Math.round((num / den) * 1e9);
  const whole = Math.floor(scaled / 1e9);
  const frac = String(scaled % 1e9)
    .padStart(9, "0")
    .replace(/0+$/, "");
  return frac ? `${whole}.${frac}` : String(whole);
}
const PRIVATE_A = fraction(PRIVATE.length - 1, PRIVATE.length);

let orderN = 0;
async function enter(db: Kysely<Database>, participantId: string, status: "active" | "refunded" = "active") {
  orderN++;
  const at = "2026-02-01T00:00:00.000Z";
  await db
    .insertInto("orders")
    .values({
      id: `ord_t${orderN}`,
      proof_key: `test:${orderN}:${participantId}`,
      sku: "gao-entry",
      amount_cents: 2500,
      currency: "USD",
      rail: "card_checkout",
      transaction_ref: null,
      email: null,
      agent_id: null,
      status,
      access_token_hash: `hash-${orderN}-${participantId}`,
      license_key: null,
      meta: "{}",
      created_at: at,
      updated_at: at,
      revoked_at: null,
      revoke_reason: null,
    })
    .execute();
  await db
    .insertInto("olympiad_entries")
    .values({
      id: `ent_t${orderN}`,
      participant_id: participantId,
      season_id: "2026",
      order_id: `ord_t${orderN}`,
      proof: "access_token",
      created_at: at,
    })
    .execute();
}

async function team(db: Kysely<Database>, id: string, members: string[], locked = true) {
  const at = "2026-02-01T00:00:00.000Z";
  await db
    .insertInto("olympiad_teams")
    .values({
      id,
      name: id,
      captain_id: members[0] as string,
      join_code_hash: `code-${id}`,
      member_count: members.length,
      locked_at: locked ? at : null,
      season_id: locked ? "2026" : null,
      created_at: at,
      updated_at: at,
    })
    .execute();
  await db
    .insertInto("olympiad_team_members")
    .values(members.map((p) => ({ team_id: id, participant_id: p, joined_at: at })))
    .execute();
}

describe.each(ENGINES)("scored olympiad events (%s)", (engine) => {
  let db: Db;
  let app: App;
  let clock = new Date("2026-07-20T12:00:00Z");
  const people: Record<string, { id: string; token: string }> = {};
  const ev = individual.id;
  const base = `/api/olympiad/events/${ev}`;

  const setClock = (a: App) => {
    a.services.olympiadTasks.now = () => clock;
    a.services.olympiadRecords.now = () => clock;
  };
  const as = (who: string) => ({ authorization: `Bearer ${people[who]?.token}` });
  const submit = (who: string, content: string, format = "csv", event = ev) =>
    app.inject({
      method: "POST",
      url: `/api/olympiad/events/${event}/submissions`,
      headers: as(who),
      payload: { format, content },
    });
  const putTask = (payload: Record<string, unknown>, event = ev, headers: Record<string, string> = admin) =>
    app.inject({ method: "PUT", url: `/api/admin/olympiad/events/${event}/task`, headers, payload });
  /** The submission's scoring task on the job queue (`olympiad-score:<event>:<submission>`) has run. */
  const scoredByQueue = async (submissionId: string, event = ev) => {
    const id = `olympiad-score:${event}:${submissionId}`;
    await vi.waitFor(async () => expect((await app.services.runner.queue.status(id))?.state).toBe("done"), {
      timeout: 15_000,
      interval: 100,
    });
  };
  const task = (over: Record<string, unknown> = {}) => ({
    description: "Label each row: cat, dog or emu.",
    metric: "accuracy",
    key: { format: "csv", content: KEY_CSV },
    files: [{ name: "train.csv", content: "id,text\nt1,hello\n" }],
    split_seed: SEED,
    opens_at: OPENS,
    closes_at: CLOSES,
    daily_quota: 3,
    ...over,
  });

  beforeAll(async () => {
    db = (await freshDatabase(engine)).db;
    app = await appOn(db, ENV);
    setClock(app);
    for (const name of ["a", "b", "c", "d", "e", "f"]) {
      const r = await app.inject({
        method: "POST",
        url: "/api/olympiad",
        payload: { action: "register", who: "agent_self", name: `agent ${name}`, agent_id: `agent-${name}` },
      });
      expect(r.statusCode, r.body).toBe(201);
      people[name] = { id: r.json().participant_id, token: r.json().participant_token };
    }
    const k = db.kysely;
    for (const name of ["a", "b", "c", "e"]) await enter(k, people[name]?.id as string);
    await enter(k, people.f?.id as string, "refunded");
    // team T1: e (entered) and d (not entered); team T2: f (withdrawn entry)
    await team(k, "team_t1", [people.e?.id as string, people.d?.id as string]);
    await team(k, "team_t2", [people.f?.id as string]);
    expect(PUBLIC.length).toBeGreaterThan(3);
    expect(PRIVATE.length).toBeGreaterThan(3);
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it("sets a task only with the operator token, audited, the key's hash committed on the chain", async () => {
    expect((await putTask(task(), ev, {})).statusCode).toBe(401);
    const missingK = await putTask(task({ metric: "map_at_k" }));
    expect(missingK.json().code).toBe("task_k_required");
    const badKey = await putTask(task({ key: { format: "csv", content: "id,prediction\nr1,a\nr1,b\n" } }));
    expect(badKey.statusCode).toBe(400);
    expect(badKey.json().code).toBe("task_key_invalid");
    const q4 = await putTask(task({ closes_at: "2026-10-05T00:00:00Z" }));
    expect(q4.json().code).toBe("task_close_in_archive_quarter");

    const r = await putTask(task());
    expect(r.statusCode, r.body).toBe(201);
    const view = r.json().task;
    const index = (await app.inject({ method: "GET", url: "/api/olympiad/events" })).json();
    expect(index.events).toHaveLength(40);
    expect(index.events.find((e: { event_id: string }) => e.event_id === ev).task).toMatchObject({
      state: "scheduled",
      metric: "accuracy",
    });
    expect(view.state).toBe("scheduled");
    expect(view.key.sha256).toBe(createHash("sha256").update(KEY_CSV).digest("hex"));
    expect(view.key.published).toBe(false);
    expect(view.daily_quota).toBe(3);
    expect(view.max_finals).toBe(2);
    expect(view.files[0].sha256).toBe(createHash("sha256").update("id,text\nt1,hello\n").digest("hex"));
    const file = await app.inject({ method: "GET", url: `${base}/files/train.csv` });
    expect(file.body).toBe("id,text\nt1,hello\n");
    expect(file.headers["x-content-sha256"]).toBe(view.files[0].sha256);
    expect((await app.inject({ method: "GET", url: `${base}/files/nope.csv` })).json().code).toBe(
      "task_file_not_found",
    );
    // a second PUT before the opening replaces it (a new commitment)
    expect((await putTask(task())).statusCode).toBe(200);

    const commits = await db.kysely
      .selectFrom("chain_entries")
      .select(["seq", "kind", "body"])
      .where("chain", "=", "olympiad")
      .where("kind", "=", "task")
      .execute();
    expect(commits).toHaveLength(2);
    const body = JSON.parse(commits[1]?.body as string);
    expect(body.key_sha256).toBe(view.key.sha256);
    expect(body.split_seed_sha256).toBe(createHash("sha256").update(SEED).digest("hex"));
    expect(JSON.stringify(body)).not.toContain(SEED);
    const audit = await db.kysely
      .selectFrom("audit_log")
      .select(["action", "actor"])
      .where("action", "=", "olympiad.task")
      .execute();
    expect(audit.length).toBe(2);
    expect(audit[0]?.actor).toMatch(/^admin:/);
  });

  it("refuses submissions before the opening", async () => {
    const r = await submit("a", fileA);
    expect(r.statusCode).toBe(409);
    expect(r.json().code).toBe("task_not_open");
  });

  it("validates a file at once: row and column of every problem, nothing stored", async () => {
    clock = new Date("2026-08-10T12:00:00Z");
    const unknown = await submit("a", `${fileA}zz9,${LABELS[0]}\n`);
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toMatchObject({ code: "submission_invalid", row: 42, column: "id" });
    const repeated = await submit("a", `${fileA}r01,${LABELS[0]}\n`);
    expect(repeated.json().issues[0]).toEqual({ row: 42, column: "id", problem: 'id "r01" repeats row 2' });
    const missing = await submit(
      "a",
      csv((id) => TRUTH.get(id) as string, IDS.slice(1)),
    );
    expect(missing.json().issues[0]).toMatchObject({ row: null, column: "id" });
    expect(missing.json().issues[0].problem).toContain('"r01"');
    const jsonl = await submit("a", IDS.map((id) => JSON.stringify({ id, prediction: 7 })).join("\n"), "jsonl");
    expect(jsonl.statusCode).toBe(202); // a number label is read as its text
    const badJson = await submit("a", '{"id":"r01","prediction":[1]}\n', "jsonl");
    expect(badJson.json()).toMatchObject({ code: "submission_invalid", row: 1, column: "prediction" });
    const big = await submit("a", "x".repeat(600 * 1024));
    expect([413]).toContain(big.statusCode);
    const stored = await db.kysely.selectFrom("olympiad_submissions").select("id").execute();
    expect(stored).toHaveLength(1);
  });

  it("needs a participant token and an active entry; a team needs an entered member and a locked roster", async () => {
    expect(
      (await app.inject({ method: "POST", url: `${base}/submissions`, payload: { format: "csv", content: fileA } }))
        .statusCode,
    ).toBe(401);
    const notEntered = await submit("d", fileA);
    expect(notEntered.statusCode).toBe(403);
    expect(notEntered.json().code).toBe("entry_required");
    const refunded = await submit("f", fileA);
    expect(refunded.json().code).toBe("entry_required");

    const teamTask = await putTask(task({ metric: "accuracy" }), teamEvent.id);
    expect(teamTask.statusCode, teamTask.body).toBe(201);
    // d is in team T1 but has no entry: the team cannot submit through d
    const viaD = await submit("d", fileA, "csv", teamEvent.id);
    expect(viaD.statusCode).toBe(403);
    expect(viaD.json().code).toBe("entry_required");
    // f's team T2: f's entry was refunded
    expect((await submit("f", fileA, "csv", teamEvent.id)).json().code).toBe("entry_required");
    // a is in no team
    expect((await submit("a", fileA, "csv", teamEvent.id)).json().code).toBe("team_required");
    const viaE = await submit("e", fileA, "csv", teamEvent.id);
    expect(viaE.statusCode, viaE.body).toBe(202);
    expect(viaE.json()).toMatchObject({ entrant: "team_t1", entrant_kind: "team" });
  });

  it("holds the daily quota under concurrent submissions", async () => {
    // a used 1 of 3 today (the JSON lines file above); 8 at once: exactly 2 more pass
    const answers = await Promise.all(Array.from({ length: 8 }, () => submit("a", fileA)));
    const codes = answers.map((r) => r.statusCode).sort();
    expect(codes.filter((c) => c === 202)).toHaveLength(2);
    expect(codes.filter((c) => c === 429)).toHaveLength(6);
    const refused = answers.find((r) => r.statusCode === 429);
    expect(refused?.json().code).toBe("submission_quota_exceeded");
    expect(refused?.headers["retry-after"]).toBeDefined();
    const count = await db.kysely
      .selectFrom("olympiad_submissions")
      .select("id")
      .where("entrant_id", "=", people.a?.id as string)
      .execute();
    expect(count).toHaveLength(3);
    // the next UTC day the quota is fresh
    clock = new Date("2026-08-11T09:00:00Z");
  });

  it("scores on the job queue (sweep off): public score shown, private score hidden", async () => {
    // OLYMPIAD_SCORING_POLL_SECONDS is 0 here: no sweep runs, only the queue's task can score
    const sha = createHash("sha256").update(fileB).digest("hex");
    const b = await submit("b", fileB);
    expect(b.statusCode).toBe(202);
    expect(b.json()).toMatchObject({ sha256: sha, status: "pending", rows: 40 });
    clock = new Date("2026-08-11T09:00:01Z");
    // c submits through the MCP tool (the same service call)
    await app.listen({ port: 0, host: "127.0.0.1" });
    const address = app.server.address();
    if (!address || typeof address === "string") throw new Error("no address");
    const client = await httpClient("v2", `http://127.0.0.1:${address.port}/mcp`);
    try {
      const args = { participant_token: people.c?.token, event_id: ev, format: "csv" };
      const bad = await client.call("olympiad_submit", { ...args, content: "id,prediction\nr01,x\n" });
      expect(problemCode(bad)).toBe("submission_invalid");
      const ok = await client.call("olympiad_submit", { ...args, content: fileC });
      expect(ok.isError, JSON.stringify(ok.content)).toBeFalsy();
      expect(ok.structuredContent).toMatchObject({
        entrant: people.c?.id,
        sha256: createHash("sha256").update(fileC).digest("hex"),
        quota: { used: 1, daily_quota: 3 },
      });
      await scoredByQueue((ok.structuredContent as { submission_id: string }).submission_id);
    } finally {
      await client.close();
    }
    await scoredByQueue(b.json().submission_id);
    // one task per submission: a's three of the quota test were scored the same way
    const tasks = await db.kysely.selectFrom("olympiad_submissions").select("id").where("event_id", "=", ev).execute();
    for (const t of tasks) await scoredByQueue(t.id);
    expect(await app.services.olympiadTasks.sweep()).toEqual({ scored: 0, closed: 0 });
    const mine = await app.inject({ method: "GET", url: `${base}/submissions`, headers: as("b") });
    expect(mine.json().submissions[0]).toMatchObject({
      status: "scored",
      public_score: "1",
      private_score: null,
      sha256: sha,
    });
    const lb = (await app.inject({ method: "GET", url: `${base}/leaderboard` })).json();
    // a (1, earlier) and b (1) tie on the public part: the earlier submission ranks first; c scores 0
    expect(lb.public.map((r: { entrant: string; public_score: string }) => [r.entrant, r.public_score])).toEqual([
      [people.a?.id, "1"],
      [people.b?.id, "1"],
      [people.c?.id, "0"],
    ]);
    expect(lb.final).toBeNull();
  });

  it("serves neither the key, the split seed nor a private score before the close", async () => {
    const urls = [
      base,
      `${base}/leaderboard`,
      `${base}/files/train.csv`,
      `${base}/key`,
      `/api/olympiad/events/${teamEvent.id}`,
      "/api/olympiad/events",
      "/standings.json",
      "/olympiad-records.json",
      "/olympiad.json",
      "/api/olympiad",
      "/api/olympiad?view=records",
      "/olympiad",
      `/olympiad/events/${ev}`,
      `/olympiad/events/${teamEvent.id}`,
      "/standings",
      "/openapi.yaml",
    ];
    const bodies: string[] = [];
    for (const url of urls) bodies.push((await app.inject({ method: "GET", url })).body);
    for (const who of ["a", "b", "c"]) {
      bodies.push((await app.inject({ method: "GET", url: `${base}/submissions`, headers: as(who) })).body);
    }
    const key = await app.inject({ method: "GET", url: `${base}/key` });
    expect(key.statusCode).toBe(403);
    expect(key.json().code).toBe("task_key_not_published");
    for (const body of bodies) {
      for (const label of LABELS) expect(body).not.toContain(label);
      expect(body).not.toContain(SEED);
      expect(body).not.toContain(PRIVATE_A);
      expect(body).not.toMatch(/"private_score":"/);
    }
  });

  it("lets an entrant select at most two finals, its own only", async () => {
    const mine = (await app.inject({ method: "GET", url: `${base}/submissions`, headers: as("a") })).json();
    const ids = mine.submissions.map((s: { submission_id: string }) => s.submission_id);
    const finals = (payload: Record<string, unknown>, who = "a") =>
      app.inject({ method: "POST", url: `${base}/finals`, headers: as(who), payload });
    expect((await finals({ submission_ids: ids })).json().code).toBe("too_many_finals");
    expect((await finals({ submission_ids: ids.slice(0, 1) }, "b")).json().code).toBe("submission_not_found");
    // a picks its two CSV files (the JSON lines one scores 0)
    const csvIds = mine.submissions
      .filter((s: { public_score: string }) => s.public_score === "1")
      .map((s: { submission_id: string }) => s.submission_id);
    expect(csvIds).toHaveLength(2);
    const r = await finals({ submission_ids: csvIds });
    expect(r.statusCode, r.body).toBe(200);
  });

  it("refuses a submission after the close, closes on the sweep, appends the result with its evidence", async () => {
    clock = new Date("2026-08-20T00:00:00Z");
    const late = await submit("a", fileA);
    expect(late.statusCode).toBe(409);
    expect(late.json().code).toBe("task_closed");
    // two scorers at once (two instances): each event closes once, one result entry each
    const other = new OlympiadTasks(
      db.kysely,
      app.services.config,
      app.services.olympiadRecords,
      () => {},
      () => clock,
    );
    const [one, two] = await Promise.all([app.services.olympiadTasks.sweep(), other.sweep()]);
    expect((one?.closed ?? 0) + (two?.closed ?? 0)).toBe(2);
    const results = await db.kysely
      .selectFrom("chain_entries")
      .select("seq")
      .where("chain", "=", "olympiad")
      .where("kind", "=", "result")
      .execute();
    expect(results).toHaveLength(2);
    expect((await app.services.olympiadTasks.sweep()).closed).toBe(0);

    const lb = (await app.inject({ method: "GET", url: `${base}/leaderboard` })).json();
    // private part: c 1, a (n-1)/n, b 0 (b selected no finals: its best public file counts)
    expect(
      lb.final.results.map((r: { entrant: string; rank: number; private_score: string }) => [
        r.entrant,
        r.rank,
        r.private_score,
      ]),
    ).toEqual([
      [people.c?.id, 1, "1"],
      [people.a?.id, 2, PRIVATE_A],
      [people.b?.id, 3, "0"],
    ]);
    const standings = (await app.inject({ method: "GET", url: "/standings.json" })).json();
    expect(verifyStandingsDocument(standings).ok).toBe(true);
    const points = Object.fromEntries(
      standings.standings.map((r: { entrant: string; points: number }) => [r.entrant, r.points]),
    );
    expect(points[people.c?.id as string]).toBe(25);
    expect(points[people.a?.id as string]).toBe(18);
    expect(points[people.b?.id as string]).toBe(15);
    expect(points.team_t1).toBe(25);
    const entry = standings.entries.find((e: { seq: number }) => e.seq === lb.final.seq);
    expect(entry.kind).toBe("result");
    expect(entry.body.quarter).toBe("Q3");
    expect(entry.body.scoring).toMatchObject({
      metric: "accuracy",
      key_sha256: createHash("sha256").update(KEY_CSV).digest("hex"),
    });
    const lineB = entry.body.results.find((l: { participant_id: string }) => l.participant_id === people.b?.id);
    expect(lineB).toMatchObject({
      score: "0",
      public_score: "1",
      submission_sha256: createHash("sha256").update(fileB).digest("hex"),
    });
    expect(
      verifyChain(
        standings.entries.map((e: object) => ({ ...e, chain: "olympiad" })),
        { chain: "olympiad" },
      ).ok,
    ).toBe(true);
  });

  it("publishes the key and the seed at the close, so anyone can re-score", async () => {
    const key = await app.inject({ method: "GET", url: `${base}/key` });
    expect(key.statusCode).toBe(200);
    const doc = key.json();
    expect(doc.content).toBe(KEY_CSV);
    expect(createHash("sha256").update(doc.content).digest("hex")).toBe(doc.sha256);
    expect(doc.split_seed).toBe(SEED);
    const mine = (await app.inject({ method: "GET", url: `${base}/submissions`, headers: as("a") })).json();
    expect(mine.submissions.map((s: { private_score: string }) => s.private_score)).toContain(PRIVATE_A);
  });

  it("re-scoring is an appended correction that supersedes the result set, never an edit", async () => {
    const before = await db.kysely
      .selectFrom("chain_entries")
      .select(["seq", "hash"])
      .where("chain", "=", "olympiad")
      .orderBy("seq")
      .execute();
    const r = await app.inject({
      method: "POST",
      url: `/api/admin/olympiad/events/${ev}/rescore`,
      headers: admin,
      payload: { reason: "metric fix: accuracy now reads labels exactly" },
    });
    expect(r.statusCode, r.body).toBe(201);
    const after = await db.kysely
      .selectFrom("chain_entries")
      .select(["seq", "hash", "kind", "body"])
      .where("chain", "=", "olympiad")
      .orderBy("seq")
      .execute();
    expect(after.slice(0, before.length).map((e) => [e.seq, e.hash])).toEqual(before.map((e) => [e.seq, e.hash]));
    const last = after.at(-1);
    expect(last?.kind).toBe("correction");
    expect(JSON.parse(last?.body as string).supersedes).toBe(r.json().supersedes);
    const standings = (await app.inject({ method: "GET", url: "/standings.json" })).json();
    expect(verifyStandingsDocument(standings).ok).toBe(true);
  });

  it("ranks a lower-is-better metric (RMSE, JSON lines) the right way round at the close", async () => {
    const rmseEvent = EVENTS.filter((e) => e.entrants === "individual")[2] as { id: string };
    clock = new Date("2026-08-21T00:00:00Z");
    const key = IDS.map((id, i) => JSON.stringify({ id, prediction: i })).join("\n");
    const put = await putTask(
      task({
        metric: "rmse",
        key: { format: "jsonl", content: key },
        files: [],
        opens_at: "2026-08-21T00:00:00Z",
        closes_at: "2026-08-25T00:00:00Z",
      }),
      rmseEvent.id,
    );
    expect(put.statusCode, put.body).toBe(201);
    clock = new Date("2026-08-22T00:00:00Z");
    // a: exact (RMSE 0); b: every value off by 1 (RMSE sqrt(1) = 1) — as a CSV with a string id
    const exact = IDS.map((id, i) => JSON.stringify({ id, prediction: i })).join("\n");
    expect((await submit("a", exact, "jsonl", rmseEvent.id)).statusCode).toBe(202);
    expect(
      (
        await submit(
          "b",
          csv((id) => String(IDS.indexOf(id) + 1)),
          "csv",
          rmseEvent.id,
        )
      ).statusCode,
    ).toBe(202);
    const rmseSubs = await db.kysely
      .selectFrom("olympiad_submissions")
      .select("id")
      .where("event_id", "=", rmseEvent.id)
      .execute();
    for (const t of rmseSubs) await scoredByQueue(t.id, rmseEvent.id);
    await app.services.olympiadTasks.sweep();
    clock = new Date("2026-08-25T00:00:00Z");
    expect((await app.services.olympiadTasks.sweep()).closed).toBe(1);
    const lb = (await app.inject({ method: "GET", url: `/api/olympiad/events/${rmseEvent.id}/leaderboard` })).json();
    expect(lb.metric).toEqual({ id: "rmse", better: "lower" });
    expect(lb.public.map((r: { entrant: string; public_score: string }) => [r.entrant, r.public_score])).toEqual([
      [people.a?.id, "0"],
      [people.b?.id, "1"],
    ]);
    expect(
      lb.final.results.map((r: { entrant: string; rank: number; private_score: string }) => [
        r.entrant,
        r.rank,
        r.private_score,
      ]),
    ).toEqual([
      [people.a?.id, 1, "0"],
      [people.b?.id, 2, "1"],
    ]);
    const standings = (await app.inject({ method: "GET", url: "/standings.json" })).json();
    expect(verifyStandingsDocument(standings).ok).toBe(true);
  });

  it("keeps a pending submission across a restart and scores it there", async () => {
    const other = EVENTS.find((e) => e.entrants === "individual" && e.id !== ev) as { id: string };
    clock = new Date("2026-07-25T00:00:00Z");
    expect((await putTask(task(), other.id)).statusCode).toBe(201);
    clock = new Date("2026-08-12T00:00:00Z");
    // another scorer holds the event's lease: the queued task finds it busy and waits for a retry
    const hold = (until: string | null) =>
      db.kysely
        .updateTable("olympiad_tasks")
        .set({ scoring_lease_until: until, scoring_owner: until ? "someone-else" : null })
        .where("event_id", "=", other.id)
        .execute();
    await hold("2099-01-01T00:00:00.000Z");
    const r = await submit("b", fileB, "csv", other.id);
    expect(r.statusCode).toBe(202);
    const taskId = `olympiad-score:${other.id}:${r.json().submission_id}`;
    await vi.waitFor(
      async () => expect((await app.services.runner.queue.status(taskId))?.attempts).toBeGreaterThan(0),
      {
        timeout: 15_000,
        interval: 100,
      },
    );
    await app.close();
    await hold(null);
    const status = async () =>
      (
        await db.kysely
          .selectFrom("olympiad_submissions")
          .select("status")
          .where("id", "=", r.json().submission_id)
          .executeTakeFirstOrThrow()
      ).status;
    expect(await status()).toBe("pending");
    // the restarted service's queue runs the task again (its sweep is off): nobody calls sweep()
    app = await appOn(db, { ...ENV, OLYMPIAD_SCORING_POLL_SECONDS: "0" });
    setClock(app);
    await vi.waitFor(async () => expect(await status()).toBe("scored"), { timeout: 30_000, interval: 200 });
    expect((await app.services.runner.queue.status(taskId))?.state).toBe("done");
    const mine = (
      await app.inject({ method: "GET", url: `/api/olympiad/events/${other.id}/submissions`, headers: as("b") })
    ).json();
    expect(mine.submissions[0]).toMatchObject({ status: "scored", public_score: "1" });
  });
});
