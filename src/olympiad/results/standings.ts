import type { ChainEntry, JsonValue } from "../../db/hash-chain.js";
import { POINTS_TABLE, pointsFor } from "../events/events.js";

/**
 * Standings from the olympiad chain's entries alone (docs/olympiad-records.md "Standings").
 * Pure: the service, the published documents and `labphi verify-standings` all call these, so a
 * verifier holding only the published entries gets the same answer.
 *
 * - A result set is a chain entry of kind `result`, or `correction` (which replaces the set at
 *   `supersedes`, never edits it). A set is live until a later correction supersedes it; at most
 *   one live set per (season, quarter, event).
 * - Official points: live sets of quarters Q1–Q3 of the season; each ranked entrant earns
 *   pointsFor(rank) × weight (integers). Tryout sets (`quarter: "tryouts"`) earn no official
 *   points: the same arithmetic gives seeding points, listed apart.
 * - Order: points desc, golds desc, silvers desc, bronzes desc, reached_seq asc (who reached the
 *   total first on the chain), entrant id asc (code-unit order). Top 50 listed; ranks 1–3 get the
 *   gold, silver and bronze medals.
 */

export const STANDINGS_TOP_N = 50;
export const MEDALS = ["gold", "silver", "bronze"] as const;
export type Medal = (typeof MEDALS)[number];
export const OFFICIAL_QUARTERS = ["Q1", "Q2", "Q3"] as const;
export const TRYOUTS = "tryouts";
export type RecordQuarter = (typeof OFFICIAL_QUARTERS)[number] | typeof TRYOUTS;
export const RECORD_KINDS = ["result", "correction"] as const;

export const TIEBREAK = [
  "points (higher first)",
  "golds: event wins (more first)",
  "silvers: event second places (more first)",
  "bronzes: event third places (more first)",
  "reached_seq: the chain seq of the last set that gave the entrant points; the entrant who reached the total earlier ranks first",
  "entrant id (code-unit order)",
] as const;

/** One entrant's line of a recorded set, as stored on the chain. */
export interface ResultLine {
  participant_id?: string;
  team_id?: string;
  /** null: no valid result (invalid, did not finish): no rank, no points */
  rank: number | null;
  /** canonical decimal string, or null */
  score: string | null;
  note?: string;
  /** scored events (docs/olympiad-tasks.md): the final submission that gave the score, its SHA-256 and public score */
  submission_id?: string;
  submission_sha256?: string;
  public_score?: string | null;
}

export interface Evidence {
  url: string;
  sha256?: string;
  note?: string;
}

/** The body of a `result` or `correction` entry. */
export interface RecordBody {
  season_id: string;
  quarter: RecordQuarter;
  event_id: string;
  family: string;
  entrants: "individual" | "team";
  /** the event's points multiplier when recorded (a positive integer) */
  weight: number;
  better: "higher" | "lower";
  held_on?: string;
  results: ResultLine[];
  evidence: Evidence;
  /** correction only: the seq of the set this one replaces */
  supersedes?: number;
  /** correction only */
  reason?: string;
  /** scored events: the metric, the key's hash committed when the task was set, the split (docs/olympiad-tasks.md) */
  scoring?: { [key: string]: JsonValue };
}

export interface RecordedSet {
  seq: number;
  kind: "result" | "correction";
  at: string;
  body: RecordBody;
  /** the seq of the correction that replaced this set, or null while live */
  superseded_by: number | null;
}

export class RecordsError extends Error {
  constructor(
    readonly code: string,
    readonly seq: number,
    message: string,
  ) {
    super(message);
    this.name = "RecordsError";
  }
}

// ---------------------------------------------------------------------------------------------
// Scores: integers or decimal strings, compared exactly (no floats).

const DECIMAL = /^-?\d{1,30}(\.\d{1,18})?$/;

/** "007.50" → "7.5", "-0" → "0", 12 → "12"; undefined when not an integer or a decimal string. */
export function canonicalScore(score: number | string): string | undefined {
  const text = typeof score === "number" ? (Number.isSafeInteger(score) ? String(score) : "") : score;
  if (!DECIMAL.test(text)) return undefined;
  const negative = text.startsWith("-");
  const [whole = "0", frac = ""] = (negative ? text.slice(1) : text).split(".");
  const w = whole.replace(/^0+(?=\d)/, "");
  const f = frac.replace(/0+$/, "");
  const abs = f ? `${w}.${f}` : w;
  return negative && abs !== "0" ? `-${abs}` : abs;
}

/** The score as an integer scaled by 10^18 (exact). */
function scaled(score: string): bigint {
  const negative = score.startsWith("-");
  const [whole = "0", frac = ""] = (negative ? score.slice(1) : score).split(".");
  const v = BigInt(whole) * 10n ** 18n + BigInt(frac.padEnd(18, "0"));
  return negative ? -v : v;
}

/**
 * Standard competition ranks (1, 2, 2, 4) from scores by the event's direction; a null score has
 * no rank. Returns the ranks in the given order.
 */
