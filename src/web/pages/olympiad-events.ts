import { z } from "zod";
import { idText } from "../../http/text.js";
import type { App } from "../../http/types.js";
import { HTML_TYPE, sendCached } from "../../olympiad/documents/page-cache.js";
import type { OlympiadDocuments } from "../../olympiad/documents/service.js";
import { entrantNames } from "../../olympiad/entry/entrant-names.js";
import type { OlympiadTasks } from "../../olympiad/events/tasks/service.js";
import { escapeHtml as e } from "../html.js";
import { renderPage } from "../layout.js";

/**
 * Scored events on the pages (issue #26 item 3, docs/olympiad-tasks.md "Pages"): the "Scored
 * events" section of /olympiad (each event with a task: its state, window, entrants scored) and
 * one page per event, /olympiad/events/:event_id: the task's description, its public files with
 * their SHA-256, the window, the key's SHA-256 (committed on the chain when the task was set), the
 * public leaderboard (best public score per entrant, ties by the earliest submission), and after
 * the close the final ranking on the private part with the link to the published key. Rendered on
 * the server from the same service calls as the JSON routes (`OlympiadTasks.publicView`,
 * `.leaderboard`), which never carry a private score or the key before the close.
 */

type EventsIndex = Awaited<ReturnType<OlympiadTasks["index"]>>;
type EventView = Awaited<ReturnType<OlympiadTasks["publicView"]>>;
type Leaderboard = Awaited<ReturnType<OlympiadTasks["leaderboard"]>>;
type TaskView = NonNullable<EventView["task"]>;

/** Rows of each table on an event's page (the whole board: the JSON leaderboard). */
export const BOARD_ROWS = 200;

const STATE_LABELS = { scheduled: "Opens soon", open: "Open", closed: "Closed" } as const;
const STATE_BADGE = { scheduled: "badge-warn", open: "badge-ok", closed: "" } as const;

const eventPath = (id: string) => `/olympiad/events/${encodeURIComponent(id)}`;
const apiPath = (id: string) => `/api/olympiad/events/${encodeURIComponent(id)}`;

function timeHtml(iso: string): string {
  return `<time datetime="${e(iso)}">${e(iso.slice(0, 16).replace("T", " "))} UTC</time>`;
}

function stateBadge(state: keyof typeof STATE_LABELS, id?: string): string {
  return `<span class="badge ${STATE_BADGE[state]}"${id ? ` id="${e(id)}"` : ""}>${e(STATE_LABELS[state])}</span>`;
}

function entrantHtml(id: string, kind: string, names: Map<string, string>): string {
  const name = names.get(id);
  return `<span class="entrant-name">${e(name ?? id)}</span> <span class="badge">${kind === "team" ? "team" : "participant"}</span>${
    name ? `<br><span class="mono small muted">${e(id)}</span>` : ""
  }`;
}

/**
 * The section of /olympiad: every event with a scored task, its state, metric, window and how many
 * entrants have a public score, linking to the event's page (which has the board). One grouped
 * count, not the boards: the /olympiad page is rebuilt after every scored submission, and building
 * ten boards of 10,000 submissions each cost about 1 s of CPU (measured), one count a few ms.
 */
