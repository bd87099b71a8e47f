import type { StandingRow } from "../../olympiad/results/standings.js";
import { escapeHtml as e } from "../html.js";

/** Entries the chart shows (the table lists every ranked one). */
export const CHART_TOP = 10;

/**
 * A horizontal SVG bar chart of the top entries' points, rendered on the server (no script, and
 * no style attribute: widths are SVG attributes). Labels are the entrants' display names.
 */
export function standingsChart(rows: readonly StandingRow[], nameOf: (id: string) => string): string {
  const top = rows.slice(0, CHART_TOP);
  if (top.length === 0) return "";
  const max = Math.max(1, ...top.map((r) => r.points));
  const width = 480;
  const labelW = 150;
  const valueW = 44;
  const barMax = width - labelW - valueW;
  const rowH = 28;
  const height = top.length * rowH + 8;
  const bars = top
    .map((r, i) => {
      const y = 4 + i * rowH;
      const w = Math.max(r.points > 0 ? 2 : 0, Math.round((r.points / max) * barMax));
      const name = nameOf(r.entrant);
      const label = name.length > 18 ? `${name.slice(0, 17)}…` : name;
      return `<g class="row${r.medal ? ` medal-${e(r.medal)}` : ""}" data-entrant="${e(r.entrant)}">
<text x="${labelW - 8}" y="${y + 18}" text-anchor="end">${e(r.rank)}. ${e(label)}</text>
<rect class="bar" x="${labelW}" y="${y + 4}" width="${w}" height="${rowH - 8}" rx="3"><title>${e(name)}: ${e(r.points)} points</title></rect>
<text x="${labelW + w + 6}" y="${y + 18}">${e(r.points)}</text>
</g>`;
    })
    .join("");
  return `<figure class="standings-figure">
<svg class="chart standings-chart" id="standings-chart" viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="standings-chart-title">
<title id="standings-chart-title">Points of the top ${top.length} entries</title>
<line class="axis" x1="${labelW}" y1="0" x2="${labelW}" y2="${height}"/>
${bars}
</svg>
<figcaption class="small muted">Official points of the top ${top.length}; the table below has every ranked entry.</figcaption>
</figure>`;
}
