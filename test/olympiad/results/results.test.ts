import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../../src/db/database.js";
import { verifyChain } from "../../../src/db/hash-chain.js";
import type { Database } from "../../../src/db/schema.js";
import { EVENTS, pointsFor } from "../../../src/olympiad/events/events.js";
import { verifyStandingsDocument } from "../../../src/olympiad/results/verify.js";
import { appOn, type TestApp, testApp } from "../../support/app.js";
import { ENGINES, freshDatabase } from "../../support/databases.js";
import { seedParticipants } from "../../support/olympiad.js";

const ADMIN_TOKEN = "admin-token-for-olympiad-records-0123";
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
const ENV = { ADMIN_TOKEN, OLYMPIAD_SEASON_YEAR: "2026", OLYMPIAD_REGISTRATION_OPENS: "2026-01-08" };
/** Inside Q3 2026, registration open: Q1–Q3 results may be recorded. */
const NOW = new Date("2026-08-15T12:00:00Z");

const individual = EVENTS.filter((e) => e.entrants === "individual");
const teamEvent = EVENTS.find((e) => e.entrants === "team");
const higher = individual.filter((e) => e.scoring.better === "higher");
const lower = individual.find((e) => e.scoring.better === "lower");
const ev = (i: number) => (higher[i] as { id: string }).id;
const evidence = { url: "https://evidence.example/heat-1", note: "video and judges' sheet" };

async function seedTeams(db: Kysely<Database>, ids: string[]) {
  await db
    .insertInto("olympiad_teams")
    .values(
      ids.map((id) => ({
        id,
        name: id,
        captain_id: "par_a",
        join_code_hash: `code-${id}`,
        member_count: 1,
        locked_at: null,
        season_id: null,
        created_at: "2026-01-02T00:00:00.000Z",
        updated_at: "2026-01-02T00:00:00.000Z",
      })),
    )
    .execute();
}

const lines = (scores: Record<string, number | string | null>) =>
  Object.entries(scores).map(([participant_id, score]) => ({ participant_id, score }));