export async function scoredEventsHtml(tasks: OlympiadTasks): Promise<string> {
  const index: EventsIndex = await tasks.index();
  const scored = index.events.filter((ev) => ev.task !== null);
  const intro = `<p>An event with a task is scored by the service: submit a prediction file (CSV or JSON lines) with your participant token, the public score appears within seconds on the event's public leaderboard; at the close the private part of the key decides the ranks, the results go on the chain and the key is published so anyone can re-score. JSON: <a href="/api/olympiad/events">/api/olympiad/events</a>.</p>`;
  if (scored.length === 0) {
    return `<section id="scored-events" aria-labelledby="scored-events-h">
<h2 id="scored-events-h">Scored events</h2>
${intro}
<p class="muted" id="no-scored-events">No event has a scored task yet.</p>
</section>`;
  }
  const counts = await tasks.db
    .selectFrom("olympiad_submissions")
    .select(["event_id", (eb) => eb.fn.count<string | number>("entrant_id").distinct().as("n")])
    .where("status", "=", "scored")
    .groupBy("event_id")
    .execute();
  const entrants = new Map(counts.map((c) => [c.event_id, Number(c.n)]));
  const cards = scored
    .map((ev) => {
      const t = ev.task as NonNullable<typeof ev.task>;
      const n = entrants.get(ev.event_id) ?? 0;
      return `<li class="card" id="scored-${e(ev.event_id)}">
<h3><a href="${e(eventPath(ev.event_id))}">${e(ev.name)}</a> ${stateBadge(t.state)}${ev.entrants === "team" ? ' <span class="badge">team</span>' : ""}</h3>
<p class="small">Metric <code>${e(t.metric)}</code> · opens ${timeHtml(t.opens_at)} · closes ${timeHtml(t.closes_at)}</p>
<p class="small">${n === 0 ? "No scored submission yet." : `${e(n)} ${ev.entrants === "team" ? (n === 1 ? "team" : "teams") : n === 1 ? "entrant" : "entrants"} on the public leaderboard.`} <a href="${e(eventPath(ev.event_id))}">Task, files and ${t.state === "closed" ? "final ranking" : "leaderboard"}</a></p>
</li>`;
    })
    .join("");
  return `<section id="scored-events" aria-labelledby="scored-events-h">
<h2 id="scored-events-h">Scored events</h2>
${intro}
<ul class="grid" role="list">${cards}</ul>
</section>`;
}

function filesHtml(t: TaskView, eventId: string): string {
  if (t.files.length === 0) return '<p class="muted" id="task-no-files">No public files.</p>';
  const rows = t.files
    .map(
      (f) => `<tr><td><a href="${e(`${apiPath(eventId)}/files/${encodeURIComponent(f.name)}`)}">${e(f.name)}</a></td>
<td class="num">${e(f.bytes)}</td><td><code class="hash">${e(f.sha256)}</code></td></tr>`,
    )
    .join("");
  return `<div class="table-wrap" tabindex="0" role="region" aria-label="Public files"><table id="task-files">
<thead><tr><th scope="col">File</th><th scope="col" class="num">Bytes</th><th scope="col">SHA-256</th></tr></thead>
<tbody>${rows}</tbody></table></div>`;
}

function publicBoardHtml(board: Leaderboard, names: Map<string, string>, publicPct: number): string {
  const caption = `Best public score per ${board.public.some((r) => r.entrant_kind === "team") ? "team" : "entrant"}, scored on ${publicPct} % of the key's rows (${board.metric.better} is better); equal scores: the earlier submission first.`;
  if (board.public.length === 0) {
    return `<p class="small muted">${e(caption)}</p><p class="muted" id="leaderboard-empty">No scored submission yet.</p>`;
  }
  const shown = board.public.slice(0, BOARD_ROWS);
  const rows = shown
    .map(
      (
        r,
      ) => `<tr data-entrant="${e(r.entrant)}"><td class="num">${e(r.rank)}</td><td>${entrantHtml(r.entrant, r.entrant_kind, names)}</td>
<td class="num"><strong>${e(r.public_score)}</strong></td><td>${timeHtml(r.submitted_at)}</td><td class="num">${e(r.scored_submissions)}</td></tr>`,
    )
    .join("");
  const more =
    board.public.length > shown.length
      ? `<p class="small muted">${e(shown.length)} of ${e(board.public.length)} shown; the whole board: <a href="${e(`${apiPath(board.event_id)}/leaderboard`)}">JSON</a>.</p>`
      : "";
  return `<p class="small muted" id="leaderboard-note">${e(caption)}</p>
<div class="table-wrap" tabindex="0" role="region" aria-labelledby="leaderboard-note"><table id="public-leaderboard">
<thead><tr><th scope="col" class="num">Rank</th><th scope="col">Participant or team</th><th scope="col" class="num">Public score</th><th scope="col">Submitted</th><th scope="col" class="num">Scored submissions</th></tr></thead>
<tbody>${rows}</tbody></table></div>${more}`;
}

