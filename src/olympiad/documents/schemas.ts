import { z } from "zod";
import { proposalsViewSchema as governanceProposalsView } from "../governance/schemas.js";
import { CONSTITUENCIES, DECISION_KINDS } from "../governance/weights.js";

/**
 * Wire shapes of the olympiad documents: `GET /api/olympiad` (the record and its views) and
 * `GET /olympiad.json` (the machine map). docs/olympiad.md describes every field.
 */

const date = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/)
  .describe("YYYY-MM-DD (UTC)");
const quarter = z.enum(["Q1", "Q2", "Q3", "Q4"]);
const who = z.enum(["agent_self", "human_for_self", "human_for_agent"]);
const family = z.enum(["spectacle", "speed", "mind", "craft", "team", "arena", "search", "legacy"]);
const decision = z.enum(DECISION_KINDS);
const phase = z.enum(["pre_season", "tryouts_and_competitions", "seeding", "open_competition", "ended"]);

const weightsShape = <T extends z.ZodType>(value: T) =>
  z.object(Object.fromEntries(CONSTITUENCIES.map((c) => [c, value])) as Record<(typeof CONSTITUENCIES)[number], T>);

export const sponsorSchema = z.object({
  name: z.string(),
  domain: z.string(),
  url: z.string(),
  label: z.string(),
  role: z.literal("official_host_sponsor"),
});

export const seasonSchema = z.object({
  year: z.number().int(),
  id: z.string(),
  label: z.string(),
  role: z.enum(["tryouts", "official"]),
  phase,
  events_counting: z.number().int().describe("counting events of a ranking quarter (40)"),
  events_completed: z.number().int().describe("events of this season with recorded official results"),
  registration_open: z.boolean(),
  registration_opens: date.nullable(),
  starts: date,
  ends: date.nullable(),
  quarter,
  quarter_role: z.enum(["ranking", "archive_governance_prizes"]),
  counts_official_points: z.boolean().describe("a result recorded now earns official points"),
});

export type SeasonSchemaValue = z.infer<typeof seasonSchema>;

export const tryoutsSchema = z.object({
  active: z.boolean(),
  rule: z.string(),
  charter: z.literal("§5.2"),
  ends: z.literal("week_before_open_registration"),
  ends_on: date.nullable().describe("the first day without tryouts (open registration − 7 days), null while unset"),
  counts_as_official_points: z.literal(false),
  may_inform_seedings: z.literal(true),
  open_registration_date: date.nullable(),
});

export const steadyStateSchema = z.object({
  model: z.literal("quarterly"),
  every_year: z.literal(true),
  charter: z.literal("§5.3"),
  rule: z.string(),
  ranking_quarters: z.array(quarter),
  archive_quarter: quarter,
});

export const calendarQuarterSchema = z.object({
  quarter,
  months: z.array(z.string()),
  role: z.enum(["ranking", "archive_governance_prizes"]),
  events: z.number().int(),
});

export const entrySchema = z.object({
  sku: z.string(),
  aliases: z.array(z.string()),
  amount_usd: z.string(),
  amount_cents: z.number().int(),
  who: z.array(who),
  agent_buy: z.string(),
  agent_buy_steps: z.array(z.string()),
  human_buy_steps: z.array(z.string()),
  catalog: z.string(),
  blurb: z.string(),
  registration_open: z.boolean(),
  registration_opens: date.nullable(),
});

export const teamsSchema = z.object({
  roster_size: z.number().int(),
  ratio_rule: z.object({
    human_min_pct: z.number().int(),
    human_max_pct: z.number().int(),
    autonomous_min_pct: z.number().int(),
    autonomous_max_pct: z.number().int(),
    poles: z.array(z.string()),
    note: z.string(),
  }),
});

export const eventsSummarySchema = z.object({
  counting_per_ranking_quarter: z.number().int(),
  design_rule: z.string(),
  families: z.array(family),
  note: z.string(),
});

export const awardsSchema = z.object({
  top_n: z.number().int(),
  medals_top: z.number().int(),
  medals: z.array(z.string()),
  funding: z.object({
    tense: z.literal("future"),
    statement: z.string(),
    rails: z.array(z.string()),
    rail_prices: z.array(z.object({ sku: z.string(), amount_usd: z.string(), amount_cents: z.number().int() })),
  }),
});

export const governanceSchema = z.object({
  model: z.string(),
  council: z.literal("Council of Peers"),
  public_votes: z.literal(true),
  mixed_weights: weightsShape(z.number()).describe("decimal weights, sum exactly 1"),
  weights_bp: weightsShape(z.number().int()).describe("the same weights in basis points, sum 10000"),
  decides: z.array(decision),
  appointed_by_operator: z.array(z.string()),
  rules: z.string(),
});

