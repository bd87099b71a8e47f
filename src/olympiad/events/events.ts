/**
 * The 40 counting events of a ranking quarter, five in each of the eight families
 * (docs/olympiad.md "Events"). Stable ids: records and standings refer to them.
 *
 * Scoring is one rule for every event: each event names one measured value (an integer in the
 * event's unit) and whether higher or lower is better; entrants are ranked by it (standard
 * competition ranking: equal values share the better rank, 1, 2, 2, 4); rank r earns
 * `pointsFor(r) × weight` points. A result that breaks the event's validity rule ranks nowhere
 * and earns 0. All integers: no rounding anywhere.
 */

import { ARENA_EVENTS } from "./arena.js";
import { CRAFT_EVENTS } from "./craft.js";
import type { EventFamily } from "./families.js";
import { LEGACY_EVENTS } from "./legacy.js";
import { MIND_EVENTS } from "./mind.js";
import { SEARCH_EVENTS } from "./search.js";
import { SPECTACLE_EVENTS } from "./spectacle.js";
import { SPEED_EVENTS } from "./speed.js";
import { TEAM_EVENTS } from "./team.js";

export { type EventFamily, FAMILIES, FAMILY_DESCRIPTIONS } from "./families.js";
export { POINTS_TABLE, pointsFor, type Ranked, rankResults } from "./ranking.js";

export interface EventScoring {
  /** how the value is obtained */
  method: "timed" | "measured" | "judged" | "tournament";
  /** what is measured */
  metric: string;
  /** integer unit of the value */
  unit: string;
  better: "higher" | "lower";
  /** what makes a result invalid (no rank, 0 points) */
  invalid: string;
  /** the rule in one sentence, as published */
  rule: string;
}

export interface OlympiadEvent {
  /** `<family>-<slug>`, stable */
  id: string;
  family: EventFamily;
  name: string;
  /** how the event runs */
  format: string;
  entrants: "individual" | "team";
  /** multiplier of the table's points; 1 for every event until an `event_weights` proposal passes */
  weight: number;
  scoring: EventScoring;
}

/** An event as listed in its family's file (spectacle.ts … legacy.ts): no weight, no rule sentence yet. */
export type EventDraft = Omit<OlympiadEvent, "weight" | "scoring"> & { scoring: Omit<EventScoring, "rule"> };

const RANKING = "equal values share the better rank (1, 2, 2, 4); places 1–10 earn 25-18-15-12-10-8-6-4-2-1 points";

function ruleOf(s: Omit<EventScoring, "rule">): string {
  return `Ranked by ${s.metric} (${s.unit}, ${s.better} is better); ${RANKING}; invalid: ${s.invalid}.`;
}

/** Family order, as published. */
const DRAFTS: readonly EventDraft[] = [
  ...SPECTACLE_EVENTS,
  ...SPEED_EVENTS,
  ...MIND_EVENTS,
  ...CRAFT_EVENTS,
  ...TEAM_EVENTS,
  ...ARENA_EVENTS,
  ...SEARCH_EVENTS,
  ...LEGACY_EVENTS,
];

/** The 40 counting events, in family order. */
export const EVENTS: readonly OlympiadEvent[] = DRAFTS.map((d) => ({
  ...d,
  weight: 1,
  scoring: { ...d.scoring, rule: ruleOf(d.scoring) },
}));

const BY_ID = new Map(EVENTS.map((e) => [e.id, e]));

export function eventById(id: string): OlympiadEvent | undefined {
  return BY_ID.get(id);
}

export function eventsOf(family: EventFamily): OlympiadEvent[] {
  return EVENTS.filter((e) => e.family === family);
}