function finalHtml(board: Leaderboard, t: TaskView, names: Map<string, string>, eventId: string, kind: string): string {
  const key = t.key.url ? `<a id="key-link" href="${e(`${apiPath(eventId)}/key`)}">the published key</a>` : "the key";
  if (!board.final) {
    return `<section id="final" class="card" aria-labelledby="final-h"><h2 id="final-h">Final ranking</h2>
<p id="final-pending">The event has closed; the final ranking on the private part is being computed and will be appended to the chain within a minute. Meanwhile, ${key} (with its split seed) lets anyone re-score.</p></section>`;
  }
  const rows = board.final.results
    .slice(0, BOARD_ROWS)
    .map(
      (
        r,
      ) => `<tr data-entrant="${e(r.entrant ?? "")}"><td class="num">${r.rank === null ? "—" : e(r.rank)}</td><td>${entrantHtml(r.entrant ?? "", kind, names)}</td>
<td class="num"><strong>${e(r.private_score ?? "—")}</strong></td><td class="num">${e(r.public_score ?? "—")}</td><td>${r.submission_sha256 ? `<code class="hash">${e(r.submission_sha256)}</code>` : "—"}</td></tr>`,
    )
    .join("");
  return `<section id="final" aria-labelledby="final-h" class="stack">
<h2 id="final-h">Final ranking (private part)</h2>
<p class="small muted" id="final-note">Each entrant's selected finals (or its best public ones) scored on the private rows; ranks by the private score. On the chain <code>olympiad</code> as entry <strong id="final-seq">${e(board.final.seq)}</strong> (<code class="hash">${e(board.final.hash)}</code>); points in <a href="/standings">the standings</a>. Re-score it yourself with ${key}.</p>
<div class="table-wrap" tabindex="0" role="region" aria-labelledby="final-note"><table id="final-ranking">
<thead><tr><th scope="col" class="num">Rank</th><th scope="col">Participant or team</th><th scope="col" class="num">Private score</th><th scope="col" class="num">Public score</th><th scope="col">Submission SHA-256</th></tr></thead>
<tbody>${rows}</tbody></table></div>
</section>`;
}

