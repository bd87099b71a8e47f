import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Catalog } from "../../../src/catalog/service.js";
import { append } from "../../../src/db/hash-chain.js";
import { tableProviders } from "../../../src/olympiad/documents/service.js";
import { FAMILIES } from "../../../src/olympiad/events/events.js";
import { GOVERNANCE_WEIGHTS_BP } from "../../../src/olympiad/governance/weights.js";
import { type TestApp, testApp } from "../../support/app.js";
import { ENGINES } from "../../support/databases.js";

const SPEC_WEIGHTS = {
  team_captains: 0.4,
  entered_agents: 0.25,
  public_community: 0.2,
  lab_stewards: 0.1,
  residual_integrity: 0.05,
};

/** "0.25" → 2500 basis points, exactly (no float arithmetic). */
function bpOf(decimal: number): number {
  const [whole, frac = ""] = String(decimal).split(".");
  return Number(whole) * 10_000 + Number(frac.padEnd(4, "0"));
}

describe.each(ENGINES)("olympiad documents (%s)", (engine) => {
  let t: TestApp;
  const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: "GET", url, headers });

  beforeAll(async () => {
    t = await testApp(engine, {
      OLYMPIAD_SPONSOR_NAME: "Acme Labs",
      OLYMPIAD_SPONSOR_URL: "https://acme.example/",
    });
  });
  afterAll(async () => {
    await t.close();
  });

  it("GET /api/olympiad returns every field of the spec's record with the spec's values", async () => {
    const r = await get("/api/olympiad");
    expect(r.statusCode, r.body).toBe(200);
    const o = r.json();
    for (const key of [
      "name",
      "short",
      "version",
      "slogan",
      "charter",
      "status",
      "site",
      "olympiad_json",
      "records_json",
      "updated",
    ]) {
      expect(typeof o[key], key).toBe("string");
      expect(o[key].length, key).toBeGreaterThan(0);
    }
    expect(o.status).toBe("founding");
    expect(o.version).toBe("1.0.0");
    expect(new Date(o.updated).toISOString()).toBe(o.updated);
    expect(o.olympiad_json).toBe("http://lab.test/olympiad.json");
    expect(o.records_json).toBe("http://lab.test/olympiad-records.json");
    expect(o.sponsor).toEqual({
      name: "Acme Labs",
      domain: "acme.example",
      url: "https://acme.example",
      label: "Official host sponsor",
      role: "official_host_sponsor",
    });
    expect(o.scope).toMatchObject({ audience: "world" });
    expect(typeof o.scope.not).toBe("string");
    expect(typeof o.scope.statement).toBe("string");
    expect(Object.keys(o.community).sort()).toEqual(["call", "contributing", "github", "issues"]);

    // Season: the founding state of the spec (no open-registration date configured).
    expect(o.season).toMatchObject({
      year: 2026,
      id: "2026",
      role: "tryouts",
      events_counting: 40,
      events_completed: 0,
      registration_open: false,
      registration_opens: null,
      starts: "2026-01-01",
      ends: null,
    });
    expect(typeof o.season.label).toBe("string");
    expect(o.tryouts).toMatchObject({
      charter: "§5.2",
      ends: "week_before_open_registration",
      counts_as_official_points: false,
      may_inform_seedings: true,
      open_registration_date: null,
    });
    expect(typeof o.tryouts.active).toBe("boolean");
    expect(typeof o.tryouts.rule).toBe("string");
    expect(o.steady_state).toMatchObject({
      model: "quarterly",
      every_year: true,
      charter: "§5.3",
      ranking_quarters: ["Q1", "Q2", "Q3"],
      archive_quarter: "Q4",
    });
    expect(o.calendar).toEqual([
      { quarter: "Q1", months: ["Jan", "Feb", "Mar"], role: "ranking", events: 40 },
      { quarter: "Q2", months: ["Apr", "May", "Jun"], role: "ranking", events: 40 },
      { quarter: "Q3", months: ["Jul", "Aug", "Sep"], role: "ranking", events: 40 },
      { quarter: "Q4", months: ["Oct", "Nov", "Dec"], role: "archive_governance_prizes", events: 0 },
    ]);
    expect(o.entry).toMatchObject({
      sku: "gao-entry",
      amount_usd: "1.00",
      amount_cents: 100,
      who: ["agent_self", "human_for_self", "human_for_agent"],
      catalog: "http://lab.test/api/x402-products?sku=gao-entry",
    });
    expect(o.entry.aliases).toEqual(expect.arrayContaining(["olympiad-entry", "gao", "olympiad"]));
    expect(o.entry.agent_buy).toContain('"sku":"gao-entry","note":"agent:<id>"');
    expect(o.entry.agent_buy).toContain('POST http://lab.test/api/olympiad {"action":"enter"}');
    expect(o.entry.blurb).toBe(new Catalog().find("gao-entry")?.blurb);
    expect(o.teams).toMatchObject({
      roster_size: 50,
      ratio_rule: {
        human_min_pct: 30,
        human_max_pct: 70,
        autonomous_min_pct: 30,
        autonomous_max_pct: 70,
        poles: ["70/30 human-heavy", "30/70 autonomous-heavy"],
      },
    });
    expect(typeof o.teams.ratio_rule.note).toBe("string");
    expect(o.mission).toMatchObject({ for_the_world: true });
    expect(o.events).toMatchObject({
      counting_per_ranking_quarter: 40,
      families: ["spectacle", "speed", "mind", "craft", "team", "arena", "search", "legacy"],
    });
    expect(o.events.note).toContain("/olympiad.json");
    expect(o.awards).toMatchObject({
      top_n: 50,
      medals_top: 3,
      funding: { tense: "future", rails: ["donate", "sponsor"] },
    });
    expect(o.governance).toMatchObject({
      council: "Council of Peers",
      public_votes: true,
      mixed_weights: SPEC_WEIGHTS,
      decides: ["new_games", "change_games", "remove_games", "event_weights", "ratio_appeals", "prize_pool_release"],
    });
    expect(typeof o.governance.model).toBe("string");
    for (const key of ["product_stack", "flows", "endpoints"]) {
      expect(Object.keys(o[key]).length, key).toBeGreaterThan(0);
    }
    for (const steps of Object.values(o.flows)) expect((steps as string[]).length).toBeGreaterThan(0);
    expect(o.endpoints.machine_map).toBe("GET http://lab.test/olympiad.json");
  });

  it("governance weights sum to exactly 10000 basis points and to 1 as decimals", async () => {
    const { governance } = (await get("/api/olympiad")).json();
    const bp = Object.values(governance.weights_bp) as number[];
    expect(bp.reduce((a, b) => a + b, 0)).toBe(10_000);
    expect(governance.weights_bp).toEqual(GOVERNANCE_WEIGHTS_BP);
    // every decimal is exactly its basis points / 10000, so the decimals sum to exactly 1
    for (const [k, v] of Object.entries(governance.mixed_weights)) {
      expect(bpOf(v as number), k).toBe(governance.weights_bp[k]);
    }
    const sumBp = (Object.values(governance.mixed_weights) as number[]).map(bpOf).reduce((a, b) => a + b, 0);
    expect(sumBp).toBe(10_000);
  });

  it.each([
    ["discovery", ["season", "sponsor", "entry", "views", "endpoints"]],
    ["entry", ["entry", "season", "tryouts", "teams", "flows"]],
    ["governance", ["governance", "proposals", "flows"]],
    ["proposals", []],
    ["records", []],
  ])("?view=%s returns that part", async (view, keys) => {
    const r = await get(`/api/olympiad?view=${view}`);
    expect(r.statusCode, r.body).toBe(200);
    const v = r.json();
    expect(v.view).toBe(view);
    expect(v).toMatchObject({ name: "Great Agentic Olympiad", version: "1.0.0", season_id: "2026" });
    for (const key of keys) expect(v[key], key).toBeDefined();
    expect(v.calendar).toBeUndefined();
  });

  it("the entry view carries the entry block and the registration state", async () => {
    const v = (await get("/api/olympiad?view=entry")).json();
    expect(v.entry).toMatchObject({ sku: "gao-entry", amount_cents: 100, registration_open: false });
    expect(v.teams.roster_size).toBe(50);
  });

  it("an unknown view answers 400 invalid_view listing the valid ones", async () => {
    const r = await get("/api/olympiad?view=medals");
    expect(r.statusCode).toBe(400);
    expect(r.headers["content-type"]).toContain("application/problem+json");
    const p = r.json();
    expect(p.code).toBe("invalid_view");
    expect(p.valid_views).toEqual(["discovery", "entry", "governance", "proposals", "records"]);
    expect(p.detail).toContain("discovery, entry, governance, proposals, records");
    const empty = await get("/api/olympiad?view=");
    expect(empty.statusCode).toBe(400);
    expect(empty.json().code).toBe("invalid_view");
  });

  it("the proposals view lists proposals; the records view shows the olympiad chain", async () => {
    const proposals = (await get("/api/olympiad?view=proposals")).json();
    expect(Array.isArray(proposals.proposals)).toBe(true);
    const records = (await get("/api/olympiad?view=records")).json();
    expect(records.view).toBe("records");
  });

  it("GET /olympiad.json is the full machine map: 40 events, 5 per family, unique ids, scoring and calendar", async () => {
    const r = await get("/olympiad.json");
    expect(r.statusCode, r.body).toBe(200);
    const m = r.json();
    expect(m.record.status).toBe("founding");
    expect(m.events).toHaveLength(40);
    expect(new Set(m.events.map((e: { id: string }) => e.id)).size).toBe(40);
    for (const family of FAMILIES) {
      const own = m.events.filter((e: { family: string }) => e.family === family);
      expect(own, family).toHaveLength(5);
      const listed = m.families.find((f: { id: string }) => f.id === family);
      expect(listed.events).toEqual(own.map((e: { id: string }) => e.id));
    }
    for (const e of m.events) {
      expect(e.id.startsWith(`${e.family}-`)).toBe(true);
      expect(e.name.length).toBeGreaterThan(0);
      expect(e.format.length).toBeGreaterThan(0);
      expect(["higher", "lower"]).toContain(e.scoring.better);
      expect(e.scoring.rule).toContain(e.scoring.metric);
      expect(e.weight).toBe(1);
    }
    expect(m.scoring.points_table).toEqual([25, 18, 15, 12, 10, 8, 6, 4, 2, 1]);
    expect(m.season_calendar.quarters.map((q: { starts: string; ends: string }) => [q.starts, q.ends])).toEqual([
      ["2026-01-01", "2026-03-31"],
      ["2026-04-01", "2026-06-30"],
      ["2026-07-01", "2026-09-30"],
      ["2026-10-01", "2026-12-31"],
    ]);
    expect(m.season_calendar.quarters[3].events).toBe(0);
    expect(m.charter.map((c: { section: string }) => c.section)).toEqual(expect.arrayContaining(["§5.2", "§5.3"]));
  });

  it("answers 304 to a matching If-None-Match", async () => {
    const first = await get("/olympiad.json");
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"/);
    expect(first.headers["cache-control"]).toBe("no-cache");
    const again = await get("/olympiad.json", { "if-none-match": etag });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe("");
  });

  it("the discovery documents' olympiad links resolve", async () => {
    const agent = (await get("/api/agent")).json();
    expect(agent.discovery.olympiad).toBe("http://lab.test/api/olympiad");
    expect(agent.discovery.olympiad_json).toBe("http://lab.test/olympiad.json");
    const catalog = (await get("/api/x402-products?sku=gao-entry")).json();
    for (const url of [agent.discovery.olympiad, agent.discovery.olympiad_json, catalog.product.access]) {
      const r = await get(url.replace("http://lab.test", ""));
      expect(r.statusCode, url).toBe(200);
    }
  });

  it("`updated` moves with the olympiad's data", async () => {
    const before = (await get("/api/olympiad")).json().updated as string;
    const later = new Date(Date.parse(before) + 60_000).toISOString();
    await t.app.services.db.kysely
      .insertInto("olympiad_participants")
      .values({
        id: "par_docs_test",
        token_hash: "f".repeat(64),
        who: "human_for_self",
        name: "Docs",
        agent_id: null,
        operator_name: null,
        email: null,
        created_at: later,
      })
      .execute();
    const after = (await get("/api/olympiad")).json().updated;
    expect(after).toBe(later);
  });
});

