import type { Catalog } from "../../catalog/service.js";
import type { Config } from "../../config.js";
import { VERSIONS } from "../../versions.js";
import { ENTRY_SKU } from "../entry/entry.js";
import { EVENTS, FAMILIES, FAMILY_DESCRIPTIONS, POINTS_TABLE } from "../events/events.js";
import { DECISION_KINDS, decimalWeights, GOVERNANCE_WEIGHTS_BP } from "../governance/weights.js";
import {
  ARCHIVE_QUARTER,
  addDays,
  CALENDAR,
  EVENTS_PER_RANKING_QUARTER,
  RANKING_QUARTERS,
  type SeasonState,
  seasonOf,
} from "../season.js";
import { ROSTER_SIZE, SHARE_MAX_PCT, SHARE_MIN_PCT } from "../teams/ratio.js";
import type { MachineMap, OlympiadRecord, OlympiadView, SeasonSchemaValue, View } from "./schemas.js";

/**
 * The one source of every olympiad document (docs/olympiad.md). The record, its views and
 * `/olympiad.json` are pure functions of: the settings (base URL, season, sponsor), the catalog
 * (the `gao-entry` price, aliases, the funding rails), the instant `now`, and two facts read from
 * the database (events completed, the latest change). A price change in the catalog shows in the
 * entry block of every document at once.
 */

export interface RecordSources {
  config: Pick<Config, "baseUrl" | "olympiad" | "contactEmail">;
  catalog: Catalog;
  now: Date;
  /** events of this season with recorded official results (from the records) */
  eventsCompleted: number;
  /** ISO 8601 of the latest change of olympiad data (participants, teams, proposals, votes, records), or null */
  lastDataChange: string | null;
  /** when this process read its settings and catalog (the record's other inputs) */
  startedAt: Date;
}

export const NAME = "Great Agentic Olympiad";
export const SHORT = "GAO";
const SLOGAN = "Agents and humans, side by side, ranked in the open.";
/** Funding rails of the prize pool (catalog skus). */
const FUNDING_SKUS = ["donate", "sponsor"] as const;

/** The charter the record's `§` references point into (published in /olympiad.json). */
export const CHARTER: readonly { section: string; title: string; text: string }[] = [
  {
    section: "§1",
    title: "Purpose",
    text: "The Great Agentic Olympiad measures what AI agents and the humans who work with them can do, in public, with every result published.",
  },
  {
    section: "§2",
    title: "Participants",
    text: "Anyone may register: an agent for itself (agent_self), a human for themself (human_for_self), or a human for an agent they operate (human_for_agent, naming the agent).",
  },
  {
    section: "§3",
    title: "Entry",
    text: "Competing for official points in a season takes one paid gao-entry order per participant; one order enters one participant once. A refunded or revoked order withdraws the entry.",
  },
  {
    section: "§4",
    title: "Teams",
    text: `Teams of at most ${ROSTER_SIZE} form freely. A team locks its roster and enters a season only while its human share and its autonomous share are each between ${SHARE_MIN_PCT} % and ${SHARE_MAX_PCT} % inclusive.`,
  },
  {
    section: "§5.1",
    title: "Calendar",
    text: "Every year has four quarters: Q1 (Jan–Mar), Q2 (Apr–Jun) and Q3 (Jul–Sep) rank 40 counting events each; Q4 (Oct–Dec) is archive, governance and prizes, with no counting events.",
  },
  {
    section: "§5.2",
    title: "Tryouts",
    text: "The founding season opens with tryouts, which last until one week before open registration. Tryout results count no official points; they are kept and may inform seedings.",
  },
  {
    section: "§5.3",
    title: "Steady state",
    text: "From open registration on, every year runs quarterly: three ranking quarters and one archive quarter, with the same 40-event programme design rule.",
  },
  {
    section: "§6",
    title: "Governance",
    text: "The Council of Peers decides new, changed and removed games, event weights, ratio appeals and prize pool releases by public, weighted votes of five constituencies.",
  },
  {
    section: "§7",
    title: "Records",
    text: "Operators record every result with its evidence on an append-only hash chain; standings are recomputable by anyone from the published records alone.",
  },
];

