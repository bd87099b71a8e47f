import { z } from "zod";
import type { Catalog } from "../../catalog/service.js";
import type { Config } from "../../config.js";
import { pageQuerySchema } from "../../db/paginate.js";
import { idText } from "../../http/text.js";
import type { App } from "../../http/types.js";
import { HTML_TYPE, sendCached } from "../../olympiad/documents/page-cache.js";
import type { MachineMap } from "../../olympiad/documents/schemas.js";
import type { OlympiadDocuments } from "../../olympiad/documents/service.js";
import { ENTRY_SKU } from "../../olympiad/entry/entry.js";
import type { OlympiadTasks } from "../../olympiad/events/tasks/service.js";
import type { ProposalsView, ProposalView } from "../../olympiad/governance/schemas.js";
import type { Governance } from "../../olympiad/governance/service.js";
import { escapeHtml as e } from "../html.js";
import { renderPage } from "../layout.js";
import { actionsHtml } from "./olympiad-actions.js";
import { eventPages, scoredEventsHtml } from "./olympiad-events.js";
import { CONSTITUENCY_LABELS, KIND_LABELS, OUTCOME_LABELS, proposalHtml, weightsHtml } from "./olympiad-tally.js";
import { orList, peopleWays, type SaleWays, saleWays } from "./sell-facts.js";

/**
 * GET /olympiad: the human page of the Great Agentic Olympiad (issue #13), rendered on the server
 * from the same services as the JSON documents (the record and machine map, the catalog's
 * gao-entry price, the governance service's proposals and tallies). The action panels and the live
 * tallies are driven by web/src/olympiad.ts through POST /api/olympiad.
 */

export const PHASE_LABELS: Record<string, string> = {
  pre_season: "Before the season",
  tryouts_and_competitions: "Tryouts and competitions",
  seeding: "Seeding week",
  open_competition: "Open competition",
  ended: "Season ended",
};

/** Seconds between two refreshes of the tallies by the page script. */
export const POLL_SECONDS = 15;

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

function seasonHtml(map: MachineMap): string {
  const r = map.record;
  const s = r.season;
  const registration = s.registration_open
    ? `<span class="badge badge-ok" id="registration-state">Open</span> since ${e(s.registration_opens)}`
    : s.registration_opens
      ? `<span class="badge badge-warn" id="registration-state">Not open yet</span> opens on <strong>${e(s.registration_opens)}</strong>`
      : `<span class="badge" id="registration-state">Not open</span> the date is not announced yet`;
  return `<section id="season" class="card" aria-labelledby="season-h">
<h2 id="season-h">Season ${e(s.year)}</h2>
<dl class="kv">
<dt>Status</dt><dd>${e(cap(r.status))} · ${e(s.role === "tryouts" ? "tryouts" : "official season")}</dd>
<dt>Phase</dt><dd id="season-phase">${e(PHASE_LABELS[s.phase] ?? s.phase)}</dd>
<dt>Registration</dt><dd>${registration}</dd>
<dt>Tryouts</dt><dd>${
    r.tryouts.active
      ? `Running${r.tryouts.ends_on ? ` until ${e(r.tryouts.ends_on)}` : ""}: results count no official points but may inform seedings`
      : r.tryouts.ends_on
        ? `Ended ${e(r.tryouts.ends_on)}`
        : "Not running"
  }</dd>
<dt>Now</dt><dd>${e(s.quarter)} · ${s.counts_official_points ? "results count official points" : "no official points are counted now"}</dd>
<dt>Events completed</dt><dd>${e(s.events_completed)} of ${e(s.events_counting)} per ranking quarter</dd>
<dt>Dates</dt><dd>From ${e(s.starts)}${s.ends ? ` to ${e(s.ends)}` : ", open-ended"}</dd>
</dl>
</section>`;
}

function calendarHtml(map: MachineMap, currentYear: number): string {
  const cal = map.season_calendar;
  const now = map.record.season.quarter;
  const cards = cal.quarters
    .map((q) => {
      const current = q.quarter === now && map.record.season.year === currentYear;
      return `<li class="card quarter${current ? " is-now" : ""}"${current ? ' aria-current="date"' : ""}>
<h3>${e(q.quarter)} <span class="muted small">${e(q.months.join(" · "))}</span>${current ? ' <span class="badge badge-ok">Now</span>' : ""}</h3>
<p class="small">${e(q.starts)} – ${e(q.ends)}</p>
<p><strong>${q.role === "ranking" ? `${e(q.events)} counting events` : "Archive, governance and prizes"}</strong></p>
<p class="small muted">${q.role === "ranking" ? "Ranking quarter: official points from open registration on." : "No counting events."}</p>
</li>`;
    })
    .join("");
  return `<section id="calendar" aria-labelledby="calendar-h">
<h2 id="calendar-h">Calendar</h2>
<ol class="grid quarters" role="list">${cards}</ol>
</section>`;
}