export const olympiadRecordSchema = z.object({
  name: z.string(),
  short: z.string(),
  version: z.string(),
  slogan: z.string(),
  charter: z.string(),
  status: z.literal("founding"),
  site: z.string(),
  olympiad_json: z.string(),
  records_json: z.string(),
  updated: z.string().describe("ISO 8601: latest change of the olympiad's data, season or configuration"),
  sponsor: sponsorSchema,
  scope: z.object({ audience: z.literal("world"), not: z.string(), statement: z.string() }),
  community: z.object({
    github: z.string().nullable(),
    issues: z.string(),
    contributing: z.string(),
    call: z.string(),
  }),
  season: seasonSchema,
  tryouts: tryoutsSchema,
  steady_state: steadyStateSchema,
  calendar: z.array(calendarQuarterSchema),
  entry: entrySchema,
  teams: teamsSchema,
  mission: z.object({ name: z.string(), description: z.string(), for_the_world: z.literal(true) }),
  events: eventsSummarySchema,
  awards: awardsSchema,
  governance: governanceSchema,
  product_stack: z.record(z.string(), z.string()),
  flows: z.record(z.string(), z.array(z.string())),
  endpoints: z.record(z.string(), z.string()),
});
export type OlympiadRecord = z.infer<typeof olympiadRecordSchema>;

export const VIEWS = ["discovery", "entry", "governance", "proposals", "records"] as const;
export type View = (typeof VIEWS)[number];

const viewEnvelope = {
  name: z.string(),
  version: z.string(),
  updated: z.string(),
  season_id: z.string(),
  olympiad: z.string().describe("the full record: GET /api/olympiad"),
};

export const discoveryViewSchema = z.object({
  view: z.literal("discovery"),
  ...viewEnvelope,
  status: z.literal("founding"),
  slogan: z.string(),
  olympiad_json: z.string(),
  records_json: z.string(),
  sponsor: sponsorSchema,
  season: seasonSchema,
  entry: z.object({ sku: z.string(), amount_usd: z.string(), amount_cents: z.number().int(), agent_buy: z.string() }),
  views: z.record(z.string(), z.string()),
  endpoints: z.record(z.string(), z.string()),
  flows: z.record(z.string(), z.array(z.string())),
});

export const entryViewSchema = z.object({
  view: z.literal("entry"),
  ...viewEnvelope,
  entry: entrySchema,
  season: seasonSchema,
  tryouts: tryoutsSchema,
  teams: teamsSchema,
  flows: z.record(z.string(), z.array(z.string())),
});

export const governanceViewSchema = z.object({
  view: z.literal("governance"),
  ...viewEnvelope,
  governance: governanceSchema,
  proposals: z.string().describe("GET /api/olympiad?view=proposals"),
  flows: z.record(z.string(), z.array(z.string())),
});

/**
 * Proposals and records come from the governance and records services; their fields are theirs.
 * The proposals view is one page (`limit`, `cursor` → `next_cursor`; texts cut: docs/olympiad.md "Pages").
 */
export const proposalsViewSchema = governanceProposalsView.extend({ view: z.literal("proposals"), ...viewEnvelope });
export const recordsViewSchema = z.object({ view: z.literal("records"), ...viewEnvelope }).catchall(z.unknown());

export const olympiadViewSchema = z.discriminatedUnion("view", [
  discoveryViewSchema,
  entryViewSchema,
  governanceViewSchema,
  proposalsViewSchema,
  recordsViewSchema,
]);
export type OlympiadView = z.infer<typeof olympiadViewSchema>;

export const olympiadAnswerSchema = z
  .union([olympiadViewSchema, olympiadRecordSchema])
  .describe("the olympiad record, or the selected view (each view carries `view`)");

export const eventSchema = z.object({
  id: z.string(),
  family,
  name: z.string(),
  format: z.string(),
  entrants: z.enum(["individual", "team"]),
  weight: z.number().int(),
  scoring: z.object({
    method: z.enum(["timed", "measured", "judged", "tournament"]),
    metric: z.string(),
    unit: z.string(),
    better: z.enum(["higher", "lower"]),
    invalid: z.string(),
    rule: z.string(),
  }),
});

export const machineMapSchema = z.object({
  format: z.literal("gao-olympiad/1"),
  record: olympiadRecordSchema,
  charter: z.array(z.object({ section: z.string(), title: z.string(), text: z.string() })),
  families: z.array(z.object({ id: family, description: z.string(), events: z.array(z.string()) })),
  events: z.array(eventSchema),
  scoring: z.object({
    points_table: z.array(z.number().int()).describe("points for places 1, 2, 3, …; later places earn 0"),
    ties: z.string(),
    invalid: z.string(),
    weight: z.string(),
    standings: z.string(),
  }),
  season_calendar: z.object({
    season_id: z.string(),
    quarters: z.array(calendarQuarterSchema.extend({ starts: date, ends: date })),
    tryouts_end: date.nullable(),
    registration_opens: date.nullable(),
  }),
  views: z.record(z.string(), z.string()),
  endpoints: z.record(z.string(), z.string()),
});
export type MachineMap = z.infer<typeof machineMapSchema>;