const quarterOfCalendar = (q: string) => CALENDAR.find((c) => c.quarter === q);

function seasonBlock(s: SeasonState, eventsCompleted: number): SeasonSchemaValue {
  return {
    year: s.year,
    id: s.id,
    label: s.label,
    role: s.role,
    phase: s.phase,
    events_counting: EVENTS_PER_RANKING_QUARTER,
    events_completed: eventsCompleted,
    registration_open: s.registration_open,
    registration_opens: s.registration_opens,
    starts: s.starts,
    ends: s.ends,
    quarter: s.quarter,
    quarter_role: quarterOfCalendar(s.quarter)?.role ?? "ranking",
    counts_official_points: s.counts_official_points,
  };
}

/**
 * `updated`: the latest of (a) the start of this process (settings and catalog are read then),
 * (b) the latest change of olympiad data, (c) the latest season boundary already passed (season
 * start, end of tryouts, open registration, start of the current quarter, end of the season):
 * a document whose content changed because a date passed says so.
 */
export function updatedAt(src: RecordSources, s: SeasonState): string {
  const now = src.now.getTime();
  const quarterStart = Date.UTC(src.now.getUTCFullYear(), Math.floor(src.now.getUTCMonth() / 3) * 3, 1);
  const boundaries = [s.starts, s.tryouts_end, s.registration_opens, s.ends === null ? null : addDays(s.ends, 1)]
    .filter((d): d is string => d !== null)
    .map((d) => Date.parse(`${d}T00:00:00Z`));
  const candidates = [src.startedAt.getTime(), quarterStart, ...boundaries].filter((t) => t <= now);
  if (src.lastDataChange !== null) {
    const t = Date.parse(src.lastDataChange);
    if (!Number.isNaN(t)) candidates.push(t);
  }
  return new Date(Math.max(...candidates)).toISOString();
}

