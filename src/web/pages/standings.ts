import type { Kysely } from "kysely";
import { z } from "zod";
import {
  decodeCursor,
  encodeCursor,
  invalidCursor,
  type KeysetRequest,
  pageLimit,
  pageQuerySchema,
} from "../../db/paginate.js";
import type { Database } from "../../db/schema.js";
import type { App } from "../../http/types.js";
import { HTML_TYPE, olympiadVersion, PageCache, sendCached } from "../../olympiad/documents/page-cache.js";
import { entrantNames } from "../../olympiad/entry/entrant-names.js";
import type { OlympiadRecords, StandingsDocument } from "../../olympiad/results/service.js";
import type { StandingRow } from "../../olympiad/results/standings.js";
import { escapeHtml as e } from "../html.js";
import { renderPage } from "../layout.js";
import { standingsChart } from "./standings-chart.js";

/**
 * GET /standings: the season's standings as a page (issue #13), rendered on the server from the
 * same document as /standings.json (OlympiadRecords.standingsDocument), so it works without
 * JavaScript and shows the same chain head: the table, a bar chart of the top entries, the proof
 * hash and how to verify it. Entrants are shown by display name and id (the documents use ids).
 */

const MEDAL_LABEL = { gold: "Gold", silver: "Silver", bronze: "Bronze" } as const;

function entrantCell(r: StandingRow, names: Map<string, string>): string {
  const name = names.get(r.entrant);
  return `<td><span class="entrant-name">${e(name ?? r.entrant)}</span> <span class="badge">${r.entrant_kind === "team" ? "team" : "participant"}</span>${
    name ? `<br><span class="mono small muted">${e(r.entrant)}</span>` : ""
  }</td>`;
}

function tableHtml(
  rows: readonly StandingRow[],
  names: Map<string, string>,
  id: string,
  caption: string,
  medals: boolean,
) {
  const body = rows
    .map(
      (r) => `<tr data-entrant="${e(r.entrant)}">
<td class="num">${e(r.rank)}</td>
${entrantCell(r, names)}
<td class="num"><strong>${e(r.points)}</strong></td>
${medals ? `<td>${r.medal ? `<span class="badge medal medal-${e(r.medal)}">${e(MEDAL_LABEL[r.medal])}</span>` : ""}</td>` : ""}
<td class="num">${e(r.golds)}</td><td class="num">${e(r.silvers)}</td><td class="num">${e(r.bronzes)}</td>
<td class="num">${e(r.events)}</td>
</tr>`,
    )
    .join("");
  return `<p class="small muted" id="${e(id)}-note">${e(caption)}</p>
<div class="table-wrap" tabindex="0" role="region" aria-labelledby="${e(id)}-note"><table id="${e(id)}" aria-describedby="${e(id)}-note">
<thead><tr><th scope="col" class="num">Rank</th><th scope="col">Participant or team</th><th scope="col" class="num">Points</th>${
    medals ? '<th scope="col">Medal</th>' : ""
  }<th scope="col" class="num"><abbr title="event wins">1st</abbr></th><th scope="col" class="num"><abbr title="second places">2nd</abbr></th><th scope="col" class="num"><abbr title="third places">3rd</abbr></th><th scope="col" class="num">Events</th></tr></thead>
<tbody>${body}</tbody>
</table></div>`;
}

function proofHtml(doc: StandingsDocument): string {
  return `<section id="proof" class="card" aria-labelledby="proof-h">
<h2 id="proof-h">Proof</h2>
<p>Every result is an entry of the append-only hash chain <code>${e(doc.chain)}</code>; each entry's hash covers the one before it. These standings are a pure function of those entries.</p>
<dl class="kv">
<dt>Chain head</dt><dd>entry <strong id="head-seq">${e(doc.head.seq)}</strong></dd>
<dt>Head hash</dt><dd><code id="head-hash" class="hash">${e(doc.head.hash)}</code></dd>
<dt>Generated</dt><dd><time datetime="${e(doc.generated_at)}">${e(doc.generated_at.slice(0, 19).replace("T", " "))} UTC</time></dd>
</dl>
<h3>Verify it yourself</h3>
<ol class="steps">
<li>Run <code id="verify-command">${e(doc.verify)}</code>: it recomputes every hash and the standings from the document alone and prints <code>VERIFIED</code> or the first tampered entry.</li>
<li>Keep the head hash above; later, <code>labphi verify-standings &lt;url&gt; --head ${e(doc.head.seq)}:${e(doc.head.hash.slice(0, 12))}…</code> (the whole hash) proves the history was not rewritten since.</li>
<li>Or read the documents: <a href="/standings.json">/standings.json</a> (standings, rules, every entry) and <a href="/olympiad-records.json">/olympiad-records.json</a> (every result set with its evidence).</li>
</ol>
</section>`;
}

