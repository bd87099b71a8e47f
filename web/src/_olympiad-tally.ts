/**
 * Builds a proposal card and its weighted tally in the browser, the same markup the server renders
 * (src/web/pages/olympiad-tally.ts), from GET /api/olympiad?view=proposals. DOM building only
 * (text is never parsed as HTML); bars are SVG rects whose widths are attributes.
 */

export interface Fraction {
  num: string;
  den: string;
}

export interface ConstituencyTally {
  constituency: string;
  weight_bp: number;
  yes: number;
  no: number;
  abstain: number;
  yes_share_ppm: number | null;
  empty: boolean;
  effective_weight_ppm: number;
}

export interface Tally {
  voters: number;
  constituencies: ConstituencyTally[];
  mixed_yes_ppm: number | null;
  quorum: number;
  min_constituencies: number;
  threshold: Fraction;
  threshold_rule: "greater_than" | "at_least";
  outcome: "passed" | "failed" | "no_quorum";
  as_of: string;
}

export interface Proposal {
  proposal_id: string;
  kind: string;
  title: string;
  body: string;
  closes_at: string;
  state: "open" | "closed";
  tally: Tally;
  /** lists cut the text (GET /api/olympiad?view=proposals): the whole of it is at `page` */
  body_truncated?: boolean;
  page?: string;
}

export interface Labels {
  constituency: Record<string, string>;
  kind: Record<string, string>;
  outcome: Record<string, string>;
}

const SVG = "http://www.w3.org/2000/svg";

type Attrs = Record<string, string>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  el.append(...children);
  return el;
}

function svg(tag: string, attrs: Attrs): SVGElement {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  return el;
}

export const pct = (ppm: number) => `${(Math.floor(ppm / 1000) / 10).toFixed(1)} %`;
const fractionPct = (f: Fraction) => (Number(f.num) / Number(f.den)) * 100;
const clamp = (v: number) => Math.max(0, Math.min(100, v));
const utc = (iso: string) => `${iso.slice(0, 16).replace("T", " ")} UTC`;

/** A horizontal bar; value and marker in percent of the width. */
export function bar(valuePct: number, label: string, markPct?: number, kind = "fill"): SVGElement {
  const root = svg("svg", {
    class: "tbar",
    viewBox: "0 0 100 10",
    preserveAspectRatio: "none",
    role: "img",
    "aria-label": label,
    focusable: "false",
  });
  root.append(svg("rect", { class: "track", x: "0", y: "0", width: "100", height: "10" }));
  root.append(svg("rect", { class: kind, x: "0", y: "0", width: clamp(valuePct).toFixed(2), height: "10" }));
  if (markPct !== undefined) {
    root.append(
      svg("rect", { class: "mark", x: (clamp(markPct) - 0.4).toFixed(2), y: "0", width: "0.8", height: "10" }),
    );
  }
  return root;
}

export function thresholdText(t: Tally): string {
  const p = fractionPct(t.threshold);
  return `${t.threshold_rule === "greater_than" ? "more than" : "at least"} ${Number.isInteger(p) ? String(p) : p.toFixed(1)} %`;
}