describe.each(ENGINES)("olympiad records and standings (%s)", (engine) => {
  let t: TestApp;
  const record = (payload: Record<string, unknown>, headers: Record<string, string> = auth) =>
    t.app.inject({ method: "POST", url: "/api/admin/olympiad/results", payload, headers });
  const standings = async () => {
    const r = await t.app.inject({ method: "GET", url: "/standings.json" });
    expect(r.statusCode, r.body).toBe(200);
    return r.json();
  };

  beforeAll(async () => {
    t = await testApp(engine, ENV);
    t.app.services.olympiadRecords.now = () => NOW;
    const db = t.app.services.db.kysely;
    await seedParticipants(db, ["par_a", "par_b", "par_c", "par_d", "par_e"]);
    await seedTeams(db, ["team_x", "team_y"]);
  });
  afterAll(() => t.close());

  it("publishes empty documents before any result", async () => {
    const s = await standings();
    expect(s).toMatchObject({
      version: "1.2.2",
      season: "2026",
      chain: "olympiad",
      head: { seq: 0, hash: "0".repeat(64) },
      standings: [],
      seeding: [],
      entries: [],
    });
    expect(verifyStandingsDocument(s).ok).toBe(true);
    const r = await t.app.inject({ method: "GET", url: "/olympiad-records.json" });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ chain: "olympiad", sets: [], entries: [], counts: { entries: 0 } });
  });

  it("refuses a recording without the operator token (401) before looking at the body", async () => {
    const r = await record({}, {});
    expect(r.statusCode).toBe(401);
    expect(r.json().code).toBe("admin_unauthorized");
  });

  it("records a result set with evidence; ranks come from scores; standings rank with medals", async () => {
    const r = await record({
      event_id: ev(0),
      quarter: "Q1",
      held_on: "2026-02-10",
      results: [
        { participant_id: "par_a", score: 90, rank: 1 },
        { participant_id: "par_b", score: "80.50" },
        { participant_id: "par_c", score: "80.5" },
        { participant_id: "par_d", score: 10 },
        { participant_id: "par_e", score: null, note: "did not finish" },
      ],
      evidence: { ...evidence, sha256: "AB".repeat(32) },
    });
    expect(r.statusCode, r.body).toBe(201);
    const e = r.json();
    expect(e).toMatchObject({ chain: "olympiad", seq: 1, kind: "result", prev_hash: "0".repeat(64) });
    expect(e.body).toMatchObject({
      season_id: "2026",
      quarter: "Q1",
      event_id: ev(0),
      weight: 1,
      evidence: { url: evidence.url, sha256: "ab".repeat(32) },
      results: [
        { participant_id: "par_a", rank: 1, score: "90" },
        { participant_id: "par_b", rank: 2, score: "80.5" },
        { participant_id: "par_c", rank: 2, score: "80.5" },
        { participant_id: "par_d", rank: 4, score: "10" },
        { participant_id: "par_e", rank: null, score: null, note: "did not finish" },
      ],
    });
    const s = await standings();
    expect(s.head).toEqual({ seq: 1, hash: e.hash });
    expect(s.entries).toHaveLength(1);
    expect(s.standings.map((row: { entrant: string; points: number; medal: string | null }) => row)).toMatchObject([
      { rank: 1, entrant: "par_a", points: pointsFor(1), golds: 1, medal: "gold" },
      // b and c tie on everything up to reached_seq: the id decides
      { rank: 2, entrant: "par_b", points: pointsFor(2), silvers: 1, medal: "silver" },
      { rank: 3, entrant: "par_c", points: pointsFor(2), silvers: 1, medal: "bronze" },
      { rank: 4, entrant: "par_d", points: pointsFor(4), medal: null },
      { rank: 5, entrant: "par_e", points: 0, medal: null },
    ]);
    expect(verifyStandingsDocument(s)).toMatchObject({ ok: true, entries: 1 });
  });

  it("answers every bad recording with a problem and a stable code", async () => {
    const base = { event_id: ev(1), quarter: "Q1", results: lines({ par_a: 1 }), evidence };
    const cases: [Record<string, unknown>, number, string][] = [
      [{ ...base, event_id: "speed-nothing" }, 400, "unknown_event"],
      [{ ...base, quarter: "Q4" }, 400, "archive_quarter"],
      [{ ...base, quarter: "Q5" }, 400, "validation_failed"],
      [{ ...base, season_id: "2025" }, 400, "unknown_season"],
      [{ ...base, results: [{ team_id: "team_x", score: 1 }] }, 400, "wrong_entrant_kind"],
      [{ ...base, results: [{ participant_id: "par_a", team_id: "team_x", score: 1 }] }, 400, "wrong_entrant_kind"],
      [{ ...base, results: [{ score: 1 }] }, 400, "wrong_entrant_kind"],
      [{ ...base, results: [...lines({ par_a: 1 }), ...lines({ par_a: 2 })] }, 400, "duplicate_entrant"],
      [{ ...base, results: lines({ par_a: "1e3" }) }, 400, "invalid_score"],
      [{ ...base, results: lines({ par_a: 1.5 }) }, 400, "validation_failed"],
      [{ ...base, results: [{ participant_id: "par_a", score: 5, rank: 2 }] }, 400, "rank_mismatch"],
      [{ ...base, results: [{ participant_id: "par_a", score: null, rank: 1 }] }, 400, "rank_mismatch"],
      [{ ...base, results: lines({ par_a: 1, par_nobody: 2 }) }, 400, "unknown_entrant"],
      [{ ...base, results: [] }, 400, "validation_failed"],
      [{ ...base, evidence: undefined }, 400, "validation_failed"],
      [{ ...base, evidence: { url: "ftp://x" } }, 400, "validation_failed"],
      [{ ...base, evidence: { url: "https://x", sha256: "abc" } }, 400, "validation_failed"],
      [{ ...base, evidence: { url: "https://x", note: "bell\u0007" } }, 400, "invalid_text"],
      [{ ...base, reason: "why" }, 400, "reason_without_correction"],
      [{ ...base, supersedes: 1 }, 400, "correction_reason_required"],
      [{ ...base, event_id: ev(0) }, 409, "result_already_recorded"],
      [{ ...base, supersedes: 999, reason: "typo" }, 404, "record_not_found"],
    ];
    for (const [payload, status, code] of cases) {
      const r = await record(payload);
      expect(r.statusCode, `${code}: ${r.body}`).toBe(status);
      expect(r.headers["content-type"]).toContain("application/problem+json");
      expect(r.json().code, r.body).toBe(code);
    }
    const dup = await record({ ...base, event_id: ev(0) });
    expect(dup.json().recorded_seq).toBe(1);
    // Nothing was appended by any of them.
    expect((await standings()).head.seq).toBe(1);
  });

  it("official results wait for open registration and for their quarter; tryouts never wait", async () => {
    const records = t.app.services.olympiadRecords;
    try {
      records.now = () => new Date("2026-01-05T00:00:00Z"); // tryouts: before registration opens
      const early = await record({ event_id: ev(2), quarter: "Q1", results: lines({ par_a: 1 }), evidence });
      expect(early.statusCode).toBe(409);
      expect(early.json()).toMatchObject({ code: "official_results_not_open", registration_opens: "2026-01-08" });
      records.now = () => new Date("2026-02-01T00:00:00Z");
      const future = await record({ event_id: ev(2), quarter: "Q2", results: lines({ par_a: 1 }), evidence });
      expect(future.statusCode).toBe(409);
      expect(future.json()).toMatchObject({ code: "quarter_not_started", starts: "2026-04-01" });
    } finally {
      records.now = () => NOW;
    }
  });

  it("keeps tryout results for seeding: no official points", async () => {
    const before = await standings();
    const r = await record({
      event_id: ev(0),
      quarter: "tryouts",
      results: lines({ par_e: 100, par_d: 50 }),
      evidence,
    });
    expect(r.statusCode, r.body).toBe(201);
    const s = await standings();
    expect(s.standings).toEqual(before.standings);
    expect(s.seeding).toMatchObject([
      { rank: 1, entrant: "par_e", points: pointsFor(1), golds: 1, medal: null },
      { rank: 2, entrant: "par_d", points: pointsFor(2), medal: null },
    ]);
    expect(s.entries.map((e: { kind: string }) => e.kind)).toEqual(["result", "result"]);
  });

  it("ranks a lower-is-better event and a team event", async () => {
    const low = await record({
      event_id: (lower as { id: string }).id,
      quarter: "Q2",
      results: lines({ par_d: 30, par_a: 31, par_b: 30 }),
      evidence,
    });
    expect(low.statusCode, low.body).toBe(201);
    expect(low.json().body.results.map((l: { rank: number }) => l.rank)).toEqual([1, 3, 1]);
    const team = await record({
      event_id: (teamEvent as { id: string }).id,
      quarter: "Q2",
      results: [
        { team_id: "team_y", score: 7 },
        // team_x wins whichever way the team event ranks
        { team_id: "team_x", score: teamEvent?.scoring.better === "higher" ? 9 : 5 },
      ],
      evidence,
    });
    expect(team.statusCode, team.body).toBe(201);
    const s = await standings();
    const row = (id: string) => s.standings.find((x: { entrant: string }) => x.entrant === id);
    expect(row("team_x")).toMatchObject({ entrant_kind: "team", points: 25, golds: 1 });
    expect(row("par_d")).toMatchObject({ points: pointsFor(4) + pointsFor(1), golds: 1 });
    expect(verifyStandingsDocument(s).ok).toBe(true);
  });

  it("corrects a set with a new entry that supersedes it; both stay published", async () => {
    const fix = await record({
      event_id: ev(0),
      quarter: "Q1",
      supersedes: 1,
      reason: "judges' sheet re-read: par_d finished ahead of par_c",
      results: lines({ par_a: 90, par_b: 80, par_d: 70, par_c: 60, par_e: null }),
      evidence: { url: "https://evidence.example/heat-1-corrected" },
    });
    expect(fix.statusCode, fix.body).toBe(201);
    expect(fix.json()).toMatchObject({ kind: "correction", body: { supersedes: 1 } });
    const again = await record({
      event_id: ev(0),
      quarter: "Q1",
      supersedes: 1,
      reason: "twice",
      results: lines({ par_a: 1 }),
      evidence,
    });
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe("record_already_superseded");

    const s = await standings();
    const row = (id: string) => s.standings.find((x: { entrant: string }) => x.entrant === id);
    expect(row("par_c")).toMatchObject({ points: pointsFor(4), silvers: 0 });
    expect(row("par_b")).toMatchObject({ points: pointsFor(2) + pointsFor(1), golds: 1, silvers: 1 });
    const docs = (await t.app.inject({ method: "GET", url: "/olympiad-records.json" })).json();
    const first = docs.sets.find((x: { seq: number }) => x.seq === 1);
    const corrected = docs.sets.find((x: { seq: number }) => x.seq === fix.json().seq);
    expect(first).toMatchObject({ superseded_by: fix.json().seq, counts_official_points: false });
    expect(corrected).toMatchObject({ supersedes: 1, counts_official_points: true, reason: expect.any(String) });
    expect(docs.counts).toMatchObject({ result_sets: 4, corrections: 1, live_sets: 4, tryout_sets: 1 });
    expect(docs.entries).toEqual(s.entries);
    expect(verifyChain(docs.entries.map((e: object) => ({ ...e, chain: "olympiad" })))).toMatchObject({ ok: true });
  });

  it("two concurrent recordings of one event: exactly one is kept", async () => {
    const payload = { event_id: ev(3), quarter: "Q3", results: lines({ par_a: 2, par_b: 1 }), evidence };
    const [x, y] = await Promise.all([record(payload), record(payload)]);
    expect([x.statusCode, y.statusCode].sort()).toEqual([201, 409]);
    const s = await standings();
    expect(verifyStandingsDocument(s).ok).toBe(true);
  });

  it("audits every recording and keeps the audit log verifiable (GET /api/admin/audit/verify)", async () => {
    const audit = await t.app.inject({
      method: "GET",
      url: "/api/admin/audit?action=olympiad.result",
      headers: auth,
    });
    expect(audit.statusCode).toBe(200);
    expect(audit.json().total).toBe(5);
    expect(audit.json().items[0]).toMatchObject({ subject: expect.stringMatching(/^olympiad:\d+$/) });
    const v = await t.app.inject({ method: "GET", url: "/api/admin/audit/verify", headers: auth });
    expect(v.statusCode, v.body).toBe(200);
    expect(v.json()).toMatchObject({ ok: true, entries: 6, rows: 6, broken: null, mismatches: [] });
    expect((await t.app.inject({ method: "GET", url: "/api/admin/audit/verify" })).statusCode).toBe(401);
  });

  it("summarises the records for GET /api/olympiad?view=records", async () => {
    const view = await t.app.services.olympiadRecords.recordsView();
    const s = await standings();
    expect(view).toMatchObject({
      chain: "olympiad",
      head: s.head,
      season: "2026",
      standings_json: "http://lab.test/standings.json",
      records_json: "http://lab.test/olympiad-records.json",
      counts: { entries: s.entries.length },
    });
    expect(view.medals.map((m) => m.medal)).toEqual(["gold", "silver", "bronze"]);
    expect(view.latest[0]?.seq).toBe(s.head.seq);
    const r = await t.app.inject({ method: "GET", url: "/api/olympiad?view=records" });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ view: "records", head: s.head, standings_json: view.standings_json });
    // live official sets: Q1 (corrected), two in Q2, one in Q3; tryouts do not count
    expect(await t.app.services.olympiadRecords.eventsCompleted("2026")).toBe(4);
  });
});