describe.each(ENGINES)("events completed and open registration (%s)", (engine) => {
  let t: TestApp;
  // The configured season is this year's, open since January 1: Q1 has started, so official results count.
  const year = new Date().getUTCFullYear();
  const seasonId = String(year);
  beforeAll(async () => {
    t = await testApp(engine, {
      OLYMPIAD_SEASON_YEAR: seasonId,
      OLYMPIAD_REGISTRATION_OPENS: `${year}-01-01`,
    });
    await t.app.services.db.kysely
      .insertInto("olympiad_participants")
      .values({
        id: "par_docs_runner",
        token_hash: "e".repeat(64),
        who: "agent_self",
        name: "Runner",
        agent_id: "runner-1",
        operator_name: null,
        email: null,
        created_at: new Date().toISOString(),
      })
      .execute();
  });
  afterAll(async () => {
    await t.close();
  });

  it("events_completed counts events with recorded official results; tryouts do not count", async () => {
    const get = (url: string) => t.app.inject({ method: "GET", url });
    const before = (await get("/api/olympiad")).json();
    expect(before.season).toMatchObject({
      id: seasonId,
      registration_open: true,
      registration_opens: `${year}-01-01`,
      role: "official",
      phase: "open_competition",
      events_completed: 0,
    });
    expect(before.tryouts).toMatchObject({ active: false, ends_on: `${year - 1}-12-25` });
    expect(before.entry.registration_open).toBe(true);

    const records = t.app.services.olympiadRecords;
    const result = (event_id: string, quarter: "Q1" | "tryouts") =>
      records.record(
        {
          event_id,
          quarter,
          results: [{ participant_id: "par_docs_runner", score: 1000 }],
          evidence: { url: `https://evidence.example/${event_id}` },
        },
        "test",
      );
    await result("speed-bugfix", "Q1");
    await result("mind-ciphers", "Q1");
    await result("arena-auction", "tryouts");
    const after = (await get("/api/olympiad")).json();
    expect(after.season.events_completed).toBe(2);
    const head = await t.app.services.db.kysely
      .selectFrom("chain_heads")
      .select("updated_at")
      .where("chain", "=", "olympiad")
      .executeTakeFirst();
    expect(Date.parse(after.updated)).toBeGreaterThanOrEqual(Date.parse(head?.updated_at as string));
  });
});

