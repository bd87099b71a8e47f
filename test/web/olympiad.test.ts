import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Catalog } from "../../src/catalog/service.js";
import { CHARTER } from "../../src/olympiad/documents/olympiad-record.js";
import { EVENTS, FAMILIES } from "../../src/olympiad/events/events.js";
import { type TestApp, testApp } from "../support/app.js";

const YEAR = new Date().getUTCFullYear();
/** A registration date after today: the page must say registration is not open yet. */
const OPENS = new Date(Date.now() + 3 * 86_400_000).toISOString().slice(0, 10);

describe("/olympiad page (server-rendered from the services)", () => {
  let t: TestApp;
  const page = async () => {
    const r = await t.app.inject({ method: "GET", url: "/olympiad", headers: { accept: "text/html" } });
    expect(r.statusCode).toBe(200);
    expect(r.headers["content-type"]).toContain("text/html");
    expect(r.headers["cache-control"]).toBe("no-cache");
    return r.body;
  };

  beforeAll(async () => {
    // a changed catalog price must show: nothing on the page is hard-coded
    t = await testApp(
      "sqlite",
      { OLYMPIAD_SEASON_YEAR: String(YEAR), OLYMPIAD_REGISTRATION_OPENS: OPENS },
      { catalog: new Catalog().withPrice("gao-entry", 250) },
    );
  });
  afterAll(async () => t?.close());

  it("shows the season, calendar, events, charter and entry from the services", async () => {
    const html = await page();
    expect(html).toContain(`<title>Great Agentic Olympiad: season ${YEAR} · Lab Phi</title>`);
    expect(html).toMatch(
      /<meta name="description" content="GAO season \d{4}: calendar, 40 events in 8 families, entry at \$2\.50/,
    );
    // season and registration state (the configured date)
    expect(html).toContain(`<h2 id="season-h">Season ${YEAR}</h2>`);
    expect(html).toContain('id="registration-state">Not open yet</span>');
    expect(html).toContain(`opens on <strong>${OPENS}</strong>`);
    // calendar: four quarters with their dates for the season year
    for (const q of ["Q1", "Q2", "Q3", "Q4"]) expect(html).toContain(`<h3>${q} `);
    expect(html).toContain(`${YEAR}-01-01 – ${YEAR}-03-31`);
    expect(html).toContain(`${YEAR}-10-01 – ${YEAR}-12-31`);
    expect(html).toContain("Archive, governance and prizes");
    // events: a card per family, every event once
    expect(html.match(/<article class="card family"/g)).toHaveLength(FAMILIES.length);
    for (const ev of EVENTS) expect(html).toContain(`<strong>${ev.name.replace(/&/g, "&amp;")}</strong>`);
    // the charter in short
    for (const c of CHARTER) expect(html).toContain(`<strong>${c.section} ${c.title}.</strong>`);
    // entry: the catalog's price and the card checkout
    expect(html).toContain('<p class="price" id="entry-price">$2.50 <small>');
    expect(html).toContain('href="/pay?sku=gao-entry"');
    expect(html).toContain("access URL");
    // the action panels wait for the script; nothing inline
    expect(html).toMatch(/<div id="actions" class="stack" hidden>/);
    expect(html).toMatch(/<script type="module" src="\/assets\/olympiad-[A-Za-z0-9_-]+\.js"><\/script>/);
    expect(html).not.toMatch(/\sstyle=/);
    expect(html).not.toMatch(/\son[a-z]+=/);
    const data = JSON.parse(
      /<script type="application\/json" id="olympiad-data">([^<]*)<\/script>/.exec(html)?.[1] ?? "{}",
    );
    expect(data.labels.constituency.team_captains).toBe("Team captains");
    expect(data.pollSeconds).toBeGreaterThan(0);
    expect(html).toContain('id="no-proposals"');
  });

  it("lists proposals with their live weighted tally (escaped), as the governance view computes it", async () => {
    // The proposal and its two votes are written as the governance service writes them (who may
    // propose and vote is test/olympiad/governance.test.ts's matter; this test is about the page).
    const db = t.app.services.governance.db;
    const now = new Date();
    const at = now.toISOString();
    const proposal = { proposal_id: "prop_page_relay" };
    await db
      .insertInto("olympiad_proposals")
      .values({
        id: proposal.proposal_id,
        kind: "new_games",
        title: "Add <b>relay</b> sprint",
        body: "Why & how",
        proposer_id: "par_ada",
        opens_at: at,
        closes_at: new Date(now.getTime() + 72 * 3_600_000).toISOString(),
        state: "open",
        outcome: null,
        tally: null,
        created_at: at,
      })
      .execute();
    await db
      .insertInto("olympiad_votes")
      .values([
        {
          proposal_id: proposal.proposal_id,
          voter_id: "par_ada",
          choice: "yes",
          constituency: "team_captains",
          cast_at: at,
          updated_at: at,
        },
        {
          proposal_id: proposal.proposal_id,
          voter_id: "par_bot",
          choice: "no",
          constituency: "public_community",
          cast_at: at,
          updated_at: at,
        },
      ])
      .execute();
    const vote = (await t.app.inject({ method: "GET", url: `/api/olympiad/proposals/${proposal.proposal_id}` })).json();

    const html = await page();
    const start = html.indexOf(`id="proposal-${proposal.proposal_id}"`);
    expect(start).toBeGreaterThan(0);
    const card = html.slice(start, html.indexOf("</article>", start));
    expect(card).toContain("Add &lt;b&gt;relay&lt;/b&gt; sprint");
    expect(card).not.toContain("<b>relay");
    expect(card).toContain("Why &amp; how");
    // captains 1 yes, community 1 no: mixed = 4000 / 6000 = 66.6 %
    expect(vote.tally.mixed_yes_ppm).toBe(666_666);
    expect(card).toContain("Mixed yes: 66.6 %");
    expect(card).toContain("(passes when more than 50 %)");
    expect(card).toContain("Voters 2 of 5 needed for quorum · 2 constituencies with a decisive vote (1 needed)");
    expect(card).toContain('data-outcome="no_quorum">If it closed now: no quorum');
    expect(card).toMatch(/data-constituency="team_captains">[\s\S]*?1 yes · 0 no · 0 abstain · 100\.0 % yes/);
    expect(card).toMatch(/data-constituency="public_community">[\s\S]*?0 yes · 1 no · 0 abstain · 0\.0 % yes/);
    expect(card).toMatch(/data-constituency="lab_stewards">[\s\S]*?empty: weight shared out/);
    // the mixed bar: width from the tally, the threshold marked at 50 %
    expect(card).toContain(
      '<rect class="fill mixed" x="0" y="0" width="66.67" height="10"/><rect class="mark" x="49.60"',
    );
    expect(card).toContain('data-vote="yes"');
    expect(html).toContain("1 open · 0 closed");
  });
});