describe("operator routes without ADMIN_TOKEN", () => {
  it("answers 503 admin_disabled before looking at the body; the public documents still answer", async () => {
    const off = await testApp("sqlite");
    try {
      for (const [method, url] of [
        ["POST", "/api/admin/olympiad/results"],
        ["GET", "/api/admin/audit/verify"],
      ] as const) {
        const r = await off.app.inject({ method, url, headers: auth });
        expect(r.statusCode, url).toBe(503);
        expect(r.json().code).toBe("admin_disabled");
      }
      expect((await off.app.inject({ method: "GET", url: "/standings.json" })).statusCode).toBe(200);
      expect((await off.app.inject({ method: "GET", url: "/olympiad-records.json" })).statusCode).toBe(200);
    } finally {
      await off.close();
    }
  });
});

describe("standings size and tiebreaks", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp("sqlite", ENV);
    t.app.services.olympiadRecords.now = () => NOW;
  });
  afterAll(() => t.close());

  it("lists the top 50 of more entrants, with 3 medals, in the documented order", async () => {
    const ids = Array.from({ length: 60 }, (_, i) => `par_${String(i).padStart(2, "0")}`);
    await seedParticipants(t.app.services.db.kysely, ids);
    const record = (payload: Record<string, unknown>) =>
      t.app.inject({ method: "POST", url: "/api/admin/olympiad/results", payload, headers: auth });
    // Event 1: everyone, scores 60..1 in id order: par_00 wins.
    const all = await record({
      event_id: ev(0),
      quarter: "Q1",
      results: ids.map((id, i) => ({ participant_id: id, score: 60 - i })),
      evidence,
    });
    expect(all.statusCode, all.body).toBe(201);
    // Event 2: par_02 wins, par_00 second: par_00 25+18 = 43, par_02 15+25 = 40, par_01 18.
    // Event 3: par_01 wins alone: par_01 18+25 = 43 = par_00; golds 1 each, silvers 1 each;
    // par_00 reached 43 at seq 2, par_01 at seq 3: par_00 first.
    expect(
      (await record({ event_id: ev(1), quarter: "Q1", results: lines({ par_02: 9, par_00: 8 }), evidence })).statusCode,
    ).toBe(201);
    expect((await record({ event_id: ev(2), quarter: "Q1", results: lines({ par_01: 1 }), evidence })).statusCode).toBe(
      201,
    );
    const s = (await t.app.inject({ method: "GET", url: "/standings.json" })).json();
    expect(s.ranked_total).toBe(60);
    expect(s.standings).toHaveLength(50);
    expect(s.standings.slice(0, 3)).toMatchObject([
      { rank: 1, entrant: "par_00", points: 43, golds: 1, silvers: 1, reached_seq: 2, medal: "gold" },
      { rank: 2, entrant: "par_01", points: 43, golds: 1, silvers: 1, reached_seq: 3, medal: "silver" },
      { rank: 3, entrant: "par_02", points: 40, golds: 1, bronzes: 1, medal: "bronze" },
    ]);
    expect(s.standings.filter((r: { medal: string | null }) => r.medal !== null)).toHaveLength(3);
    // Zero-point entrants (places 11–60 of event 1) follow by id: the cut keeps par_10..par_49.
    expect(s.standings.at(-1)).toMatchObject({ rank: 50, entrant: "par_49", points: 0 });
    expect(verifyStandingsDocument(s).ok).toBe(true);
  });
});