describe.each(ENGINES)("the documents' own table providers (%s)", (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp(engine);
  });
  afterAll(async () => {
    await t.close();
  });

  it("count official events of the season from the olympiad chain, and see the latest change", async () => {
    const db = t.app.services.db.kysely;
    const providers = tableProviders(db);
    expect(await providers.eventsCompleted("2026")).toBe(0);
    expect(await providers.lastChange()).toBeNull();
    const body = (quarter: string, event_id: string) => ({ season_id: "2026", quarter, event_id, results: [] });
    await append(db, "olympiad", "result", body("Q1", "speed-bugfix"));
    await append(db, "olympiad", "result", body("Q2", "speed-bugfix"));
    await append(db, "olympiad", "correction", body("Q2", "speed-bugfix"));
    await append(db, "olympiad", "result", body("tryouts", "arena-auction"));
    await append(db, "olympiad", "result", { ...body("Q1", "craft-code-golf"), season_id: "2025" });
    await append(db, "audit", "audit", body("Q1", "mind-ciphers"));
    expect(await providers.eventsCompleted("2026")).toBe(2);
    expect(await providers.eventsCompleted("2025")).toBe(1);
    const head = await db
      .selectFrom("chain_heads")
      .select("updated_at")
      .where("chain", "=", "olympiad")
      .executeTakeFirst();
    expect(await providers.lastChange()).toBe(head?.updated_at);
    const records = await providers.records();
    expect(records).toMatchObject({ chain: "olympiad", entries: 5 });
    const proposals = await providers.proposals();
    expect(proposals).toEqual({ count: 0, limit: 20, next_cursor: null, proposals: [] });
  });
});