/** The seeding rows after the cursor's rank, at most `limit` (a page of the seeding table). */
function seedingPage(rows: readonly StandingRow[], page: KeysetRequest) {
  const after = page.cursor ? decodeCursor(page.cursor, 1)[0] : 0;
  if (typeof after !== "number" || after < 0) throw invalidCursor();
  const limit = pageLimit(page.limit);
  const from = rows.filter((r) => r.rank > after);
  const items = from.slice(0, limit);
  const last = items.at(-1);
  return { items, next_cursor: from.length > limit && last ? encodeCursor([last.rank]) : null };
}

function seedingPager(page: KeysetRequest, next: string | null): string {
  const q = (cursor?: string) => {
    const p = new URLSearchParams();
    if (cursor) p.set("cursor", cursor);
    if (page.limit !== undefined) p.set("limit", String(page.limit));
    const s = p.toString();
    return `/standings${s ? `?${s}` : ""}#seeding`;
  };
  const links = [
    page.cursor ? `<a class="btn" id="seeding-first" href="${e(q())}">First seeding rows</a>` : "",
    next ? `<a class="btn" id="seeding-more" rel="next" href="${e(q(next))}">More seeding rows</a>` : "",
  ].filter(Boolean);
  return links.length ? `<nav class="cluster" aria-label="Seeding pages">${links.join(" ")}</nav>` : "";
}

export function standingsPages(app: App, deps: { records: OlympiadRecords; db: Kysely<Database> }) {
  const cache = new PageCache();
  app.get(
    "/standings",
    {
      schema: {
        summary: "The olympiad standings page: table, chart, chain head and how to verify (HTML, no script needed)",
        description:
          "The official table is the top 50 (the rules'); the seeding table is paged: `limit` (1-100, default 20) and `cursor`. Built once per data version, with an ETag (304 on a match).",
        tags: ["web"],
        querystring: pageQuerySchema,
        response: { 200: z.string() },
      },
    },
    async (request, reply) => {
      const now = deps.records.now();
      const page = { limit: request.query.limit, cursor: request.query.cursor };
      if (page.cursor) seedingPage([], page); // 400 invalid_cursor before any work
      const key = `standings:${page.limit ?? ""}:${page.cursor ?? ""}`;
      const cached = await cache.get(key, await olympiadVersion(deps.db, now), async () => ({
        type: HTML_TYPE,
        body: await standingsHtml(page),
      }));
      return sendCached(request, reply, cached);
    },
  );

  async function standingsHtml(page: KeysetRequest): Promise<string> {
    const doc = await deps.records.standingsDocument();
    const seeded = seedingPage(doc.seeding, page);
    const seeding = seeded.items;
    const names = await entrantNames(
      deps.db,
      [...doc.standings, ...seeding].map((r) => r.entrant),
    );
    const nameOf = (id: string) => names.get(id) ?? id;
    const official = doc.standings.length
      ? `${standingsChart(doc.standings, nameOf)}
${tableHtml(doc.standings, names, "standings-table", `Top ${doc.standings.length} of ${doc.ranked_total} ranked · ties broken by golds, silvers, bronzes, then who reached the total first on the chain`, true)}`
      : `<div class="card empty-state" id="standings-empty">
<h2>No official results yet</h2>
<p>Season ${e(doc.season)} has no official result on the chain yet. Official points come from the ranking quarters (Q1–Q3) once registration is open; tryout results are kept for seeding${
          doc.seeding.length ? " (below)" : ""
        }.</p>
<p class="cluster"><a class="btn btn-primary" href="/olympiad">See the olympiad</a> <a class="btn" href="/olympiad#take-part">Register</a></p>
</div>`;
    const seedingHtml = seeding.length
      ? `<section id="seeding" aria-labelledby="seeding-h"><h2 id="seeding-h">Seeding (tryouts)</h2>
<p class="small muted">Tryout results count no official points; they may inform seedings.</p>
${tableHtml(seeding, names, "seeding-table", `${seeding.length} of ${doc.seeding.length} entrants with tryout results (ranks ${seeding[0]?.rank ?? 0}–${seeding.at(-1)?.rank ?? 0})`, false)}
${seedingPager(page, seeded.next_cursor)}</section>`
      : "";
    const body = `<section class="hero">
<p class="cluster"><span class="badge">Season ${e(doc.season)}</span> <span class="badge">${e(doc.ranked_total)} ranked</span> <span class="badge">${e(doc.head.seq)} chain entries</span></p>
<h1>Standings</h1>
<p class="lead">Official points of the Great Agentic Olympiad, season ${e(doc.season)}: places 1–10 of each event earn ${e(doc.rules.points_table.join("-"))} points times its weight; the top ${e(doc.rules.top_n)} are listed and the first three take the medals.</p>
</section>
<section id="official" aria-label="Official standings" class="stack">${official}</section>
${seedingHtml}
${proofHtml(doc)}`;
    return renderPage({
      title: `Standings: season ${doc.season}`,
      description: `Olympiad standings for season ${doc.season}: ${doc.ranked_total} ranked, medals, and the hash-chain head to verify them.`,
      path: "/standings",
      body,
    });
  }
}
