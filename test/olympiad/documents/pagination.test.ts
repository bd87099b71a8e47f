import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../../src/db/database.js";
import type { App } from "../../../src/http/types.js";
import { appOn } from "../../support/app.js";
import { ENGINES, freshDatabase } from "../../support/databases.js";

/**
 * Issue #21 item 5 "Lists are bounded": the proposals view and the /olympiad page answer one page
 * (default 20, at most 100) by a stable cursor, texts cut (the whole text on the proposal's own
 * page), and every page and view is built once per data version with its ETag: a write by another
 * instance (here: straight into the shared database, which the serving app cannot see in-process)
 * changes the version, the page and the ETag.
 */

const HOUR = 3_600_000;
const LONG = `${"A long proposal text. ".repeat(60)}THE END`; // 1,327 characters

describe.each(ENGINES)("olympiad lists are bounded and cached (%s)", (engine) => {
  let db: Db;
  let app: App;
  let seq = 0;
  const base = Date.now() - 100 * HOUR;

  /** A proposal written straight into the database (as another instance, or a fixture, would). */
  async function insert(body = `Proposal text ${seq}`, opensAt?: string): Promise<string> {
    seq++;
    const id = `prop_page_${String(seq).padStart(4, "0")}`;
    const at = opensAt ?? new Date(base + seq * 1000).toISOString();
    await db.kysely
      .insertInto("olympiad_proposals")
      .values({
        id,
        kind: "new_games",
        title: `Proposal number ${seq}`,
        body,
        proposer_id: "par_fixture",
        opens_at: at,
        closes_at: new Date(Date.now() + 48 * HOUR).toISOString(),
        state: "open",
        outcome: null,
        tally: null,
        created_at: at,
      })
      .execute();
    return id;
  }

  const get = (url: string, headers: Record<string, string> = {}) => app.inject({ method: "GET", url, headers });
  const view = async (query = "") => {
    const r = await get(`/api/olympiad?view=proposals${query}`);
    expect(r.statusCode, r.body).toBe(200);
    return r.json() as {
      open: number;
      closed: number;
      limit: number;
      next_cursor: string | null;
      proposals: { proposal_id: string; body: string; body_truncated: boolean; url: string; page: string }[];
    };
  };

  let longId: string;
  beforeAll(async () => {
    ({ db } = await freshDatabase(engine));
    app = await appOn(db, { RATE_LIMIT_ENABLED: "false" });
    for (let i = 0; i < 44; i++) await insert();
    longId = await insert(LONG);
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it("the proposals view answers 20 by default, newest first, and counts all of them", async () => {
    const v = await view();
    expect(v.proposals).toHaveLength(20);
    expect(v.limit).toBe(20);
    expect(v.open).toBe(45);
    expect(v.closed).toBe(0);
    expect(v.next_cursor).toEqual(expect.any(String));
    expect(v.proposals[0]?.proposal_id).toBe(longId);
    expect(v.proposals[1]?.proposal_id).toBe("prop_page_0044");
  });

  it("cuts long texts in the list and gives the whole text on the proposal's own page and answer", async () => {
    const item = (await view()).proposals[0];
    expect(item?.body_truncated).toBe(true);
    expect(Array.from(item?.body ?? "").length).toBeLessThanOrEqual(280);
    expect(item?.body.endsWith("…")).toBe(true);
    expect(item?.url).toBe(`/api/olympiad/proposals/${longId}`);
    expect(item?.page).toBe(`/olympiad/proposals/${longId}`);
    const whole = await get(`/api/olympiad/proposals/${longId}`);
    expect(whole.statusCode).toBe(200);
    expect(whole.json().body).toBe(LONG);
    const short = (await view()).proposals[1];
    expect(short?.body_truncated).toBe(false);
    expect(short?.body).toBe("Proposal text 43");
  });

  it("follows next_cursor through every proposal once, and never answers more than 100", async () => {
    const seen: string[] = [];
    let cursor: string | null = "";
    let pages = 0;
    while (cursor !== null && pages < 10) {
      const v = await view(cursor ? `&cursor=${cursor}` : "");
      seen.push(...v.proposals.map((p) => p.proposal_id));
      cursor = v.next_cursor;
      pages++;
    }
    expect(pages).toBe(3);
    expect(seen).toHaveLength(45);
    expect(new Set(seen).size).toBe(45);
    expect((await view("&limit=100")).proposals).toHaveLength(45);
    expect((await view("&limit=7")).proposals).toHaveLength(7);
    for (const bad of ["&limit=101", "&limit=0", "&limit=-1", "&limit=abc"]) {
      const r = await get(`/api/olympiad?view=proposals${bad}`);
      expect(r.statusCode, bad).toBe(400);
    }
    for (const bad of ["abc", Buffer.from('["x"]').toString("base64url"), Buffer.from("{}").toString("base64url")]) {
      const r = await get(`/api/olympiad?view=proposals&cursor=${bad}`);
      expect(r.statusCode, bad).toBe(400);
      expect(r.json().code).toBe("invalid_cursor");
    }
  });

  it("a cursor is stable: a proposal made meanwhile neither repeats nor hides a row of the next page", async () => {
    const first = await view("&limit=10");
    const expected = (await view("&limit=20")).proposals.slice(10).map((p) => p.proposal_id);
    await insert("made while a reader was on page 1", new Date(Date.now()).toISOString());
    const second = await view(`&limit=10&cursor=${first.next_cursor}`);
    expect(second.proposals.map((p) => p.proposal_id)).toEqual(expected);
  });

  it("caches the view with its ETag: 304 while unchanged; a write by another instance changes it", async () => {
    const a = await get("/api/olympiad?view=proposals");
    const etag = a.headers.etag as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(a.headers["cache-control"]).toBe("no-cache");
    const same = await get("/api/olympiad?view=proposals", { "if-none-match": etag });
    expect(same.statusCode).toBe(304);
    expect(same.body).toBe("");
    // another instance writes: a proposal (this app's process never hears of it)
    const id = await insert("from another instance", new Date(Date.now() + 1000).toISOString());
    const after = await get("/api/olympiad?view=proposals", { "if-none-match": etag });
    expect(after.statusCode).toBe(200);
    expect(after.headers.etag).not.toBe(etag);
    expect(after.json().proposals[0].proposal_id).toBe(id);
    // and a vote (the tally changes)
    const etag2 = after.headers.etag as string;
    await db.kysely
      .insertInto("olympiad_votes")
      .values({
        proposal_id: id,
        voter_id: "par_other_instance",
        choice: "yes",
        constituency: "public_community",
        cast_at: new Date().toISOString(),
        updated_at: new Date().toISOString(),
      })
      .execute();
    const voted = await get("/api/olympiad?view=proposals", { "if-none-match": etag2 });
    expect(voted.statusCode).toBe(200);
    expect(voted.json().proposals[0].tally.voters).toBe(1);
    const one = await get(`/api/olympiad/proposals/${id}`);
    expect(one.json().tally.voters).toBe(1);
    expect(
      (await get(`/api/olympiad/proposals/${id}`, { "if-none-match": one.headers.etag as string })).statusCode,
    ).toBe(304);
  });

  it("a window that ends after the page was built makes it stale: the next read shows the proposal closed", async () => {
    const id = `prop_page_closing_${engine}`;
    const at = new Date(Date.now() + 5000).toISOString();
    await db.kysely
      .insertInto("olympiad_proposals")
      .values({
        id,
        kind: "new_games",
        title: "Closes in a moment",
        body: "soon",
        proposer_id: "par_fixture",
        opens_at: at,
        closes_at: new Date(Date.now() + 1500).toISOString(),
        state: "open",
        outcome: null,
        tally: null,
        created_at: at,
      })
      .execute();
    const open = await get("/api/olympiad?view=proposals");
    expect(open.json().proposals[0]).toMatchObject({ proposal_id: id, state: "open" });
    const etag = open.headers.etag as string;
    await new Promise((r) => setTimeout(r, 1600));
    const closed = await get("/api/olympiad?view=proposals", { "if-none-match": etag });
    expect(closed.statusCode).toBe(200);
    expect(closed.json().proposals[0]).toMatchObject({ proposal_id: id, state: "closed", outcome: "no_quorum" });
  });

  it("builds a page once for concurrent readers while nothing changes", async () => {
    const cache = app.services.olympiad.cache;
    await get("/olympiad");
    const before = cache.builds;
    const answers = await Promise.all(Array.from({ length: 20 }, () => get("/olympiad")));
    expect(answers.every((r) => r.statusCode === 200)).toBe(true);
    expect(new Set(answers.map((r) => r.headers.etag)).size).toBe(1);
    expect(cache.builds).toBe(before);
  });

  it("the /olympiad page lists 20 proposals with cut texts and pages to older ones", async () => {
    const r = await get("/olympiad", { accept: "text/html" });
    expect(r.statusCode).toBe(200);
    const html = r.body;
    expect(html.match(/<article class="card proposal"/g)).toHaveLength(20);
    expect(html).toContain(`data-proposal-id="${longId}"`);
    const card = html.slice(html.indexOf(`id="proposal-${longId}"`));
    expect(card.slice(0, card.indexOf("</article>"))).not.toContain("THE END");
    expect(card).toContain(`href="/olympiad/proposals/${longId}" data-whole>Read the whole proposal</a>`);
    const older = /id="proposals-older" rel="next" href="\/olympiad\?cursor=([A-Za-z0-9_-]+)#proposals"/.exec(html);
    expect(older).not.toBeNull();
    const page2 = (await get(`/olympiad?cursor=${older?.[1]}`, { accept: "text/html" })).body;
    expect(page2.match(/<article class="card proposal"/g)).toHaveLength(20);
    expect(page2).toContain('id="proposals-newest"');
    const data = JSON.parse(/id="olympiad-data">([^<]*)</.exec(page2)?.[1] ?? "{}");
    expect(data).toMatchObject({ firstPage: false, proposalsQuery: `cursor=${older?.[1]}` });
    // 304 on the page's own ETag
    const etag = (await get("/olympiad")).headers.etag as string;
    expect((await get("/olympiad", { "if-none-match": etag })).statusCode).toBe(304);
    expect((await get("/olympiad?limit=101", { accept: "text/html" })).statusCode).toBe(400);
  });

  it("a proposal's own page shows its whole text; an unknown one is 404", async () => {
    const r = await get(`/olympiad/proposals/${longId}`, { accept: "text/html" });
    expect(r.statusCode).toBe(200);
    expect(r.headers["content-type"]).toContain("text/html");
    expect(r.body).toContain("THE END");
    expect(r.body).toContain("<title>Proposal: Proposal number 45 · Lab Phi</title>");
    expect(r.body).not.toMatch(/\sstyle=/);
    const missing = await get("/olympiad/proposals/prop_missing", { accept: "text/html" });
    expect(missing.statusCode).toBe(404);
  });
});