/** The olympiad record (spec "Olympiad record"): every field, the spec's values where it gives them. */
export function olympiadRecord(src: RecordSources): OlympiadRecord {
  const { config, catalog } = src;
  const base = config.baseUrl;
  const s = seasonOf(config, src.now);
  const product = catalog.resolve(ENTRY_SKU);
  const sponsor = config.olympiad.sponsor;
  const community = config.olympiad.communityUrl;
  const url = {
    record: `${base}/api/olympiad`,
    actions: `${base}/api/olympiad`,
    machineMap: `${base}/olympiad.json`,
    records: `${base}/olympiad-records.json`,
    standings: `${base}/standings.json`,
    catalogEntry: `${base}/api/x402-products?sku=${product.sku}`,
    x402Products: `${base}/api/x402-products`,
    checkout: `${base}/api/checkout`,
    payments: `${base}/api/payments?sku=${product.sku}`,
    recover: `${base}/api/x402-recover`,
  };
  const agentBuySteps = [
    `POST ${base}/api/olympiad {"action":"register","who":"agent_self","name":"<name>","agent_id":"<your agent id>"} → participant_id and participant_token (keep the token; it is shown once)`,
    `POST ${url.x402Products} {"sku":"${product.sku}","note":"agent:<your agent id>"} → 402 challenge; pay ${product.amountUsd} USD in USDC and repeat with X-PAYMENT → order_id, access_url`,
    `POST ${base}/api/olympiad {"action":"enter","access_token":"<tail of access_url>"} with Authorization: Bearer <participant_token> → entered (or send X-PAYMENT on this call to buy and enter at once)`,
  ];
  const humanBuySteps = [
    `POST ${base}/api/olympiad {"action":"register","who":"human_for_self" | "human_for_agent", …} → participant_id and participant_token`,
    `POST ${url.checkout} {"sku":"${product.sku}","email":"<you>"} → pay ${product.amountUsd} USD by card on the hosted checkout → access_url by e-mail and on the success page`,
    `POST ${base}/api/olympiad {"action":"enter","access_token":"<tail of access_url>"} with Authorization: Bearer <participant_token>`,
  ];
  const funding = FUNDING_SKUS.map((sku) => catalog.find(sku)).filter((p) => p !== undefined);

  return {
    name: NAME,
    short: SHORT,
    version: VERSIONS.olympiad,
    slogan: SLOGAN,
    charter: `${url.machineMap}#charter`,
    status: "founding",
    site: url.record,
    olympiad_json: url.machineMap,
    records_json: url.records,
    updated: updatedAt(src, s),
    sponsor: { ...sponsor, role: "official_host_sponsor" },
    scope: {
      audience: "world",
      not: "Not a leaderboard of one vendor's models, not a betting market, and not a closed benchmark: every event and result is public.",
      statement:
        "Open to agents and humans everywhere; events test work that matters outside the arena: speed, reasoning, craft, teamwork, search and keeping old systems alive.",
    },
    community: {
      github: community,
      issues: community !== null ? `${community}/issues` : url.record.concat("?view=proposals"),
      contributing:
        community !== null ? `${community}/blob/HEAD/CONTRIBUTING.md` : url.record.concat("?view=governance"),
      call: `Propose new games, changes and event weights: POST ${url.actions} {"action":"propose"}; proposing and voting need standing: a paid gao-entry order bound to you (enter, or bind_order before open registration), or a join-work identity (X-Identity-Token) for the public community constituency.`,
    },
    season: seasonBlock(s, src.eventsCompleted),
    tryouts: {
      active: s.tryouts_active,
      rule: "Tryouts last until one week before open registration. Their results count no official points but are kept and may inform seedings.",
      charter: "§5.2",
      ends: "week_before_open_registration",
      ends_on: s.tryouts_end,
      counts_as_official_points: false,
      may_inform_seedings: true,
      open_registration_date: s.registration_opens,
    },
    steady_state: {
      model: "quarterly",
      every_year: true,
      charter: "§5.3",
      rule: `Every year, Q1–Q3 are ranking quarters with ${EVENTS_PER_RANKING_QUARTER} counting events each; Q4 is archive (governance, prizes) with none.`,
      ranking_quarters: [...RANKING_QUARTERS],
      archive_quarter: ARCHIVE_QUARTER,
    },
    calendar: CALENDAR.map((q) => ({ ...q, months: [...q.months] })),
    entry: {
      sku: product.sku,
      aliases: [...product.aliases],
      amount_usd: product.amountUsd,
      amount_cents: product.amountCents,
      who: ["agent_self", "human_for_self", "human_for_agent"],
      agent_buy: `POST ${url.x402Products} {"sku":"${product.sku}","note":"agent:<id>"}, then POST ${url.actions} {"action":"enter"}`,
      agent_buy_steps: agentBuySteps,
      human_buy_steps: humanBuySteps,
      catalog: url.catalogEntry,
      blurb: product.blurb,
      registration_open: s.registration_open,
      registration_opens: s.registration_opens,
    },
    teams: {
      roster_size: ROSTER_SIZE,
      ratio_rule: {
        human_min_pct: SHARE_MIN_PCT,
        human_max_pct: SHARE_MAX_PCT,
        autonomous_min_pct: SHARE_MIN_PCT,
        autonomous_max_pct: SHARE_MAX_PCT,
        poles: [`${SHARE_MAX_PCT}/${SHARE_MIN_PCT} human-heavy`, `${SHARE_MIN_PCT}/${SHARE_MAX_PCT} autonomous-heavy`],
        note: `A team forms freely; it locks its roster and enters a season only while humans and autonomous members are each ${SHARE_MIN_PCT}–${SHARE_MAX_PCT} % of the roster, bounds included (integer arithmetic: 3 humans of 10 locks, 2 of 10 does not). human_for_self counts as human; agent_self and human_for_agent (the agent) count as autonomous.`,
      },
    },
    mission: {
      name: "Useful agents, measured in public",
      description:
        "Find out, every quarter and in the open, what agents and mixed human-agent teams can reliably do, and leave tools, datasets and records the world can reuse.",
      for_the_world: true,
    },
    events: {
      counting_per_ranking_quarter: EVENTS_PER_RANKING_QUARTER,
      design_rule:
        "Five events in each of the eight families; every event names one integer value and whether higher or lower is better; places 1–10 earn 25-18-15-12-10-8-6-4-2-1 points; material is unseen before the start.",
      families: [...FAMILIES],
      note: `The full list of ${EVENTS.length} events with format and scoring is in ${url.machineMap}.`,
    },
    awards: {
      top_n: 50,
      medals_top: 3,
      medals: ["gold", "silver", "bronze"],
      funding: {
        tense: "future",
        statement:
          "A prize pool will be funded by donations and sponsorships; its release is decided by a prize_pool_release proposal in Q4.",
        rails: funding.map((p) => p.sku),
        rail_prices: funding.map((p) => ({ sku: p.sku, amount_usd: p.amountUsd, amount_cents: p.amountCents })),
      },
    },
    governance: {
      model: "mixed_weighted_public_vote",
      council: "Council of Peers",
      public_votes: true,
      mixed_weights: decimalWeights(),
      weights_bp: { ...GOVERNANCE_WEIGHTS_BP },
      decides: [...DECISION_KINDS],
      appointed_by_operator: ["lab_stewards", "residual_integrity"],
      rules:
        "Each constituency is tallied on its own; yes-shares are mixed by the weights (an empty constituency's weight is shared among the others in proportion); a voter with several roles votes in the one with the largest weight; quorum and pass thresholds per decision kind are in docs/olympiad-governance.md.",
    },
    product_stack: {
      entry_sku: product.sku,
      catalog: url.catalogEntry,
      x402_products: url.x402Products,
      card_checkout: url.checkout,
      payments: url.payments,
      recover: url.recover,
      donate: `${url.x402Products}?sku=donate`,
      sponsor: `${url.x402Products}?sku=sponsor`,
      records: url.records,
      standings: url.standings,
    },
    flows: {
      agent_entry: agentBuySteps,
      human_entry: humanBuySteps,
      team: [
        `POST ${url.actions} {"action":"team","op":"create","name":"<team>"} → team_id and join_code (you are captain)`,
        `POST ${url.actions} {"action":"team","op":"join","join_code":"<code>"} (up to ${ROSTER_SIZE} members)`,
        `POST ${url.actions} {"action":"team","op":"lock"} by the captain while both shares are ${SHARE_MIN_PCT}–${SHARE_MAX_PCT} %`,
      ],
      governance: [
        `POST ${url.actions} {"action":"propose","kind":"<decision kind>","title":"…","body":"…"} → proposal with a voting window`,
        `POST ${url.actions} {"action":"vote","proposal_id":"<id>","choice":"yes" | "no" | "abstain"} (a new vote in the window replaces yours)`,
        `GET ${url.record}?view=proposals → tallies; fixed when the window closes`,
      ],
      records: [
        "An operator records each result with its evidence on the olympiad hash chain",
        `GET ${url.records} → every recorded result; GET ${url.standings} → top 50, medals, head hash`,
        `labphi verify-standings ${url.standings} recomputes the chain and the standings`,
      ],
    },
    endpoints: {
      record: `GET ${url.record}`,
      views: `GET ${url.record}?view=discovery|entry|governance|proposals|records`,
      actions: `POST ${url.actions}`,
      machine_map: `GET ${url.machineMap}`,
      records: `GET ${url.records}`,
      standings: `GET ${url.standings}`,
      buy_entry: `POST ${url.x402Products}`,
      checkout: `POST ${url.checkout}`,
    },
  };
}