/** The tally block's children (replaces the content of [data-tally]). */
export function tallyNodes(t: Tally, state: Proposal["state"], labels: Labels): Node[] {
  const nonEmpty = t.constituencies.filter((c) => !c.empty).length;
  const mixed = t.mixed_yes_ppm === null ? "no decisive vote yet" : pct(t.mixed_yes_ppm);
  const badge = t.outcome === "passed" ? "badge-ok" : t.outcome === "failed" ? "badge-bad" : "badge-warn";
  const summary = h(
    "div",
    { class: "tally-mixed" },
    h(
      "p",
      { class: "tally-summary" },
      h("strong", { "data-mixed": "" }, `Mixed yes: ${mixed}`),
      " ",
      h("span", { class: "muted small" }, `(passes when ${thresholdText(t)})`),
    ),
    bar(
      t.mixed_yes_ppm === null ? 0 : t.mixed_yes_ppm / 10_000,
      `Mixed yes ${mixed}; threshold ${thresholdText(t)}`,
      fractionPct(t.threshold),
      "fill mixed",
    ),
    h(
      "p",
      { class: "small", "data-quorum": "" },
      `Voters ${t.voters} of ${t.quorum} needed for quorum · ${nonEmpty} constituencies with a decisive vote (${t.min_constituencies} needed) · `,
      h(
        "span",
        { class: `badge ${badge}`, "data-outcome": t.outcome },
        `${state === "open" ? "If it closed now" : "Outcome"}: ${labels.outcome[t.outcome] ?? t.outcome}`,
      ),
    ),
  );
  const rows = h("ul", { class: "tally-rows" });
  for (const c of t.constituencies) {
    const name = labels.constituency[c.constituency] ?? c.constituency;
    const share = c.yes_share_ppm === null ? "empty: weight shared out" : `${pct(c.yes_share_ppm)} yes`;
    rows.append(
      h(
        "li",
        { class: "tally-row", "data-constituency": c.constituency },
        h(
          "span",
          { class: "tally-name" },
          `${name} `,
          h("span", { class: "muted small" }, `${pct(c.weight_bp * 100)} · effective ${pct(c.effective_weight_ppm)}`),
        ),
        bar(
          c.yes_share_ppm === null ? 0 : c.yes_share_ppm / 10_000,
          `${name}: ${share}`,
          undefined,
          c.empty ? "fill empty" : "fill",
        ),
        h(
          "span",
          { class: "tally-count small", "data-counts": "" },
          `${c.yes} yes · ${c.no} no · ${c.abstain} abstain · ${share}`,
        ),
      ),
    );
  }
  const asOf = h("p", { class: "muted small" }, "As of ", h("time", { datetime: t.as_of }, utc(t.as_of)));
  return [summary, rows, asOf];
}

export function stateBadge(p: Proposal): HTMLElement {
  return p.state === "open"
    ? h("span", { class: "badge badge-ok", "data-state": "open" }, `Open until ${utc(p.closes_at)}`)
    : h("span", { class: "badge", "data-state": "closed" }, `Closed ${p.closes_at.slice(0, 10)}`);
}

/** A whole proposal card (for a proposal the server page did not have). */
export function proposalCard(p: Proposal, labels: Labels): HTMLElement {
  const card = h("article", {
    class: "card proposal",
    id: `proposal-${p.proposal_id}`,
    "data-proposal-id": p.proposal_id,
  });
  card.append(
    h("h3", {}, p.title),
    h(
      "p",
      { class: "cluster small" },
      h("span", { class: "badge" }, labels.kind[p.kind] ?? p.kind),
      " ",
      stateBadge(p),
      " ",
      h("span", { class: "muted mono" }, p.proposal_id),
    ),
    h(
      "details",
      {},
      h("summary", {}, "Proposal text"),
      h("p", { class: "proposal-body" }, p.body),
      ...(p.body_truncated && p.page
        ? [h("p", { class: "small" }, h("a", { href: p.page, "data-whole": "" }, "Read the whole proposal"))]
        : []),
    ),
    h("div", { class: "tally", "data-tally": "" }, ...tallyNodes(p.tally, p.state, labels)),
  );
  if (p.state === "open") {
    const group = h("div", { class: "cluster vote", role: "group", "aria-label": `Vote on ${p.title}` });
    for (const [choice, text] of [
      ["yes", "Vote yes"],
      ["no", "Vote no"],
      ["abstain", "Abstain"],
    ] as const) {
      group.append(
        h(
          "button",
          {
            type: "button",
            class: `btn${choice === "yes" ? " btn-primary" : ""}`,
            "data-vote": choice,
            "data-proposal": p.proposal_id,
          },
          text,
        ),
      );
    }
    card.append(group);
  }
  return card;
}

/** Updates an existing card in place (the tally and the state), keeping its buttons and focus. */
export function updateCard(card: HTMLElement, p: Proposal, labels: Labels): void {
  const tally = card.querySelector<HTMLElement>("[data-tally]");
  tally?.replaceChildren(...tallyNodes(p.tally, p.state, labels));
  card.querySelector("[data-state]")?.replaceWith(stateBadge(p));
  if (p.state === "closed") card.querySelector(".vote")?.remove();
}