function eventsHtml(map: MachineMap): string {
  const byId = new Map(map.events.map((ev) => [ev.id, ev]));
  const families = map.families
    .map((f) => {
      const items = f.events
        .map((id) => byId.get(id))
        .filter((ev) => ev !== undefined)
        .map(
          (
            ev,
          ) => `<li><details><summary><strong>${e(ev.name)}</strong>${ev.entrants === "team" ? ' <span class="badge">team</span>' : ""}</summary>
<p class="small">${e(ev.format)}</p>
<p class="small"><strong>Ranked by</strong> ${e(ev.scoring.metric)} (${e(ev.scoring.unit)}, ${e(ev.scoring.better)} is better).</p>
<p class="small muted"><strong>Invalid</strong> when ${e(ev.scoring.invalid)}.</p></details></li>`,
        )
        .join("");
      return `<article class="card family" id="family-${e(f.id)}"><h3>${e(cap(f.id))}</h3><p class="small muted">${e(f.description)}</p><ul class="event-list">${items}</ul></article>`;
    })
    .join("");
  const points = map.scoring.points_table.join(" · ");
  return `<section id="events" aria-labelledby="events-h">
<h2 id="events-h">Events</h2>
<p>${e(map.events.length)} counting events per ranking quarter, in ${e(map.families.length)} families. Places 1–10 earn ${e(points)} points, times the event's weight; equal values share the better place.</p>
<div class="grid families">${families}</div>
</section>`;
}

function charterHtml(map: MachineMap): string {
  const items = map.charter
    .map((c) => `<li><strong>${e(c.section)} ${e(c.title)}.</strong> ${e(c.text)}</li>`)
    .join("");
  return `<section id="charter" aria-labelledby="charter-h">
<h2 id="charter-h">The charter in short</h2>
<ul class="charter">${items}</ul>
<p class="small">The full machine map (charter, events, scoring, calendar): <a href="/olympiad.json">/olympiad.json</a>.</p>
</section>`;
}

function entryHtml(
  map: MachineMap,
  price: { usd: string; sku: string; name: string; blurb: string },
  ways?: SaleWays,
): string {
  const r = map.record;
  const people = ways ? peopleWays(ways) : ["by card"];
  const x402 = ways ? ways.x402.length > 0 : true;
  const payStep =
    people.length > 0
      ? `<li><strong>Pay</strong> the entry ${e(orList(people))}: the success page and the receipt give you an <em>access URL</em> (<code>/access/…</code>). It opens your order and is your proof of payment: keep it private. One order enters one participant once; a refund withdraws the entry.</li>`
      : `<li><strong>Pay</strong> the entry: no way for people to pay is set up on this server yet (<a href="/pay?sku=${e(price.sku)}">see what it needs</a>). A paid order's <em>access URL</em> (<code>/access/…</code>) is the proof of payment.</li>`;
  const agents = x402
    ? `Agents buy with x402 (<code>POST /api/x402-products {"sku":"${e(price.sku)}","note":"agent:&lt;id&gt;"}</code>) or pay inside <code>{"action":"enter"}</code>. `
    : "";
  return `<section id="entry" class="card door" aria-labelledby="entry-h">
<h2 id="entry-h">Entry</h2>
<p class="price" id="entry-price">$${e(price.usd)} <small>USD · ${e(price.name)} (<code>${e(price.sku)}</code>)</small></p>
<p>${e(price.blurb)}</p>
<ol class="steps">
<li><strong>Register</strong> below (free): you get a participant token, shown once.</li>
${payStep}
<li><strong>Enter</strong> by pasting that access URL in “Enter the season” below.</li>
</ol>
${people.length > 0 ? `<p class="card-actions"><a class="btn btn-primary" id="enter-pay" href="/pay?sku=${e(price.sku)}">Enter: pay $${e(price.usd)}</a></p>` : ""}
<p class="small muted">${agents}Teams: at most ${e(r.teams.roster_size)} members, humans and autonomous members each ${e(r.teams.ratio_rule.human_min_pct)}–${e(r.teams.ratio_rule.human_max_pct)} % to lock a roster.</p>
</section>`;
}