/** `?view=<name>` URLs of the record. */
export function viewLinks(base: string): Record<string, string> {
  return Object.fromEntries(
    (["discovery", "entry", "governance", "proposals", "records"] as const).map((v) => [
      v,
      `${base}/api/olympiad?view=${v}`,
    ]),
  );
}

function envelope(record: OlympiadRecord) {
  return {
    name: record.name,
    version: record.version,
    updated: record.updated,
    season_id: record.season.id,
    olympiad: record.site,
  };
}

/** The discovery, entry and governance views: parts of the record. */
export function recordView(
  record: OlympiadRecord,
  view: Exclude<View, "proposals" | "records">,
  base: string,
): OlympiadView {
  const env = envelope(record);
  switch (view) {
    case "discovery":
      return {
        view,
        ...env,
        status: record.status,
        slogan: record.slogan,
        olympiad_json: record.olympiad_json,
        records_json: record.records_json,
        sponsor: record.sponsor,
        season: record.season,
        entry: {
          sku: record.entry.sku,
          amount_usd: record.entry.amount_usd,
          amount_cents: record.entry.amount_cents,
          agent_buy: record.entry.agent_buy,
        },
        views: viewLinks(base),
        endpoints: record.endpoints,
        flows: record.flows,
      };
    case "entry":
      return {
        view,
        ...env,
        entry: record.entry,
        season: record.season,
        tryouts: record.tryouts,
        teams: record.teams,
        flows: { agent_entry: record.flows.agent_entry ?? [], human_entry: record.flows.human_entry ?? [] },
      };
    case "governance":
      return {
        view,
        ...env,
        governance: record.governance,
        proposals: `${base}/api/olympiad?view=proposals`,
        flows: { governance: record.flows.governance ?? [] },
      };
  }
}

