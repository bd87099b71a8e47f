import type { Config } from "../config.js";
import { Problem } from "../http/problem.js";

/**
 * The season's state at an instant, from the OLYMPIAD_* settings alone (docs/olympiad.md "Season").
 * Pure: every caller passes `now`, so tests and the documents agree on one clock.
 *
 * - Tryouts run from the season's start until one week before open registration
 *   (spec rule 1); their results count no official points but are kept for seeding.
 * - Open registration begins on OLYMPIAD_REGISTRATION_OPENS (00:00 UTC); unset = not announced,
 *   and tryouts continue.
 * - Q1–Q3 are ranking quarters of 40 counting events each; Q4 is archive (governance, prizes), 0 events.
 */

export type Quarter = "Q1" | "Q2" | "Q3" | "Q4";

export type SeasonPhase =
  /** before OLYMPIAD_SEASON_STARTS */
  | "pre_season"
  /** the spec's founding phase: tryouts run, competitions are held, no official points */
  | "tryouts_and_competitions"
  /** the week between the end of tryouts and open registration: tryout results inform seedings */
  | "seeding"
  /** open registration: paid entries compete for official points in the ranking quarters */
  | "open_competition"
  /** after OLYMPIAD_SEASON_ENDS */
  | "ended";

export interface QuarterInfo {
  quarter: Quarter;
  months: string[];
  role: "ranking" | "archive_governance_prizes";
  events: number;
}

/** Counting events of a ranking quarter (spec: 40 in Q1–Q3, 0 in Q4). */
export const EVENTS_PER_RANKING_QUARTER = 40;

/** Tryouts end this many days before open registration (spec: one week). */
export const TRYOUTS_END_DAYS_BEFORE_OPEN = 7;

/** The steady-state calendar, every year (spec "calendar"). Months are UTC calendar months. */
export const CALENDAR: readonly QuarterInfo[] = [
  { quarter: "Q1", months: ["Jan", "Feb", "Mar"], role: "ranking", events: EVENTS_PER_RANKING_QUARTER },
  { quarter: "Q2", months: ["Apr", "May", "Jun"], role: "ranking", events: EVENTS_PER_RANKING_QUARTER },
  { quarter: "Q3", months: ["Jul", "Aug", "Sep"], role: "ranking", events: EVENTS_PER_RANKING_QUARTER },
  { quarter: "Q4", months: ["Oct", "Nov", "Dec"], role: "archive_governance_prizes", events: 0 },
];

export const RANKING_QUARTERS: readonly Quarter[] = ["Q1", "Q2", "Q3"];
export const ARCHIVE_QUARTER: Quarter = "Q4";

export interface SeasonState {
  /** "2026": the key entries, teams and records carry (olympiad_entries.season_id, …) */
  id: string;
  year: number;
  label: string;
  /** YYYY-MM-DD */
  starts: string;
  ends: string | null;
  /** `tryouts` until open registration, then `official` */
  role: "tryouts" | "official";
  phase: SeasonPhase;
  /** true only on or after OLYMPIAD_REGISTRATION_OPENS (and before the season ends) */
  registration_open: boolean;
  /** YYYY-MM-DD, or null while not announced */
  registration_opens: string | null;
  /** YYYY-MM-DD: the first day without tryouts (open date − 7 days), or null while the open date is unset */
  tryouts_end: string | null;
  tryouts_active: boolean;
  /** the calendar quarter of `now` (UTC) */
  quarter: Quarter;
  /** `now` falls in a ranking quarter (Q1–Q3) */
  ranking: boolean;
  /** counting events of the current quarter: 40 in Q1–Q3, 0 in Q4 */
  events_counting: number;
  /**
   * A result recorded now counts official points: registration is open, the season has not ended
   * and the quarter ranks. Otherwise results are kept (tryouts: for seeding) with no official points.
   */
  counts_official_points: boolean;
}

const DAY_MS = 24 * 3600 * 1000;

/** 00:00 UTC of a YYYY-MM-DD date, in milliseconds. */
export function dayStart(date: string): number {
  return Date.parse(`${date}T00:00:00Z`);
}

/** YYYY-MM-DD shifted by whole days (UTC). */
export function addDays(date: string, days: number): string {
  return new Date(dayStart(date) + days * DAY_MS).toISOString().slice(0, 10);
}

export function quarterOf(now: Date): Quarter {
  return (["Q1", "Q2", "Q3", "Q4"] as const)[Math.floor(now.getUTCMonth() / 3)] as Quarter;
}

export function seasonOf(config: Pick<Config, "olympiad">, now: Date): SeasonState {
  const { year, starts, ends, registrationOpens } = config.olympiad.season;
  const t = now.getTime();
  const started = t >= dayStart(starts);
  // `ends` is the season's last day: it is over from the next midnight.
  const ended = ends !== null && t >= dayStart(ends) + DAY_MS;
  const registrationOpen = registrationOpens !== null && t >= dayStart(registrationOpens) && !ended;
  const tryoutsEnd = registrationOpens === null ? null : addDays(registrationOpens, -TRYOUTS_END_DAYS_BEFORE_OPEN);
  const tryoutsActive = started && !ended && (tryoutsEnd === null || t < dayStart(tryoutsEnd));
  const quarter = quarterOf(now);
  const ranking = RANKING_QUARTERS.includes(quarter);
  let phase: SeasonPhase;
  if (!started) phase = "pre_season";
  else if (ended) phase = "ended";
  else if (registrationOpen) phase = "open_competition";
  else if (tryoutsActive) phase = "tryouts_and_competitions";
  else phase = "seeding";
  return {
    id: String(year),
    year,
    label: `Great Agentic Olympiad ${year}`,
    starts,
    ends,
    role: registrationOpen ? "official" : "tryouts",
    phase,
    registration_open: registrationOpen,
    registration_opens: registrationOpens,
    tryouts_end: tryoutsEnd,
    tryouts_active: tryoutsActive,
    quarter,
    ranking,
    events_counting: ranking ? EVENTS_PER_RANKING_QUARTER : 0,
    counts_official_points: registrationOpen && ranking,
  };
}

/**
 * 409 `registration_not_open`: `enter` before open registration (or after the season ended).
 * `register` and `intent` still work; the answer names the date entries open.
 */
export function registrationClosedProblem(state: SeasonState): Problem {
  const extra = {
    season_id: state.id,
    phase: state.phase,
    registration_open: false,
    registration_opens: state.registration_opens,
    tryouts_end: state.tryouts_end,
  };
  if (state.phase === "ended") {
    return new Problem(409, "registration_not_open", `Season ${state.id} ended on ${state.ends}; entries are closed.`, {
      ...extra,
      season_ends: state.ends,
    });
  }
  const when =
    state.registration_opens === null
      ? "The open-registration date is not announced yet."
      : `Open registration begins on ${state.registration_opens} (00:00 UTC).`;
  return new Problem(
    409,
    "registration_not_open",
    `Season ${state.id} is not open for entries. ${when} Until then you can register and record an intent (action "intent").`,
    extra,
  );
}

/** Throws registrationClosedProblem unless entries are open now. */
export function assertRegistrationOpen(state: SeasonState): void {
  if (!state.registration_open) throw registrationClosedProblem(state);
}
