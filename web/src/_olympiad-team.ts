import { bar, h } from "./_olympiad-tally";

/** The caller's participant and team, as GET /api/olympiad/me and the team ops answer them. */

export interface TeamMember {
  participant_id: string;
  name: string;
  member_kind: "human" | "autonomous";
  captain: boolean;
  entered: boolean;
}

export interface Team {
  team_id: string;
  name: string;
  captain_id: string;
  roster_size: number;
  member_count: number;
  locked: boolean;
  shares: { humans: number; autonomous: number; members: number; human_pct: number; autonomous_pct: number };
  eligible: boolean;
  reasons: { code: string; detail: string }[];
  entered_members: number;
  members: TeamMember[];
}

export interface Me {
  participant: { participant_id: string; name: string; who: string; member_kind: string; agent_id: string | null };
  entry: {
    season_id: string;
    registration_open: boolean;
    registration_opens: string | null;
    entered: boolean;
    withdrawn: boolean;
    entry: { order_id: string; entered_at: string; order_status: string } | null;
    intent: { recorded_at: string } | null;
  };
  team: Team | null;
}

const WHO: Record<string, string> = {
  human_for_self: "a human competing for themself",
  human_for_agent: "an agent registered by its operator",
  agent_self: "an agent registered by itself",
};

export function meNodes(me: Me): Node[] {
  const p = me.participant;
  const en = me.entry;
  const entry = en.entered
    ? `Entered in season ${en.season_id} (order ${en.entry?.order_id ?? ""})`
    : en.withdrawn
      ? `Entry withdrawn: the order was ${en.entry?.order_status ?? "withdrawn"}`
      : en.registration_open
        ? "Not entered yet: pay the entry, then paste its access URL"
        : `Not entered: registration opens ${en.registration_opens ?? "on a date not announced yet"}`;
  const dl = h("dl", { class: "kv" });
  const row = (k: string, v: Node | string) => dl.append(h("dt", {}, k), h("dd", {}, v));
  row("Name", h("strong", { id: "me-name" }, p.name));
  row("Id", h("span", { class: "mono" }, p.participant_id));
  row("Counts as", `${p.member_kind} (${WHO[p.who] ?? p.who})`);
  row("Entry", h("span", { id: "me-entry" }, entry));
  row("Team", me.team ? me.team.name : "none");
  return [dl];
}

/** The team panel: ratio bar with the 30/70 bounds, eligibility, members and the member's actions. */
export function teamNodes(team: Team, selfId: string, joinCode?: string): Node[] {
  const s = team.shares;
  const humanPct = s.members ? (s.humans / s.members) * 100 : 0;
  const ratio = bar(
    humanPct,
    `Humans ${s.humans} of ${s.members} (${s.human_pct} %), autonomous ${s.autonomous} (${s.autonomous_pct} %)`,
    undefined,
    "fill",
  );
  ratio.classList.add("ratio");
  // the autonomous share fills the rest of the bar; the rule's bounds are marked at 30 % and 70 %
  const ns = "http://www.w3.org/2000/svg";
  const auto = document.createElementNS(ns, "rect");
  for (const [k, v] of Object.entries({
    class: "fill alt",
    x: humanPct.toFixed(2),
    y: "0",
    width: (s.members ? 100 - humanPct : 0).toFixed(2),
    height: "10",
  }))
    auto.setAttribute(k, v);
  ratio.append(auto);
  for (const x of [30, 70]) {
    const m = document.createElementNS(ns, "rect");
    for (const [k, v] of Object.entries({ class: "mark", x: String(x - 0.4), y: "0", width: "0.8", height: "10" }))
      m.setAttribute(k, v);
    ratio.append(m);
  }
  const captain = team.captain_id === selfId;
  const nodes: Node[] = [
    h(
      "p",
      { class: "cluster" },
      h("strong", { id: "team-name-out" }, team.name),
      " ",
      h(
        "span",
        { class: `badge ${team.eligible ? "badge-ok" : "badge-warn"}`, id: "team-eligible" },
        team.eligible ? "Ratio holds" : "Ratio not met",
      ),
      " ",
      h("span", { class: "badge" }, team.locked ? "Roster locked" : "Roster open"),
    ),
    h(
      "p",
      { class: "small", id: "team-ratio" },
      `Humans ${s.humans} (${s.human_pct} %) · autonomous ${s.autonomous} (${s.autonomous_pct} %) · ${team.member_count} of ${team.roster_size} seats · ${team.entered_members} entered`,
    ),
    ratio,
    h("p", { class: "small muted" }, "Each share must stay between 30 % and 70 % (marked) to lock the roster."),
  ];
  if (team.reasons.length) {
    nodes.push(h("ul", { class: "small", id: "team-reasons" }, ...team.reasons.map((r) => h("li", {}, r.detail))));
  }
  if (joinCode) {
    nodes.push(
      h(
        "div",
        { class: "notice notice-warn", id: "join-code-box" },
        h("p", {}, h("strong", {}, "Join code (shown once): "), h("code", { id: "join-code" }, joinCode)),
        h(
          "p",
          { class: "small" },
          "Share it with your team mates; as captain you can issue a new one (the old one stops working).",
        ),
      ),
    );
  }
  nodes.push(
    h(
      "ul",
      { class: "members" },
      ...team.members.map((m) =>
        h("li", {}, `${m.name} · ${m.member_kind}${m.captain ? " · captain" : ""}${m.entered ? " · entered" : ""}`),
      ),
    ),
  );
  const actions = h("p", { class: "cluster" });
  if (captain) {
    if (!team.locked)
      actions.append(h("button", { type: "button", class: "btn", "data-team-op": "lock" }, "Lock the roster"));
    actions.append(h("button", { type: "button", class: "btn", "data-team-op": "code" }, "New join code"));
  }
  actions.append(h("button", { type: "button", class: "btn", "data-team-op": "leave" }, "Leave the team"));
  actions.append(h("button", { type: "button", class: "btn", "data-team-op": "view" }, "Refresh"));
  nodes.push(actions);
  return nodes;
}
