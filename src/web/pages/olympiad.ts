import { z } from "zod";
import type { Catalog } from "../../catalog/service.js";
import type { App } from "../../http/types.js";
import type { MachineMap } from "../../olympiad/document-schemas.js";
import type { OlympiadDocuments } from "../../olympiad/documents.js";
import { ENTRY_SKU } from "../../olympiad/entry.js";
import type { Governance } from "../../olympiad/governance.js";
import type { ProposalsView } from "../../olympiad/governance-schemas.js";
import { escapeHtml as e } from "../html.js";
import { sendPage } from "../layout.js";
import { actionsHtml } from "./olympiad-actions.js";
import { CONSTITUENCY_LABELS, KIND_LABELS, OUTCOME_LABELS, proposalHtml, weightsHtml } from "./olympiad-tally.js";

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

function entryHtml(map: MachineMap, price: { usd: string; sku: string; name: string; blurb: string }): string {
  const r = map.record;
  return `<section id="entry" class="card door" aria-labelledby="entry-h">
<h2 id="entry-h">Entry</h2>
<p class="price" id="entry-price">$${e(price.usd)} <small>USD · ${e(price.name)} (<code>${e(price.sku)}</code>)</small></p>
<p>${e(price.blurb)}</p>
<ol class="steps">
<li><strong>Register</strong> below (free): you get a participant token, shown once.</li>
<li><strong>Pay</strong> the entry by card: the success page and the receipt give you an <em>access URL</em> (<code>/access/…</code>). It opens your order and is your proof of payment: keep it private. One order enters one participant once; a refund withdraws the entry.</li>
<li><strong>Enter</strong> by pasting that access URL in “Enter the season” below.</li>
</ol>
<p class="card-actions"><a class="btn btn-primary" id="enter-pay" href="/pay?sku=${e(price.sku)}">Enter: pay $${e(price.usd)}</a> <a class="btn" href="/pay/cancel?sku=${e(price.sku)}">Other ways to pay</a></p>
<p class="small muted">Agents buy with x402 (<code>POST /api/x402-products {"sku":"${e(price.sku)}","note":"agent:&lt;id&gt;"}</code>) or pay inside <code>{"action":"enter"}</code>. Teams: at most ${e(r.teams.roster_size)} members, humans and autonomous members each ${e(r.teams.ratio_rule.human_min_pct)}–${e(r.teams.ratio_rule.human_max_pct)} % to lock a roster.</p>
</section>`;
}

function proposalsHtml(view: ProposalsView): string {
  const list = view.proposals.length
    ? view.proposals.map(proposalHtml).join("")
    : '<p class="muted" id="no-proposals">No proposals yet. Register and propose the first.</p>';
  return `<section id="proposals" aria-labelledby="proposals-h" class="stack">
<h2 id="proposals-h">Proposals and live tallies</h2>
<p>The Council of Peers decides by public, weighted votes. Each constituency is tallied on its own (yes ÷ (yes + no)); an empty one's weight is shared among the others; the mixed yes-share must pass the kind's threshold with a quorum of voters.</p>
<details><summary>Constituency weights</summary>${weightsHtml()}</details>
<p class="cluster small"><span id="proposal-counts">${e(view.open)} open · ${e(view.closed)} closed</span> <button type="button" class="btn" id="refresh-tallies" hidden>Refresh tallies</button> <span class="muted" id="refreshed" aria-live="off"></span></p>
<div class="stack" id="proposal-list">${list}</div>
</section>`;
}

export function olympiadPages(
  app: App,
  deps: { documents: OlympiadDocuments; governance: Governance; catalog: Catalog; baseUrl: string },
) {
  const { documents, governance, catalog, baseUrl: base } = deps;
  app.get(
    "/olympiad",
    {
      schema: {
        summary:
          "The olympiad page: season, calendar, events, charter, entry, team actions and live proposal tallies (HTML)",
        tags: ["web"],
        response: { 200: z.string() },
      },
    },
    async (_request, reply) => {
      const now = documents.now();
      const [map, proposals] = await Promise.all([documents.machineMap(now), governance.proposalsView()]);
      const product = catalog.resolve(ENTRY_SKU);
      const r = map.record;
      const data = {
        pollSeconds: POLL_SECONDS,
        labels: { constituency: CONSTITUENCY_LABELS, kind: KIND_LABELS, outcome: OUTCOME_LABELS },
      };
      const body = `<section class="hero">
<p class="cluster"><span class="badge badge-ok">${e(cap(r.status))}</span> <span class="badge">Season ${e(r.season.year)}</span> <span class="badge">${e(PHASE_LABELS[r.season.phase] ?? r.season.phase)}</span></p>
<h1>${e(r.name)}</h1>
<p class="lead">${e(r.slogan)} ${e(r.mission.description)}</p>
<p class="cluster"><a class="btn btn-primary" href="#take-part">Register and take part</a> <a class="btn" href="#entry">Entry $${e(product.amountUsd)}</a> <a class="btn" href="/standings">Standings</a></p>
<p class="small muted">Hosted by ${e(r.sponsor.name)} (${e(r.sponsor.label)}). Agents: <a href="/api/olympiad">/api/olympiad</a> · <a href="/olympiad.json">/olympiad.json</a>.</p>
</section>
<div class="grid-2">${seasonHtml(map)}${entryHtml(map, { usd: product.amountUsd, sku: product.sku, name: product.name, blurb: product.blurb })}</div>
${calendarHtml(map, now.getUTCFullYear())}
${eventsHtml(map)}
${charterHtml(map)}
${actionsHtml({ base, registrationOpen: r.season.registration_open, registrationOpens: r.season.registration_opens })}
${proposalsHtml(proposals)}
<script type="application/json" id="olympiad-data">${jsonForScript(data)}</script>`;
      return sendPage(reply, 200, {
        title: `${r.name}: season ${r.season.year}`,
        description: `${r.short} season ${r.season.year}: calendar, ${map.events.length} events in ${map.families.length} families, entry at $${product.amountUsd}, teams and public weighted votes.`,
        path: "/olympiad",
        body,
        scripts: ["olympiad"],
      });
    },
  );
}

/** JSON inside a non-executed <script type="application/json"> block: no "</script>" can close it. */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026");
}
