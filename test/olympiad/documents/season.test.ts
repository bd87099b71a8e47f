import { describe, expect, it } from "vitest";
import { Catalog } from "../../../src/catalog/service.js";
import { ConfigError, loadConfig, testConfig } from "../../../src/config.js";
import { machineMap, olympiadRecord, type RecordSources } from "../../../src/olympiad/documents/olympiad-record.js";
import { olympiadRecordSchema } from "../../../src/olympiad/documents/schemas.js";
import {
  EVENTS,
  eventById,
  FAMILIES,
  POINTS_TABLE,
  pointsFor,
  rankResults,
} from "../../../src/olympiad/events/events.js";
import {
  bpToDecimalString,
  CONSTITUENCIES,
  decimalWeights,
  GOVERNANCE_WEIGHTS_BP,
} from "../../../src/olympiad/governance/weights.js";
import { CALENDAR, registrationClosedProblem, seasonOf } from "../../../src/olympiad/season.js";

const OPENS = "2026-06-01";
const config = testConfig({ BASE_URL: "https://lab.example", OLYMPIAD_REGISTRATION_OPENS: OPENS });
const at = (iso: string) => new Date(iso);

function sources(now: Date, over: Partial<RecordSources> = {}): RecordSources {
  return {
    config,
    catalog: new Catalog(),
    now,
    eventsCompleted: 0,
    lastDataChange: null,
    startedAt: at("2026-01-15T00:00:00Z"),
    ...over,
  };
}

describe("season settings", () => {
  it("have fixed defaults: season 2026 from January 1, no open-registration date, Lab Phi as sponsor", () => {
    const c = loadConfig({ BASE_URL: "https://lab.example.com/" });
    expect(c.olympiad).toEqual({
      season: { year: 2026, starts: "2026-01-01", ends: null, registrationOpens: null },
      sponsor: {
        name: "Lab Phi",
        domain: "lab.example.com",
        url: "https://lab.example.com",
        label: "Official host sponsor",
      },
      communityUrl: null,
    });
    expect(loadConfig({ OLYMPIAD_SEASON_YEAR: "2030" }).olympiad.season.starts).toBe("2030-01-01");
  });

  it.each([
    [{ OLYMPIAD_SEASON_YEAR: "26" }, "OLYMPIAD_SEASON_YEAR"],
    [{ OLYMPIAD_REGISTRATION_OPENS: "2026-02-30" }, "OLYMPIAD_REGISTRATION_OPENS"],
    [{ OLYMPIAD_REGISTRATION_OPENS: "next week" }, "OLYMPIAD_REGISTRATION_OPENS"],
    [{ OLYMPIAD_SEASON_STARTS: "2026-1-1" }, "OLYMPIAD_SEASON_STARTS"],
    [{ OLYMPIAD_SEASON_ENDS: "2025-12-31" }, "OLYMPIAD_SEASON_ENDS"],
    [{ OLYMPIAD_REGISTRATION_OPENS: "2025-12-31" }, "OLYMPIAD_REGISTRATION_OPENS"],
    [{ OLYMPIAD_SEASON_ENDS: "2026-05-01", OLYMPIAD_REGISTRATION_OPENS: "2026-06-01" }, "OLYMPIAD_REGISTRATION_OPENS"],
    [{ OLYMPIAD_SPONSOR_URL: "lab.example.com" }, "OLYMPIAD_SPONSOR_URL"],
    [{ OLYMPIAD_SPONSOR_DOMAIN: "not a domain" }, "OLYMPIAD_SPONSOR_DOMAIN"],
  ])("refuse %o", (env, name) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    try {
      loadConfig(env);
    } catch (err) {
      expect((err as ConfigError).setting).toBe(name);
    }
  });
});