export function ranksFromScores(scores: readonly (string | null)[], better: "higher" | "lower"): (number | null)[] {
  const valued = scores
    .map((s, i) => ({ i, v: s === null ? null : scaled(s) }))
    .filter((x): x is { i: number; v: bigint } => x.v !== null);
  valued.sort((a, b) => (a.v === b.v ? 0 : a.v < b.v === (better === "higher") ? 1 : -1));
  const ranks: (number | null)[] = scores.map(() => null);
  valued.forEach((x, k) => {
    const prev = valued[k - 1];
    ranks[x.i] = prev && prev.v === x.v ? (ranks[prev.i] as number) : k + 1;
  });
  return ranks;
}

export function entrantOf(line: ResultLine): string {
  return (line.participant_id ?? line.team_id) as string;
}

// ---------------------------------------------------------------------------------------------
// Reading the chain.

function isObject(v: unknown): v is Record<string, JsonValue> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Checks a stored body's shape (the verifier meets untrusted documents); throws RecordsError. */
export function asRecordBody(seq: number, kind: string, body: JsonValue): RecordBody {
  const bad = (why: string) => new RecordsError("record_malformed", seq, `entry ${seq}: ${why}`);
  if (!isObject(body)) throw bad("body is not an object");
  for (const f of ["season_id", "event_id", "family"] as const) {
    if (typeof body[f] !== "string" || body[f] === "") throw bad(`${f} is not a string`);
  }
  const quarter = body.quarter;
  if (quarter !== TRYOUTS && !OFFICIAL_QUARTERS.includes(quarter as never)) throw bad(`quarter ${String(quarter)}`);
  if (body.entrants !== "individual" && body.entrants !== "team") throw bad("entrants is not individual or team");
  if (typeof body.weight !== "number" || !Number.isSafeInteger(body.weight) || body.weight < 0) {
    throw bad("weight is not a non-negative integer");
  }
  if (body.better !== "higher" && body.better !== "lower") throw bad("better is not higher or lower");
  if (!isObject(body.evidence) || typeof body.evidence.url !== "string") throw bad("evidence has no url");
  if (!Array.isArray(body.results) || body.results.length === 0) throw bad("results is empty");
  const seen = new Set<string>();
  for (const [i, line] of body.results.entries()) {
    if (!isObject(line)) throw bad(`results[${i}] is not an object`);
    const key = body.entrants === "team" ? "team_id" : "participant_id";
    const other = body.entrants === "team" ? "participant_id" : "team_id";
    if (typeof line[key] !== "string" || line[other] !== undefined) throw bad(`results[${i}] needs ${key} only`);
    if (seen.has(line[key] as string)) throw bad(`results[${i}]: ${line[key]} appears twice`);
    seen.add(line[key] as string);
    const rank = line.rank;
    if (rank !== null && (typeof rank !== "number" || !Number.isSafeInteger(rank) || rank < 1)) {
      throw bad(`results[${i}].rank is not a positive integer or null`);
    }
    if (line.score !== null && (typeof line.score !== "string" || canonicalScore(line.score) !== line.score)) {
      throw bad(`results[${i}].score is not a canonical decimal string or null`);
    }
  }
  const lines = body.results as unknown as ResultLine[];
  const expected = ranksFromScores(
    lines.map((l) => l.score),
    body.better,
  );
  lines.forEach((l, i) => {
    if (l.rank !== expected[i]) {
      throw new RecordsError(
        "rank_mismatch",
        seq,
        `entry ${seq}: ${entrantOf(l)} has rank ${l.rank} but its score ranks ${expected[i]}`,
      );
    }
  });
  if (kind === "correction") {
    if (typeof body.supersedes !== "number" || !Number.isSafeInteger(body.supersedes)) {
      throw bad("a correction names no supersedes seq");
    }
  } else if (body.supersedes !== undefined) {
    throw bad("only a correction supersedes");
  }
  return body as unknown as RecordBody;
}

function setKey(b: RecordBody): string {
  return `${b.season_id}|${b.quarter}|${b.event_id}`;
}

/**
 * Every result set on the chain, in seq order, with corrections applied (superseded_by filled in).
 * Entries of other kinds are skipped. Throws RecordsError on a set the rules do not allow: a
 * malformed body, a correction of a seq that is not a live set, a second live set of the same
 * (season, quarter, event).
 */