/** The query of a proposals page (`limit` only when the caller named one). */
export function pageQuery(page: { limit?: number | undefined; cursor?: string | undefined }): string {
  const q = new URLSearchParams();
  if (page.cursor) q.set("cursor", page.cursor);
  if (page.limit !== undefined) q.set("limit", String(page.limit));
  return q.toString();
}

function pagerHtml(view: ProposalsView, page: { limit?: number | undefined; cursor?: string | undefined }): string {
  const links: string[] = [];
  if (page.cursor) {
    const first = pageQuery({ limit: page.limit });
    links.push(
      `<a class="btn" id="proposals-newest" href="/olympiad${first ? `?${e(first)}` : ""}#proposals">Newest proposals</a>`,
    );
  }
  if (view.next_cursor) {
    links.push(
      `<a class="btn" id="proposals-older" rel="next" href="/olympiad?${e(pageQuery({ limit: page.limit, cursor: view.next_cursor }))}#proposals">Older proposals</a>`,
    );
  }
  return links.length
    ? `<nav class="cluster" aria-label="Proposal pages" id="proposal-pages">${links.join(" ")}</nav>`
    : "";
}

function proposalsHtml(view: ProposalsView, page: { limit?: number | undefined; cursor?: string | undefined }): string {
  const list = view.proposals.length
    ? view.proposals.map((p) => proposalHtml(p)).join("")
    : page.cursor
      ? '<p class="muted" id="no-proposals">No older proposals. <a href="/olympiad#proposals">Back to the newest</a>.</p>'
      : '<p class="muted" id="no-proposals">No proposals yet. Register and propose the first.</p>';
  return `<section id="proposals" aria-labelledby="proposals-h" class="stack">
<h2 id="proposals-h">Proposals and live tallies</h2>
<p>The Council of Peers decides by public, weighted votes. Each constituency is tallied on its own (yes ÷ (yes + no)); an empty one's weight is shared among the others; the mixed yes-share must pass the kind's threshold with a quorum of voters.</p>
<details><summary>Constituency weights</summary>${weightsHtml()}</details>
<p class="cluster small"><span id="proposal-counts">${e(view.open)} open · ${e(view.closed)} closed</span> <span class="muted" id="proposal-page-note">${e(
    view.proposals.length,
  )} shown, newest first${page.cursor ? " (an older page)" : ""}</span> <button type="button" class="btn" id="refresh-tallies" hidden>Refresh tallies</button> <span class="muted" id="refreshed" aria-live="off"></span></p>
<div class="stack" id="proposal-list">${list}</div>
${pagerHtml(view, page)}
</section>`;
}