describe("season state", () => {
  it("registration is closed before the configured date and open from its first instant (UTC)", () => {
    const before = seasonOf(config, at("2026-05-31T23:59:59.999Z"));
    expect(before.registration_open).toBe(false);
    expect(before.role).toBe("tryouts");
    const on = seasonOf(config, at("2026-06-01T00:00:00.000Z"));
    expect(on.registration_open).toBe(true);
    expect(on.role).toBe("official");
    expect(on.phase).toBe("open_competition");
    expect(seasonOf(config, at("2026-08-15T12:00:00Z")).registration_open).toBe(true);
  });

  it("tryouts end one week before open registration; the week between is seeding", () => {
    const s = seasonOf(config, at("2026-03-01T00:00:00Z"));
    expect(s.tryouts_end).toBe("2026-05-25");
    expect(s.registration_opens).toBe(OPENS);
    expect(s.tryouts_active).toBe(true);
    expect(s.phase).toBe("tryouts_and_competitions");
    expect(seasonOf(config, at("2026-05-24T23:59:59.999Z")).tryouts_active).toBe(true);
    const seeding = seasonOf(config, at("2026-05-25T00:00:00Z"));
    expect(seeding.tryouts_active).toBe(false);
    expect(seeding.registration_open).toBe(false);
    expect(seeding.phase).toBe("seeding");
    // across a month boundary
    const march = seasonOf(testConfig({ OLYMPIAD_REGISTRATION_OPENS: "2026-03-03" }), at("2026-02-01T00:00:00Z"));
    expect(march.tryouts_end).toBe("2026-02-24");
  });

  it("without an open-registration date tryouts continue and registration stays closed", () => {
    const open = testConfig();
    const s = seasonOf(open, at("2026-11-24T00:00:00Z"));
    expect(s).toMatchObject({
      id: "2026",
      registration_open: false,
      registration_opens: null,
      tryouts_end: null,
      tryouts_active: true,
      phase: "tryouts_and_competitions",
      role: "tryouts",
      counts_official_points: false,
    });
  });

  it("Q1–Q3 rank 40 events; Q4 is archive with none, even with registration open", () => {
    for (const [iso, quarter] of [
      ["2026-01-01T00:00:00Z", "Q1"],
      ["2026-04-30T00:00:00Z", "Q2"],
      ["2026-09-30T23:59:59Z", "Q3"],
    ] as const) {
      const s = seasonOf(config, at(iso));
      expect(s.quarter).toBe(quarter);
      expect(s.ranking).toBe(true);
      expect(s.events_counting).toBe(40);
    }
    const q4 = seasonOf(config, at("2026-10-01T00:00:00Z"));
    expect(q4).toMatchObject({ quarter: "Q4", ranking: false, events_counting: 0, registration_open: true });
    expect(q4.counts_official_points).toBe(false);
    expect(seasonOf(config, at("2026-07-01T00:00:00Z")).counts_official_points).toBe(true);
    expect(CALENDAR.find((q) => q.quarter === "Q4")).toMatchObject({ role: "archive_governance_prizes", events: 0 });
    expect(CALENDAR.filter((q) => q.role === "ranking").map((q) => q.events)).toEqual([40, 40, 40]);
  });

  it("knows before the season and after its end", () => {
    const c = testConfig({
      OLYMPIAD_SEASON_STARTS: "2026-02-01",
      OLYMPIAD_SEASON_ENDS: "2026-11-30",
      OLYMPIAD_REGISTRATION_OPENS: OPENS,
    });
    expect(seasonOf(c, at("2026-01-31T23:59:59Z"))).toMatchObject({ phase: "pre_season", tryouts_active: false });
    expect(seasonOf(c, at("2026-11-30T23:59:59Z"))).toMatchObject({ phase: "open_competition" });
    expect(seasonOf(c, at("2026-12-01T00:00:00Z"))).toMatchObject({ phase: "ended", registration_open: false });
  });

  it("`enter` before the date gets a 409 problem naming the date", () => {
    const p = registrationClosedProblem(seasonOf(config, at("2026-05-01T00:00:00Z")));
    expect(p.status).toBe(409);
    expect(p.code).toBe("registration_not_open");
    expect(p.detail).toContain("2026-06-01");
    expect(p.extra).toMatchObject({ registration_opens: OPENS, tryouts_end: "2026-05-25", season_id: "2026" });
    const unset = registrationClosedProblem(seasonOf(testConfig(), at("2026-05-01T00:00:00Z")));
    expect(unset.detail).toContain("not announced");
    expect(unset.extra).toMatchObject({ registration_opens: null });
  });
});

