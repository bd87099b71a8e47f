import type { ProposalView, TallyView } from "../../olympiad/governance/schemas.js";
import { CONSTITUENCIES, type DECISION_KINDS, GOVERNANCE_WEIGHTS_BP } from "../../olympiad/governance/weights.js";
import { escapeHtml as e } from "../html.js";

/**
 * Server rendering of a proposal and its weighted tally (docs/olympiad-governance.md) for the
 * /olympiad page. The page script (web/src/_olympiad-tally.ts) builds the same markup from
 * GET /api/olympiad?view=proposals when it refreshes the tallies; the labels below reach it
 * through the page's JSON data block, so both sides name things alike.
 * Bars are SVG rects (widths as attributes): the Content-Security-Policy forbids style attributes.
 */

export const CONSTITUENCY_LABELS: Record<(typeof CONSTITUENCIES)[number], string> = {
  team_captains: "Team captains",
  entered_agents: "Entered agents",
  public_community: "Public community",
  lab_stewards: "Lab stewards",
  residual_integrity: "Residual integrity",
};

export const KIND_LABELS: Record<(typeof DECISION_KINDS)[number], string> = {
  new_games: "New games",
  change_games: "Change games",
  remove_games: "Remove games",
  event_weights: "Event weights",
  ratio_appeals: "Ratio appeal",
  prize_pool_release: "Prize pool release",
};

export const OUTCOME_LABELS: Record<TallyView["outcome"], string> = {
  passed: "passes",
  failed: "fails",
  no_quorum: "no quorum",
};

/** Parts per million → "12.3 %" (display only: ppm figures are floored). */
export const pct = (ppm: number) => `${(Math.floor(ppm / 1000) / 10).toFixed(1)} %`;

/** An exact fraction {num, den} as a percentage for display. */
export const fractionPct = (f: { num: string; den: string }) => (Number(f.num) / Number(f.den)) * 100;

/** A horizontal bar: value (and optional marker) in percent of the width. */
export function barSvg(valuePct: number, label: string, markPct?: number, kind = "fill"): string {
  const w = Math.max(0, Math.min(100, valuePct));
  const mark =
    markPct === undefined
      ? ""
      : `<rect class="mark" x="${(Math.max(0, Math.min(100, markPct)) - 0.4).toFixed(2)}" y="0" width="0.8" height="10"/>`;
  return `<svg class="tbar" viewBox="0 0 100 10" preserveAspectRatio="none" role="img" aria-label="${e(label)}" focusable="false"><rect class="track" x="0" y="0" width="100" height="10"/><rect class="${e(kind)}" x="0" y="0" width="${w.toFixed(2)}" height="10"/>${mark}</svg>`;
}

export function thresholdText(t: TallyView): string {
  const p = fractionPct(t.threshold);
  const n = Number.isInteger(p) ? String(p) : p.toFixed(1);
  return `${t.threshold_rule === "greater_than" ? "more than" : "at least"} ${n} %`;
}