describe("a changed gao-entry price flows into every olympiad document", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp("sqlite", {}, { catalog: new Catalog().withPrice("gao-entry", 250) });
  });
  afterAll(async () => {
    await t.close();
  });

  it("entry view, record and olympiad.json agree with the catalog", async () => {
    const get = (url: string) => t.app.inject({ method: "GET", url });
    const view = (await get("/api/olympiad?view=entry")).json();
    expect(view.entry).toMatchObject({ amount_usd: "2.50", amount_cents: 250 });
    expect(view.entry.agent_buy_steps.join(" ")).toContain("2.50 USD");
    expect(view.entry.agent_buy_steps.join(" ")).not.toContain("1.00 USD");
    const record = (await get("/api/olympiad")).json();
    expect(record.entry).toMatchObject({ amount_usd: "2.50", amount_cents: 250 });
    const map = (await get("/olympiad.json")).json();
    expect(map.record.entry).toMatchObject({ amount_usd: "2.50", amount_cents: 250 });
    const discovery = (await get("/api/olympiad?view=discovery")).json();
    expect(discovery.entry).toMatchObject({ amount_usd: "2.50", amount_cents: 250 });
    const catalog = (await get("/api/x402-products?sku=gao-entry")).json();
    expect(catalog.product.amount_cents).toBe(250);
  });
});