describe("the record at an injected instant", () => {
  it("is the spec's founding state before open registration", () => {
    const record = olympiadRecord(sources(at("2026-03-10T00:00:00Z")));
    expect(olympiadRecordSchema.safeParse(record).success).toBe(true);
    expect(record.status).toBe("founding");
    expect(record.season).toMatchObject({
      role: "tryouts",
      phase: "tryouts_and_competitions",
      events_counting: 40,
      events_completed: 0,
      registration_open: false,
      registration_opens: OPENS,
    });
    expect(record.tryouts).toMatchObject({ active: true, ends_on: "2026-05-25", open_registration_date: OPENS });
    expect(record.entry.registration_open).toBe(false);
  });

  it("opens on the date, and carries events completed from its provider", () => {
    const record = olympiadRecord(sources(at("2026-06-01T00:00:00Z"), { eventsCompleted: 7 }));
    expect(record.season).toMatchObject({ registration_open: true, role: "official", events_completed: 7 });
    expect(record.tryouts.active).toBe(false);
  });

  it("`updated` is the latest of start-up, data change and the season boundaries passed", () => {
    // the quarter began 2026-04-01, after the start-up (2026-01-15)
    expect(olympiadRecord(sources(at("2026-05-01T00:00:00Z"))).updated).toBe("2026-04-01T00:00:00.000Z");
    // tryouts ended 2026-05-25: a later boundary
    expect(olympiadRecord(sources(at("2026-05-28T00:00:00Z"))).updated).toBe("2026-05-25T00:00:00.000Z");
    const changed = "2026-05-27T10:00:00.000Z";
    expect(olympiadRecord(sources(at("2026-05-28T00:00:00Z"), { lastDataChange: changed })).updated).toBe(changed);
  });

  it("the machine map's calendar follows the season year", () => {
    const c = testConfig({ OLYMPIAD_SEASON_YEAR: "2028" });
    const map = machineMap(olympiadRecord({ ...sources(at("2028-02-29T00:00:00Z")), config: c }), c.baseUrl);
    expect(map.season_calendar.quarters[0]).toMatchObject({ starts: "2028-01-01", ends: "2028-03-31" });
    expect(map.season_calendar.season_id).toBe("2028");
  });
});

describe("events and scoring", () => {
  it("40 events, five in each of the eight families, unique ids", () => {
    expect(EVENTS).toHaveLength(40);
    expect(new Set(EVENTS.map((e) => e.id)).size).toBe(40);
    for (const f of FAMILIES) expect(EVENTS.filter((e) => e.family === f)).toHaveLength(5);
    expect(eventById("speed-lossless-compression")?.scoring.better).toBe("lower");
    expect(eventById("nope")).toBeUndefined();
  });

  it("the points table: 25-18-15-12-10-8-6-4-2-1, then 0", () => {
    expect(POINTS_TABLE.map((_, i) => pointsFor(i + 1))).toEqual([25, 18, 15, 12, 10, 8, 6, 4, 2, 1]);
    expect(pointsFor(11)).toBe(0);
    expect(pointsFor(0)).toBe(0);
    expect(pointsFor(1.5)).toBe(0);
  });

  it("ranks by the event's direction; ties share the better rank; invalid results earn nothing", () => {
    const timed = eventById("speed-bugfix");
    if (!timed) throw new Error("missing event");
    const ranked = rankResults(timed, [
      { who: "a", value: 5000 },
      { who: "b", value: 3000 },
      { who: "c", value: null },
      { who: "d", value: 3000 },
      { who: "e", value: 9000 },
    ]);
    expect(ranked.map((r) => [r.result.who, r.rank, r.points])).toEqual([
      ["b", 1, 25],
      ["d", 1, 25],
      ["a", 3, 15],
      ["e", 4, 12],
      ["c", null, 0],
    ]);
    const judged = eventById("mind-olympiad-math");
    if (!judged) throw new Error("missing event");
    expect(rankResults(judged, [{ value: 3 }, { value: 11 }]).map((r) => r.result.value)).toEqual([11, 3]);
  });
});

describe("governance weights", () => {
  it("sum to exactly 10000 basis points, and the decimals are the spec's and sum to 1", () => {
    const bp = CONSTITUENCIES.map((c) => GOVERNANCE_WEIGHTS_BP[c]);
    expect(bp.reduce((a, b) => a + b, 0)).toBe(10_000);
    expect(decimalWeights()).toEqual({
      team_captains: 0.4,
      entered_agents: 0.25,
      public_community: 0.2,
      lab_stewards: 0.1,
      residual_integrity: 0.05,
    });
    expect(CONSTITUENCIES.map((c) => bpToDecimalString(GOVERNANCE_WEIGHTS_BP[c]))).toEqual([
      "0.4",
      "0.25",
      "0.2",
      "0.1",
      "0.05",
    ]);
    expect(bpToDecimalString(10_000)).toBe("1");
  });
});