/** The tally block (the part the script replaces when it refreshes). */
export function tallyHtml(t: TallyView, state: ProposalView["state"]): string {
  const nonEmpty = t.constituencies.filter((c) => !c.empty).length;
  const mixed = t.mixed_yes_ppm === null ? "no decisive vote yet" : pct(t.mixed_yes_ppm);
  const outcomeBadge = t.outcome === "passed" ? "badge-ok" : t.outcome === "failed" ? "badge-bad" : "badge-warn";
  const rows = t.constituencies
    .map((c) => {
      const share = c.yes_share_ppm === null ? "empty: weight shared out" : `${pct(c.yes_share_ppm)} yes`;
      return `<li class="tally-row" data-constituency="${e(c.constituency)}"><span class="tally-name">${e(
        CONSTITUENCY_LABELS[c.constituency],
      )} <span class="muted small">${e(pct(c.weight_bp * 100))} · effective ${e(pct(c.effective_weight_ppm))}</span></span>${barSvg(
        c.yes_share_ppm === null ? 0 : c.yes_share_ppm / 10_000,
        `${CONSTITUENCY_LABELS[c.constituency]}: ${share}`,
        undefined,
        c.empty ? "fill empty" : "fill",
      )}<span class="tally-count small" data-counts>${c.yes} yes · ${c.no} no · ${c.abstain} abstain · ${e(share)}</span></li>`;
    })
    .join("");
  return `<div class="tally-mixed">
<p class="tally-summary"><strong data-mixed>Mixed yes: ${e(mixed)}</strong> <span class="muted small">(passes when ${e(thresholdText(t))})</span></p>
${barSvg(t.mixed_yes_ppm === null ? 0 : t.mixed_yes_ppm / 10_000, `Mixed yes ${mixed}; threshold ${thresholdText(t)}`, fractionPct(t.threshold), "fill mixed")}
<p class="small" data-quorum>Voters ${t.voters} of ${t.quorum} needed for quorum · ${nonEmpty} constituencies with a decisive vote (${t.min_constituencies} needed) · <span class="badge ${outcomeBadge}" data-outcome="${e(t.outcome)}">${state === "open" ? "If it closed now" : "Outcome"}: ${e(OUTCOME_LABELS[t.outcome])}</span></p>
</div>
<ul class="tally-rows">${rows}</ul>
<p class="muted small">As of <time datetime="${e(t.as_of)}">${e(t.as_of.slice(0, 16).replace("T", " "))} UTC</time></p>`;
}

const stateBadge = (p: ProposalView) =>
  p.state === "open"
    ? `<span class="badge badge-ok" data-state="open">Open until ${e(p.closes_at.slice(0, 16).replace("T", " "))} UTC</span>`
    : `<span class="badge" data-state="closed">Closed ${e(p.closes_at.slice(0, 10))}</span>`;

/**
 * One proposal card with its tally and vote buttons (enabled by the script once signed in). In a
 * list the text is cut (`body_truncated`) and links to the proposal's own page; `whole` shows it open.
 */
export function proposalHtml(
  p: ProposalView & { body_truncated?: boolean; page?: string },
  o: { whole?: boolean } = {},
): string {
  const id = e(p.proposal_id);
  const votes =
    p.state === "open"
      ? `<div class="cluster vote" role="group" aria-label="Vote on ${e(p.title)}">${(["yes", "no", "abstain"] as const)
          .map(
            (c) =>
              `<button type="button" class="btn${c === "yes" ? " btn-primary" : ""}" data-vote="${c}" data-proposal="${id}">${
                c === "yes" ? "Vote yes" : c === "no" ? "Vote no" : "Abstain"
              }</button>`,
          )
          .join("")}</div>`
      : "";
  return `<article class="card proposal" id="proposal-${id}" data-proposal-id="${id}">
<h3>${e(p.title)}</h3>
<p class="cluster small"><span class="badge">${e(KIND_LABELS[p.kind])}</span> ${stateBadge(p)} <span class="muted mono">${id}</span></p>
${
  o.whole
    ? `<div class="proposal-body" id="proposal-text"><p class="proposal-body">${e(p.body)}</p></div>`
    : `<details><summary>Proposal text</summary><p class="proposal-body">${e(p.body)}</p>${
        p.body_truncated
          ? `<p class="small"><a href="${e(p.page ?? `/olympiad/proposals/${encodeURIComponent(p.proposal_id)}`)}" data-whole>Read the whole proposal</a></p>`
          : ""
      }</details>`
}
<div class="tally" data-tally>${tallyHtml(p.tally, p.state)}</div>
${votes}
</article>`;
}

/** The weights of the five constituencies (for the governance summary). */
export function weightsHtml(): string {
  return `<ul class="tally-rows weights">${CONSTITUENCIES.map((c) => {
    const bp = GOVERNANCE_WEIGHTS_BP[c];
    return `<li class="tally-row"><span class="tally-name">${e(CONSTITUENCY_LABELS[c])}</span>${barSvg(
      bp / 100,
      `${CONSTITUENCY_LABELS[c]}: weight ${pct(bp * 100)}`,
    )}<span class="tally-count small">${e(pct(bp * 100))}</span></li>`;
  }).join("")}</ul>`;
}
