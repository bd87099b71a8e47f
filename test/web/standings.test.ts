import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENTS } from "../../src/olympiad/events/events.js";
import { type TestApp, testApp } from "../support/app.js";

const ADMIN_TOKEN = "admin-token-for-standings-page-0123";
const ENV = { ADMIN_TOKEN, OLYMPIAD_SEASON_YEAR: "2026", OLYMPIAD_REGISTRATION_OPENS: "2026-01-08" };
/** Q3 2026, registration open: official results of Q1–Q3 may be recorded. */
const NOW = new Date("2026-08-15T12:00:00Z");
const higher = EVENTS.filter((e) => e.entrants === "individual" && e.scoring.better === "higher").map((e) => e.id);
const evidence = { url: "https://evidence.example/heat" };

describe("/standings page (server-rendered)", () => {
  let t: TestApp;
  const page = async () => {
    const r = await t.app.inject({ method: "GET", url: "/standings", headers: { accept: "text/html" } });
    expect(r.statusCode).toBe(200);
    expect(r.headers["content-type"]).toContain("text/html");
    return r.body;
  };
  const json = async () => (await t.app.inject({ method: "GET", url: "/standings.json" })).json();
  const register = async (name: string, agent: string) => {
    const r = await t.app.inject({
      method: "POST",
      url: "/api/olympiad",
      payload: { action: "register", who: "agent_self", name, agent_id: agent },
    });
    expect(r.statusCode, r.body).toBe(201);
    return r.json().participant_id as string;
  };
  const record = async (payload: Record<string, unknown>) => {
    const r = await t.app.inject({
      method: "POST",
      url: "/api/admin/olympiad/results",
      payload,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(r.statusCode, r.body).toBe(201);
  };

  beforeAll(async () => {
    t = await testApp("sqlite", ENV);
    t.app.services.olympiadRecords.now = () => NOW;
  });
  afterAll(async () => t?.close());

  it("an empty season shows a clear empty state, the genesis head and how to verify", async () => {
    const html = await page();
    expect(html).toContain("<title>Standings: season 2026 · Lab Phi</title>");
    expect(html).toMatch(/<meta name="description" content="[^"]+">/);
    expect(html).toContain('id="standings-empty"');
    expect(html).toContain("No official results yet");
    expect(html).not.toContain('id="standings-chart"');
    expect(html).not.toContain('id="standings-table"');
    expect(html).toContain(`<code id="head-hash" class="hash">${"0".repeat(64)}</code>`);
    expect(html).toContain('<strong id="head-seq">0</strong>');
    expect(html).toContain("labphi verify-standings http://lab.test/standings.json");
    expect(html).toContain('href="/standings.json"');
    expect(html).not.toMatch(/\sstyle=/);
    expect(html).not.toMatch(/<script(?![^>]*type="application\/json")[^>]*>[^<]+<\/script>/);
  });

  it("with recorded results: the table in the document's order, the chart, medals, seeding and the same chain head", async () => {
    const ada = await register("Ada <Lovelace>", "ada-1");
    const bob = await register("Bob", "bob-1");
    const cy = await register("Cy", "cy-1");
    await record({
      event_id: higher[0],
      quarter: "Q1",
      results: [
        { participant_id: ada, score: 90 },
        { participant_id: bob, score: 80 },
        { participant_id: cy, score: 70 },
      ],
      evidence,
    });
    await record({
      event_id: higher[1],
      quarter: "Q2",
      results: [
        { participant_id: ada, score: 5 },
        { participant_id: bob, score: 4 },
      ],
      evidence,
    });
    await record({ event_id: higher[2], quarter: "tryouts", results: [{ participant_id: cy, score: 1 }], evidence });

    const doc = await json();
    const html = await page();
    // the proof: the head of /standings.json
    expect(doc.head.seq).toBe(3);
    expect(html).toContain(`<code id="head-hash" class="hash">${doc.head.hash}</code>`);
    expect(html).toContain('<strong id="head-seq">3</strong>');
    // the table: one row per standing, in order, with points and names (escaped)
    const table = html.slice(
      html.indexOf('id="standings-table"'),
      html.indexOf("</table>", html.indexOf('id="standings-table"')),
    );
    const rows = [
      ...table.matchAll(/<tr data-entrant="([^"]+)">[\s\S]*?<td class="num"><strong>(\d+)<\/strong><\/td>/g),
    ].map((m) => [m[1], Number(m[2])]);
    expect(rows).toEqual(doc.standings.map((r: { entrant: string; points: number }) => [r.entrant, r.points]));
    expect(rows[0]).toEqual([ada, 25 + 25]);
    expect(html).toContain("Ada &lt;Lovelace&gt;");
    expect(html).not.toContain("Ada <Lovelace>");
    expect(table).toContain('class="badge medal medal-gold">Gold<');
    expect(table).toContain('class="badge medal medal-bronze">Bronze<');
    // the chart: one bar per entry, widths proportional to points
    const chart = html.slice(
      html.indexOf('id="standings-chart"'),
      html.indexOf("</svg>", html.indexOf('id="standings-chart"')),
    );
    const widths = [...chart.matchAll(/<rect class="bar" x="\d+" y="\d+" width="(\d+)"/g)].map((m) => Number(m[1]));
    expect(widths).toHaveLength(doc.standings.length);
    expect(widths[0]).toBeGreaterThan(widths[1] as number);
    expect(widths[0]).toBe(480 - 150 - 44);
    expect(chart).toContain(`${ada}`);
    // tryouts are listed apart, with no official points
    expect(html).toContain('id="seeding-table"');
    expect(html).not.toContain('id="standings-empty"');
  });

  it("pages the seeding table (20 a page, by cursor) and revalidates pages and documents by ETag", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) ids.push(await register(`Seed ${i}`, `seed-${i}`));
    const before = await t.app.inject({ method: "GET", url: "/standings.json" });
    const etag = before.headers.etag as string;
    expect(etag).toMatch(/^"/);
    expect(before.headers["cache-control"]).toBe("public, max-age=30");
    expect(
      (await t.app.inject({ method: "GET", url: "/standings.json", headers: { "if-none-match": etag } })).statusCode,
    ).toBe(304);
    await record({
      event_id: higher[3],
      quarter: "tryouts",
      results: ids.map((id, i) => ({ participant_id: id, score: 100 - i })),
      evidence,
    });
    // a new entry on the chain: a new document, a new ETag
    const after = await t.app.inject({ method: "GET", url: "/standings.json", headers: { "if-none-match": etag } });
    expect(after.statusCode).toBe(200);
    expect(after.json().seeding.length).toBe(26);
    const html = await page();
    const seedingTable = (h: string) =>
      h.slice(h.indexOf('id="seeding-table"'), h.indexOf("</table>", h.indexOf('id="seeding-table"')));
    expect(seedingTable(html).match(/<tr data-entrant=/g)).toHaveLength(20);
    const more = /id="seeding-more" rel="next" href="\/standings\?cursor=([A-Za-z0-9_-]+)#seeding"/.exec(html);
    expect(more).not.toBeNull();
    const next = (await t.app.inject({ method: "GET", url: `/standings?cursor=${more?.[1]}` })).body;
    expect(seedingTable(next).match(/<tr data-entrant=/g)).toHaveLength(6);
    expect(next).toContain('id="seeding-first"');
    expect(next).not.toContain('id="seeding-more"');
    const pageEtag = (await t.app.inject({ method: "GET", url: "/standings" })).headers.etag as string;
    expect(
      (await t.app.inject({ method: "GET", url: "/standings", headers: { "if-none-match": pageEtag } })).statusCode,
    ).toBe(304);
    const bad = await t.app.inject({
      method: "GET",
      url: "/standings?cursor=bm9wZQ",
      headers: { accept: "application/json" },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe("invalid_cursor");
  });
});