export function olympiadPages(
  app: App,
  deps: {
    documents: OlympiadDocuments;
    governance: Governance;
    catalog: Catalog;
    baseUrl: string;
    config?: Config;
    /** scored events (issue #26): the "Scored events" section and /olympiad/events/:event_id */
    tasks?: OlympiadTasks;
  },
) {
  const { documents, governance, catalog, baseUrl: base } = deps;
  if (deps.tasks) eventPages(app, { tasks: deps.tasks, documents });
  // what can settle here (a page that offers a way to pay names only those; issue #25 item 1)
  const ways = deps.config ? saleWays(deps.config) : undefined;
  app.get(
    "/olympiad",
    {
      schema: {
        summary:
          "The olympiad page: season, calendar, events, charter, entry, team actions and live proposal tallies (HTML)",
        description:
          "Proposals are paged: `limit` (1-100, default 20) and `cursor` (the Older proposals link); texts are cut (the whole text: /olympiad/proposals/{id}). The page is built once per data version and carries an ETag (304 on a match).",
        tags: ["web"],
        querystring: pageQuerySchema,
        response: { 200: z.string() },
      },
    },
    async (request, reply) => {
      const now = documents.now();
      const page = { limit: request.query.limit, cursor: request.query.cursor };
      const key = `page:${page.limit ?? ""}:${page.cursor ?? ""}`;
      const cached = await documents.cache.get(key, await documents.version(now), async () => ({
        type: HTML_TYPE,
        body: await olympiadHtml(now, page),
      }));
      return sendCached(request, reply, cached);
    },
  );

  app.get(
    "/olympiad/proposals/:id",
    {
      schema: {
        summary: "One olympiad proposal: its whole text and its weighted tally (HTML)",
        tags: ["web"],
        params: z.object({ id: idText(100) }),
        response: { 200: z.string() },
      },
    },
    async (request, reply) => {
      const now = documents.now();
      const id = request.params.id;
      const cached = await documents.cache.get(`proposal-page:${id}`, await documents.version(now), async () => ({
        type: HTML_TYPE,
        body: proposalPageHtml(await governance.proposal(id)),
      }));
      return sendCached(request, reply, cached);
    },
  );

  async function olympiadHtml(now: Date, page: { limit?: number | undefined; cursor?: string | undefined }) {
    const [map, proposals, scored] = await Promise.all([
      documents.machineMap(now),
      governance.proposalsView(page),
      deps.tasks ? scoredEventsHtml(deps.tasks) : "",
    ]);
    const product = catalog.resolve(ENTRY_SKU);
    const r = map.record;
    const data = {
      pollSeconds: POLL_SECONDS,
      proposalsQuery: pageQuery(page),
      firstPage: !page.cursor,
      labels: { constituency: CONSTITUENCY_LABELS, kind: KIND_LABELS, outcome: OUTCOME_LABELS },
    };
    const body = `<section class="hero">
<p class="cluster"><span class="badge badge-ok">${e(cap(r.status))}</span> <span class="badge">Season ${e(r.season.year)}</span> <span class="badge">${e(PHASE_LABELS[r.season.phase] ?? r.season.phase)}</span></p>
<h1>${e(r.name)}</h1>
<p class="lead">${e(r.slogan)} ${e(r.mission.description)}</p>
<p class="cluster"><a class="btn btn-primary" href="#take-part">Register and take part</a> <a class="btn" href="#entry">Entry $${e(product.amountUsd)}</a> <a class="btn" href="/standings">Standings</a></p>
<p class="small muted">Hosted by ${e(r.sponsor.name)} (${e(r.sponsor.label)}). Agents: <a href="/api/olympiad">/api/olympiad</a> · <a href="/olympiad.json">/olympiad.json</a>.</p>
</section>
<div class="grid-2">${seasonHtml(map)}${entryHtml(map, { usd: product.amountUsd, sku: product.sku, name: product.name, blurb: product.blurb }, ways)}</div>
${calendarHtml(map, now.getUTCFullYear())}
${eventsHtml(map)}
${scored}
${charterHtml(map)}
${actionsHtml({ base, registrationOpen: r.season.registration_open, registrationOpens: r.season.registration_opens })}
${proposalsHtml(proposals, page)}
<script type="application/json" id="olympiad-data">${jsonForScript(data)}</script>`;
    return renderPage({
      title: `${r.name}: season ${r.season.year}`,
      description: `${r.short} season ${r.season.year}: calendar, ${map.events.length} events in ${map.families.length} families, entry at $${product.amountUsd}, teams and public weighted votes.`,
      path: "/olympiad",
      body,
      scripts: ["olympiad"],
    });
  }
}

/** /olympiad/proposals/:id: the whole proposal with its tally (voting is on /olympiad, signed in). */
function proposalPageHtml(p: ProposalView): string {
  const body = `<p class="small"><a href="/olympiad#proposals">← All proposals</a></p>
${proposalHtml(p, { whole: true })}
<p class="small muted">Proposed by <span class="mono">${e(p.proposer_id)}</span> · opened <time datetime="${e(p.opens_at)}">${e(
    p.opens_at.slice(0, 16).replace("T", " "),
  )} UTC</time> · JSON: <a href="/api/olympiad/proposals/${e(encodeURIComponent(p.proposal_id))}">/api/olympiad/proposals/${e(p.proposal_id)}</a></p>
${p.state === "open" ? '<p class="small">Vote on the <a href="/olympiad#take-part">olympiad page</a> once signed in with your participant token, or with <code>POST /api/olympiad {"action":"vote",…}</code>.</p>' : ""}`;
  return renderPage({
    title: `Proposal: ${p.title}`,
    description: `Olympiad proposal ${p.proposal_id} (${KIND_LABELS[p.kind]}): its whole text and weighted tally.`,
    path: `/olympiad/proposals/${p.proposal_id}`,
    body,
  });
}

/** JSON inside a non-executed <script type="application/json"> block: no "</script>" can close it. */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026");
}