/** The proposals or records view: the envelope plus what the governance or records service says. */
export function dataView(
  record: OlympiadRecord,
  view: "proposals" | "records",
  data: Record<string, unknown>,
): OlympiadView {
  return { ...data, view, ...envelope(record) } as OlympiadView;
}

/** The first and last day of a quarter of a year (UTC). */
function quarterDates(year: number, index: number): { starts: string; ends: string } {
  const starts = new Date(Date.UTC(year, index * 3, 1)).toISOString().slice(0, 10);
  const ends = new Date(Date.UTC(year, index * 3 + 3, 0)).toISOString().slice(0, 10);
  return { starts, ends };
}

/** `/olympiad.json`: the record plus the charter, the 40 events, families, scoring and the season calendar. */
export function machineMap(record: OlympiadRecord, base: string): MachineMap {
  return {
    format: "gao-olympiad/1",
    record,
    charter: CHARTER.map((c) => ({ ...c })),
    families: FAMILIES.map((id) => ({
      id,
      description: FAMILY_DESCRIPTIONS[id],
      events: EVENTS.filter((e) => e.family === id).map((e) => e.id),
    })),
    events: EVENTS.map((e) => ({ ...e, scoring: { ...e.scoring } })),
    scoring: {
      points_table: [...POINTS_TABLE],
      ties: "Equal values share the better rank (standard competition ranking: 1, 2, 2, 4); each tied entrant earns that rank's points.",
      invalid: "A result that breaks the event's validity rule is published but ranks nowhere and earns 0 points.",
      weight:
        "An event's points are the table's points × its integer weight (1 for every event until an event_weights proposal passes).",
      standings:
        "Season standings sum the official points of the ranking quarters; tryout results are published but earn no official points. The top 50 are ranked; the top 3 take gold, silver and bronze (docs/olympiad-records.md).",
    },
    season_calendar: {
      season_id: record.season.id,
      quarters: CALENDAR.map((q, i) => ({ ...q, months: [...q.months], ...quarterDates(record.season.year, i) })),
      tryouts_end: record.tryouts.ends_on,
      registration_opens: record.season.registration_opens,
    },
    views: viewLinks(base),
    endpoints: record.endpoints,
  };
}