/** The page of one event: with a task, everything above; without, the event and a note. */
async function eventPageHtml(tasks: OlympiadTasks, eventId: string): Promise<string> {
  const view: EventView = await tasks.publicView(eventId); // 404 unknown_event
  const ev = view.event as { id: string; name: string; family: string; entrants: string; format?: string };
  const t = view.task;
  const head = `<p class="small"><a href="/olympiad#scored-events">← All scored events</a></p>`;
  if (!t) {
    const body = `${head}<section class="hero"><h1>${e(ev.name)}</h1>
<p class="lead">${e(ev.format ?? "")}</p>
<p class="muted" id="no-task">This event has no scored task yet: its results are recorded by the operator with evidence (<a href="/standings">standings</a>).</p></section>`;
    return renderPage({
      title: `${ev.name}: olympiad event`,
      description: `Olympiad event ${ev.id} (${ev.family}): no scored task yet.`,
      path: eventPath(ev.id),
      body,
    });
  }
  const board = await tasks.leaderboard(eventId);
  const names = await entrantNames(tasks.db, [
    ...board.public.slice(0, BOARD_ROWS).map((r) => r.entrant),
    ...(board.final?.results.slice(0, BOARD_ROWS).map((r) => r.entrant ?? "") ?? []),
  ]);
  const closed = t.state === "closed";
  const keyRow = closed
    ? `<dd><code class="hash" id="key-sha256">${e(t.key.sha256)}</code><br><a href="${e(`${apiPath(eventId)}/key`)}" id="key-published">The key, its split seed and rule (published)</a></dd>`
    : `<dd><code class="hash" id="key-sha256">${e(t.key.sha256)}</code><br><span class="small muted">The key itself is published at the close.</span></dd>`;
  const body = `${head}<section class="hero">
<p class="cluster">${stateBadge(t.state, "task-state")} <span class="badge">${e(ev.family)}</span>${ev.entrants === "team" ? ' <span class="badge">team event</span>' : ""} <span class="badge">${e(t.quarter)}</span></p>
<h1>${e(ev.name)}</h1>
</section>
<section id="task" class="card" aria-labelledby="task-h">
<h2 id="task-h">The task</h2>
<div class="proposal-body" id="task-description">${e(t.description)}</div>
<dl class="kv">
<dt>Metric</dt><dd><strong>${e(t.metric.name)}</strong> (<code>${e(t.metric.id)}</code>${t.metric.k !== null ? `, k = ${e(t.metric.k)}` : ""}, ${e(t.metric.better)} is better): ${e(t.metric.rule)}</dd>
<dt>Opens</dt><dd id="task-opens">${timeHtml(t.opens_at)}</dd>
<dt>Closes</dt><dd id="task-closes">${timeHtml(t.closes_at)}</dd>
<dt>Submission</dt><dd>CSV or JSON lines, columns <code>${e(t.submission_format.id_column)}</code> and <code>${e(t.submission_format.value_column)}</code> (${e(t.submission_format.value_kind)}), one row for each of the ${e(t.submission_format.rows)} ids; at most ${e(t.max_file_bytes)} bytes, ${e(t.daily_quota)} a day per ${ev.entrants === "team" ? "team" : "entrant"}, up to ${e(t.max_finals)} final submissions</dd>
<dt>Key SHA-256</dt>${keyRow}
<dt>Committed</dt><dd>${t.key.committed_seq === null ? "—" : `chain <code>olympiad</code>, entry ${e(t.key.committed_seq)}`} · ${e(t.key.public_pct)} % of the rows are public</dd>
</dl>
${closed ? "" : `<p class="small">Submit from <a href="/olympiad#submit-card">the olympiad page</a> (signed in with your participant token), with <code>POST ${e(apiPath(eventId))}/submissions</code> or the MCP tool. JSON: <a href="${e(apiPath(eventId))}">${e(apiPath(eventId))}</a>.</p>`}
</section>
<section id="files" aria-labelledby="files-h"><h2 id="files-h">Public files</h2>${filesHtml(t, eventId)}</section>
<section id="leaderboard" aria-labelledby="leaderboard-h" class="stack">
<h2 id="leaderboard-h">Public leaderboard</h2>
${publicBoardHtml(board, names, t.key.public_pct)}
${closed ? "" : `<p class="small" id="private-hidden">Private scores stay hidden until the close (${timeHtml(t.closes_at)}); the final ranks are decided on the private part.</p>`}
<p class="small">JSON: <a href="${e(`${apiPath(eventId)}/leaderboard`)}">${e(`${apiPath(eventId)}/leaderboard`)}</a></p>
</section>
${closed ? finalHtml(board, t, names, eventId, ev.entrants === "team" ? "team" : "participant") : ""}`;
  return renderPage({
    title: `${ev.name}: scored event`,
    description: `Olympiad event ${ev.id}: the task, its files with SHA-256, the key's SHA-256 and the ${closed ? "final ranking" : "public leaderboard"}.`,
    path: eventPath(ev.id),
    body,
  });
}

/** GET /olympiad/events/:event_id (HTML), cached per data version like the other olympiad pages. */
export function eventPages(app: App, deps: { tasks: OlympiadTasks; documents: OlympiadDocuments }) {
  const { tasks, documents } = deps;
  app.get(
    "/olympiad/events/:event_id",
    {
      schema: {
        summary:
          "One olympiad event's page: its scored task, public files with SHA-256, key hash, public leaderboard and, after the close, the final ranking (HTML)",
        tags: ["web"],
        params: z.object({ event_id: idText(80) }),
        response: { 200: z.string() },
      },
    },
    async (request, reply) => {
      const now = tasks.now();
      const id = request.params.event_id;
      const cached = await documents.cache.get(`event-page:${id}`, await documents.version(now), async () => ({
        type: HTML_TYPE,
        body: await eventPageHtml(tasks, id),
      }));
      return sendCached(request, reply, cached);
    },
  );
}