export function foldRecords(entries: readonly Pick<ChainEntry, "seq" | "kind" | "at" | "body">[]): RecordedSet[] {
  const sets: RecordedSet[] = [];
  const bySeq = new Map<number, RecordedSet>();
  const liveByKey = new Map<string, number>();
  for (const e of entries) {
    if (e.kind !== "result" && e.kind !== "correction") continue;
    const body = asRecordBody(e.seq, e.kind, e.body);
    if (e.kind === "correction") {
      const target = bySeq.get(body.supersedes as number);
      if (!target) {
        throw new RecordsError(
          "record_not_found",
          e.seq,
          `entry ${e.seq} corrects seq ${body.supersedes}, which is not a recorded result set`,
        );
      }
      if (target.superseded_by !== null) {
        throw new RecordsError(
          "record_already_superseded",
          e.seq,
          `entry ${e.seq} corrects seq ${target.seq}, already replaced by seq ${target.superseded_by}`,
        );
      }
      target.superseded_by = e.seq;
      liveByKey.delete(setKey(target.body));
    }
    const key = setKey(body);
    const live = liveByKey.get(key);
    if (live !== undefined) {
      throw new RecordsError(
        "result_already_recorded",
        e.seq,
        `entry ${e.seq}: ${body.event_id} (${body.quarter}, season ${body.season_id}) already has result set seq ${live}`,
      );
    }
    liveByKey.set(key, e.seq);
    const set: RecordedSet = { seq: e.seq, kind: e.kind, at: e.at, body, superseded_by: null };
    sets.push(set);
    bySeq.set(e.seq, set);
  }
  return sets;
}

// ---------------------------------------------------------------------------------------------
// Ranking.

export interface StandingRow {
  rank: number;
  entrant: string;
  entrant_kind: "participant" | "team";
  points: number;
  golds: number;
  silvers: number;
  bronzes: number;
  /** live sets the entrant appears in */
  events: number;
  reached_seq: number;
  medal: Medal | null;
}

export interface Standings {
  season: string;
  /** official: top 50 of Q1–Q3, with medals */
  standings: StandingRow[];
  /** tryouts: seeding points, every entrant, no medals */
  seeding: StandingRow[];
  /** entrants with official points or official results (before the top-50 cut) */
  ranked_total: number;
}

interface Tally {
  entrant: string;
  kind: "participant" | "team";
  points: number;
  golds: number;
  silvers: number;
  bronzes: number;
  events: number;
  lastScoring: number;
  firstSeen: number;
}

function tally(sets: readonly RecordedSet[]): Tally[] {
  const by = new Map<string, Tally>();
  for (const set of sets) {
    for (const line of set.body.results) {
      const entrant = entrantOf(line);
      let t = by.get(entrant);
      if (!t) {
        t = {
          entrant,
          kind: line.team_id !== undefined ? "team" : "participant",
          points: 0,
          golds: 0,
          silvers: 0,
          bronzes: 0,
          events: 0,
          lastScoring: 0,
          firstSeen: set.seq,
        };
        by.set(entrant, t);
      }
      t.events += 1;
      if (line.rank === null) continue;
      const pts = pointsFor(line.rank) * set.body.weight;
      t.points += pts;
      if (pts > 0) t.lastScoring = Math.max(t.lastScoring, set.seq);
      if (line.rank === 1) t.golds += 1;
      else if (line.rank === 2) t.silvers += 1;
      else if (line.rank === 3) t.bronzes += 1;
    }
  }
  return [...by.values()];
}

function rank(tallies: Tally[], medals: boolean): StandingRow[] {
  const reached = (t: Tally) => (t.lastScoring > 0 ? t.lastScoring : t.firstSeen);
  const sorted = [...tallies].sort(
    (a, b) =>
      b.points - a.points ||
      b.golds - a.golds ||
      b.silvers - a.silvers ||
      b.bronzes - a.bronzes ||
      reached(a) - reached(b) ||
      (a.entrant < b.entrant ? -1 : a.entrant > b.entrant ? 1 : 0),
  );
  return sorted.map((t, i) => ({
    rank: i + 1,
    entrant: t.entrant,
    entrant_kind: t.kind,
    points: t.points,
    golds: t.golds,
    silvers: t.silvers,
    bronzes: t.bronzes,
    events: t.events,
    reached_seq: reached(t),
    medal: medals ? (MEDALS[i] ?? null) : null,
  }));
}

/** The season's standings (top 50, medals) and seeding list, from the chain's entries alone. */
export function computeStandings(
  entries: readonly Pick<ChainEntry, "seq" | "kind" | "at" | "body">[],
  season: string,
): Standings {
  const live = foldRecords(entries).filter((s) => s.superseded_by === null && s.body.season_id === season);
  const official = rank(tally(live.filter((s) => s.body.quarter !== TRYOUTS)), true);
  const seeding = rank(tally(live.filter((s) => s.body.quarter === TRYOUTS)), false);
  return { season, standings: official.slice(0, STANDINGS_TOP_N), seeding, ranked_total: official.length };
}

/** The published rules block (the verifier checks it is the one it applies). */
export function standingsRules() {
  return {
    points_table: [...POINTS_TABLE],
    points: "pointsFor(rank) × weight; no rank (null) earns 0; ranks past the table earn 0",
    official_quarters: [...OFFICIAL_QUARTERS],
    seeding_quarter: TRYOUTS,
    top_n: STANDINGS_TOP_N,
    medals: [...MEDALS],
    tiebreak: [...TIEBREAK],
    hash: "hex(sha256(utf8(canonical_json({at, body, chain, kind, prev_hash, seq})))); prev_hash of seq 1 is 64 zeros",
    canonical_json: "object keys sorted, no whitespace, strings and numbers as JSON.stringify writes them",
  };
}