describe.each(ENGINES)("records survive a restart (%s)", (engine) => {
  it("records, closes, reopens on the same database: the same chain, still verified", async () => {
    const fresh = await freshDatabase(engine);
    const open = async () => {
      const db = openDatabase({ dataDir: fresh.dataDir, databaseUrl: fresh.databaseUrl });
      const app = await appOn(db, { DATA_DIR: fresh.dataDir, ...ENV });
      app.services.olympiadRecords.now = () => NOW;
      return {
        app,
        close: async () => {
          await app.close();
          await db.close();
        },
      };
    };
    try {
      const first = await open();
      await seedParticipants(first.app.services.db.kysely, ["par_a", "par_b"]);
      const r = await first.app.inject({
        method: "POST",
        url: "/api/admin/olympiad/results",
        payload: { event_id: ev(0), quarter: "Q1", results: lines({ par_a: 2, par_b: 1 }), evidence },
        headers: auth,
      });
      expect(r.statusCode, r.body).toBe(201);
      const before = (await first.app.inject({ method: "GET", url: "/standings.json" })).json();
      await first.close();

      const second = await open();
      const after = (await second.app.inject({ method: "GET", url: "/standings.json" })).json();
      expect(after.head).toEqual(before.head);
      expect(after.entries).toEqual(before.entries);
      expect(after.standings).toEqual(before.standings);
      expect(verifyStandingsDocument(after)).toMatchObject({ ok: true, entries: 1 });
      // The chain continues from the stored head.
      const next = await second.app.inject({
        method: "POST",
        url: "/api/admin/olympiad/results",
        payload: { event_id: ev(1), quarter: "Q1", results: lines({ par_a: 2, par_b: 1 }), evidence },
        headers: auth,
      });
      expect(next.json()).toMatchObject({ seq: 2, prev_hash: before.head.hash });
      const audit = await second.app.inject({ method: "GET", url: "/api/admin/audit/verify", headers: auth });
      expect(audit.json()).toMatchObject({ ok: true, entries: 2, rows: 2 });
      await second.close();
    } finally {
      await fresh.db.close();
    }
  });
});
