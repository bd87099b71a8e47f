import type { Kysely } from "kysely";
import type { Config } from "../../config.js";
import type { Executor } from "../../db/executor.js";
import {
  append,
  type ChainEntry,
  type ChainHead,
  entryAt,
  GENESIS_HASH,
  lastAt,
  listAll,
} from "../../db/hash-chain.js";
import type { Database } from "../../db/schema.js";
import { badRequest, conflict, Problem } from "../../http/problem.js";
import { VERSIONS } from "../../versions.js";
import { eventById, pointsFor } from "../events/events.js";
import { seasonOf } from "../season.js";
import {
  canonicalScore,
  computeStandings,
  entrantOf,
  foldRecords,
  OFFICIAL_QUARTERS,
  type RecordBody,
  type RecordedSet,
  RecordsError,
  type ResultLine,
  ranksFromScores,
  type StandingRow,
  standingsRules,
  TRYOUTS,
} from "./standings.js";
import { recordsStore } from "./store.js";

/**
 * Olympiad records (docs/olympiad-records.md): operators record result sets with evidence on hash
 * chain `olympiad`; corrections are new entries that supersede a set, never edits. The published
 * documents (`/standings.json`, `/olympiad-records.json`) carry every entry, so anyone can
 * recompute the chain and the standings (`labphi verify-standings`).
 */

export const OLYMPIAD_CHAIN = "olympiad";

export interface RecordInput {
  event_id: string;
  quarter: "Q1" | "Q2" | "Q3" | "Q4" | "tryouts";
  season_id?: string | undefined;
  held_on?: string | undefined;
  results: {
    participant_id?: string | undefined;
    team_id?: string | undefined;
    rank?: number | null | undefined;
    score: number | string | null;
    note?: string | undefined;
  }[];
  evidence: { url: string; sha256?: string | undefined; note?: string | undefined };
  /** a correction: the seq of the set it replaces */
  supersedes?: number | undefined;
  /** required with `supersedes` */
  reason?: string | undefined;
}

export type AuditFn = (
  actor: string,
  action: string,
  subject: string,
  detail: Record<string, unknown>,
  db: Executor,
) => Promise<void>;

/** An entry as published: the chain is named once, at the document's top. */
export interface PublishedEntry {
  seq: number;
  at: string;
  kind: string;
  body: ChainEntry["body"];
  prev_hash: string;
  hash: string;
}

export interface StandingsDocument {
  version: string;
  season: string;
  generated_at: string;
  chain: string;
  head: { seq: number; hash: string };
  rules: ReturnType<typeof standingsRules>;
  standings: StandingRow[];
  seeding: StandingRow[];
  ranked_total: number;
  records_json: string;
  verify: string;
  entries: PublishedEntry[];
}

const published = (e: ChainEntry): PublishedEntry => ({
  seq: e.seq,
  at: e.at,
  kind: e.kind,
  body: e.body,
  prev_hash: e.prev_hash,
  hash: e.hash,
});

function headOf(entries: readonly ChainEntry[]): { seq: number; hash: string } {
  const last = entries.at(-1);
  return last ? { seq: last.seq, hash: last.hash } : { seq: 0, hash: GENESIS_HASH };
}

const QUARTER_START_MONTH = { Q1: 0, Q2: 3, Q3: 6 } as const;

export class OlympiadRecords {
  /** The clock (tests move it). */
  now: () => Date;

  constructor(
    readonly db: Kysely<Database>,
    readonly config: Pick<Config, "baseUrl" | "olympiad">,
    readonly audit: AuditFn,
    now: () => Date = () => new Date(),
  ) {
    this.now = now;
  }

  get urls() {
    const base = this.config.baseUrl;
    return { standings: `${base}/standings.json`, records: `${base}/olympiad-records.json` };
  }

  /** Entry `seq` of chain `olympiad` (a recorded result set), if it exists. */
  entry(seq: number): Promise<ChainEntry | undefined> {
    return entryAt(this.db, OLYMPIAD_CHAIN, seq);
  }

  /** Every entry of chain `olympiad`, in seq order. */
  entries(db: Executor = this.db): Promise<ChainEntry[]> {
    return listAll(db, OLYMPIAD_CHAIN);
  }

  /**
   * Records a result set (or, with `supersedes`, a correction) as the next entry of chain
   * `olympiad`, audited in the same transaction. Answers the entry.
   */
  async record(input: RecordInput, actor: string): Promise<ChainEntry> {
    const body = await this.bodyOf(input);
    const kind = body.supersedes === undefined ? "result" : "correction";
    return this.db.transaction().execute(async (trx) => {
      const entry = await append(trx, OLYMPIAD_CHAIN, kind, body as unknown as Record<string, unknown>, {
        guard: async (t, head) => this.checkAgainstChain(t, head, kind, body),
      });
      await this.audit(
        actor,
        `olympiad.${kind}`,
        `olympiad:${entry.seq}`,
        {
          season_id: body.season_id,
          quarter: body.quarter,
          event_id: body.event_id,
          hash: entry.hash,
          ...(body.supersedes !== undefined ? { supersedes: body.supersedes } : {}),
        },
        trx,
      );
      return entry;
    });
  }

  /**
   * Appends an entry the olympiad builds itself (docs/olympiad-tasks.md): a scored event's result
   * set or its correction (checked against the chain's rules like an operator's), or a task's
   * commitment (kind `task`, which standings skip). `then` runs in the same transaction (the task's
   * own row), so the entry and the state that points at it are written together; audited there too.
   */
  async appendOwn(
    kind: "result" | "correction" | "task",
    body: Record<string, unknown>,
    actor: string,
    then?: (trx: Executor, entry: ChainEntry) => Promise<void>,
  ): Promise<ChainEntry> {
    return this.db.transaction().execute(async (trx) => {
      const entry = await append(trx, OLYMPIAD_CHAIN, kind, body, {
        guard: kind === "task" ? undefined : async (t, head) => this.checkAgainstChain(t, head, kind, body as never),
      });
      await this.audit(
        actor,
        `olympiad.${kind}`,
        `olympiad:${entry.seq}`,
        {
          event_id: body.event_id,
          hash: entry.hash,
          ...(body.supersedes !== undefined ? { supersedes: body.supersedes } : {}),
        },
        trx,
      );
      if (then) await then(trx, entry);
      return entry;
    });
  }

  /** The rules that need the chain as it is: run under the chain's lock. */
  private async checkAgainstChain(db: Executor, head: ChainHead, kind: string, body: RecordBody): Promise<void> {
    const entries = await this.entries(db);
    const at = new Date().toISOString();
    try {
      foldRecords([...entries, { seq: head.seq + 1, kind, at, body: body as never }]);
    } catch (err) {
      if (!(err instanceof RecordsError)) throw err;
      if (err.seq !== head.seq + 1) throw err; // the stored chain itself: not the caller's fault
      const status = err.code === "record_not_found" ? 404 : err.code === "record_malformed" ? 400 : 409;
      const live = foldRecords(entries).find(
        (s) =>
          s.superseded_by === null &&
          s.body.season_id === body.season_id &&
          s.body.quarter === body.quarter &&
          s.body.event_id === body.event_id,
      );
      const extra: Record<string, unknown> = {};
      if (err.code === "result_already_recorded" && live) extra.recorded_seq = live.seq;
      if (body.supersedes !== undefined) extra.supersedes = body.supersedes;
      throw new Problem(status, err.code, err.message.replace(/^entry \d+: /, ""), extra);
    }
  }

  /** Validates the input and builds the entry body (everything but the chain's own rules). */
  private async bodyOf(input: RecordInput): Promise<RecordBody> {
    const now = this.now();
    const state = seasonOf(this.config, now);
    const event = eventById(input.event_id);
    if (!event) {
      throw badRequest("unknown_event", `No olympiad event '${input.event_id}'; the 40 events are in /olympiad.json.`, {
        olympiad_json: `${this.config.baseUrl}/olympiad.json`,
      });
    }
    if (input.quarter === "Q4") {
      throw badRequest("archive_quarter", "Q4 is the archive quarter: it has no counting events.", {
        valid: [...OFFICIAL_QUARTERS, TRYOUTS],
      });
    }
    const seasonId = input.season_id ?? state.id;
    if (seasonId !== state.id) {
      throw badRequest("unknown_season", `Season '${seasonId}' is not the configured season (${state.id}).`, {
        season_id: state.id,
      });
    }
    if (input.quarter !== TRYOUTS) {
      const opens = state.registration_opens;
      if (opens === null || now.getTime() < Date.parse(`${opens}T00:00:00Z`)) {
        throw conflict(
          "official_results_not_open",
          `Official results (${input.quarter}) count only from open registration (${opens ?? "not announced"}); until then record the result with quarter "tryouts" (kept for seeding, no official points).`,
          { registration_opens: opens },
        );
      }
      const starts = Date.UTC(state.year, QUARTER_START_MONTH[input.quarter], 1);
      if (now.getTime() < starts) {
        throw conflict(
          "quarter_not_started",
          `${input.quarter} of ${state.year} has not started (${new Date(starts).toISOString().slice(0, 10)}).`,
          { quarter: input.quarter, starts: new Date(starts).toISOString().slice(0, 10) },
        );
      }
    }
    if (input.supersedes === undefined && input.reason !== undefined) {
      throw badRequest("reason_without_correction", "`reason` belongs to a correction: give `supersedes` too.");
    }
    if (input.supersedes !== undefined && !input.reason) {
      throw badRequest("correction_reason_required", "A correction needs a `reason` (it is published).");
    }
    if (!Number.isSafeInteger(event.weight) || event.weight < 0) {
      throw new Error(`event ${event.id} has a weight that is not a non-negative integer: ${event.weight}`);
    }

    const idKey = event.entrants === "team" ? "team_id" : "participant_id";
    const seen = new Set<string>();
    const scores: (string | null)[] = [];
    input.results.forEach((r, i) => {
      const id = r[idKey];
      const other = event.entrants === "team" ? r.participant_id : r.team_id;
      if (id === undefined || other !== undefined) {
        throw badRequest(
          "wrong_entrant_kind",
          `results[${i}]: ${event.id} is ${event.entrants === "team" ? "a team" : "an individual"} event; give ${idKey} only.`,
          { index: i, entrants: event.entrants },
        );
      }
      if (seen.has(id)) throw badRequest("duplicate_entrant", `results[${i}]: ${id} appears twice.`, { index: i });
      seen.add(id);
      if (r.score === null) {
        scores.push(null);
        return;
      }
      const score = canonicalScore(r.score);
      if (score === undefined) {
        throw badRequest(
          "invalid_score",
          `results[${i}].score must be an integer or a decimal string (up to 30 digits and 18 decimals).`,
          { index: i },
        );
      }
      scores.push(score);
    });
    const ranks = ranksFromScores(scores, event.scoring.better);
    input.results.forEach((r, i) => {
      if (r.rank !== undefined && r.rank !== ranks[i]) {
        throw badRequest(
          "rank_mismatch",
          `results[${i}]: rank ${r.rank} does not match the score, which ranks ${ranks[i] ?? "nowhere (no score)"} (${event.id}: ${event.scoring.better} is better; equal scores share a rank).`,
          { index: i, rank_from_score: ranks[i] ?? null },
        );
      }
    });
    const ids = [...seen];
    const unknown =
      event.entrants === "team"
        ? await recordsStore.unknownTeams(this.db, ids)
        : await recordsStore.unknownParticipants(this.db, ids);
    if (unknown.length > 0) {
      throw badRequest(
        "unknown_entrant",
        `Not ${event.entrants === "team" ? "teams" : "registered participants"}: ${unknown.slice(0, 10).join(", ")}.`,
        { unknown },
      );
    }

    const results: ResultLine[] = input.results.map((r, i) => ({
      [idKey]: r[idKey] as string,
      rank: ranks[i] ?? null,
      score: scores[i] ?? null,
      ...(r.note !== undefined ? { note: r.note } : {}),
    }));
    const evidence = {
      url: input.evidence.url,
      ...(input.evidence.sha256 !== undefined ? { sha256: input.evidence.sha256.toLowerCase() } : {}),
      ...(input.evidence.note !== undefined ? { note: input.evidence.note } : {}),
    };
    return {
      season_id: seasonId,
      quarter: input.quarter,
      event_id: event.id,
      family: event.family,
      entrants: event.entrants,
      weight: event.weight,
      better: event.scoring.better,
      ...(input.held_on !== undefined ? { held_on: input.held_on } : {}),
      results,
      evidence,
      ...(input.supersedes !== undefined ? { supersedes: input.supersedes, reason: input.reason as string } : {}),
    };
  }

  /** `GET /standings.json`: the season's standings, the rules, the head and every entry. */
  async standingsDocument(): Promise<StandingsDocument> {
    const now = this.now();
    const season = seasonOf(this.config, now).id;
    const entries = await this.entries();
    const s = computeStandings(entries, season);
    return {
      version: VERSIONS.standings,
      season,
      generated_at: now.toISOString(),
      chain: OLYMPIAD_CHAIN,
      head: headOf(entries),
      rules: standingsRules(),
      standings: s.standings,
      seeding: s.seeding,
      ranked_total: s.ranked_total,
      records_json: this.urls.records,
      verify: `labphi verify-standings ${this.urls.standings}`,
      entries: entries.map(published),
    };
  }

  /** `GET /olympiad-records.json`: every recorded set (superseded ones too) and every entry. */
  async recordsDocument() {
    const now = this.now();
    const entries = await this.entries();
    const sets = foldRecords(entries);
    return {
      version: VERSIONS.standings,
      generated_at: now.toISOString(),
      chain: OLYMPIAD_CHAIN,
      head: headOf(entries),
      counts: counts(entries, sets),
      standings_json: this.urls.standings,
      sets: sets.map(setView),
      entries: entries.map(published),
    };
  }

  /** The compact summary `GET /api/olympiad?view=records` shows. */
  async recordsView() {
    const entries = await this.entries();
    const sets = foldRecords(entries);
    const season = seasonOf(this.config, this.now()).id;
    const s = computeStandings(entries, season);
    return {
      chain: OLYMPIAD_CHAIN,
      head: headOf(entries),
      season,
      counts: counts(entries, sets),
      medals: s.standings
        .filter((r) => r.medal !== null)
        .map((r) => ({ medal: r.medal, entrant: r.entrant, points: r.points })),
      latest: sets
        .slice(-5)
        .reverse()
        .map((set) => ({
          seq: set.seq,
          kind: set.kind,
          at: set.at,
          season_id: set.body.season_id,
          quarter: set.body.quarter,
          event_id: set.body.event_id,
          entrants: set.body.results.length,
          winners: set.body.results.filter((l) => l.rank === 1).map(entrantOf),
          superseded_by: set.superseded_by,
        })),
      standings_json: this.urls.standings,
      records_json: this.urls.records,
      verify: `labphi verify-standings ${this.urls.standings}`,
    };
  }

  /** Events of a season with a live official result set (the record's `events_completed`). */
  async eventsCompleted(seasonId: string): Promise<number> {
    const sets = foldRecords(await this.entries());
    return new Set(
      sets
        .filter((s) => s.superseded_by === null && s.body.season_id === seasonId && s.body.quarter !== TRYOUTS)
        .map((s) => `${s.body.quarter}|${s.body.event_id}`),
    ).size;
  }

  /** ISO 8601 of the latest entry of chain `olympiad`, or null. */
  lastChange(): Promise<string | null> {
    return lastAt(this.db, OLYMPIAD_CHAIN);
  }
}

function counts(entries: readonly ChainEntry[], sets: readonly RecordedSet[]) {
  const live = sets.filter((s) => s.superseded_by === null);
  return {
    entries: entries.length,
    result_sets: sets.filter((s) => s.kind === "result").length,
    corrections: sets.filter((s) => s.kind === "correction").length,
    live_sets: live.length,
    official_sets: live.filter((s) => s.body.quarter !== TRYOUTS).length,
    tryout_sets: live.filter((s) => s.body.quarter === TRYOUTS).length,
  };
}

function setView(set: RecordedSet) {
  const b = set.body;
  const live = set.superseded_by === null;
  return {
    seq: set.seq,
    kind: set.kind,
    at: set.at,
    season_id: b.season_id,
    quarter: b.quarter,
    event_id: b.event_id,
    event_name: eventById(b.event_id)?.name ?? null,
    family: b.family,
    entrants: b.entrants,
    weight: b.weight,
    held_on: b.held_on ?? null,
    counts_official_points: live && b.quarter !== TRYOUTS,
    superseded_by: set.superseded_by,
    supersedes: b.supersedes ?? null,
    reason: b.reason ?? null,
    evidence: b.evidence,
    results: b.results.map((l) => ({
      entrant: entrantOf(l),
      entrant_kind: l.team_id !== undefined ? ("team" as const) : ("participant" as const),
      rank: l.rank,
      score: l.score,
      points: l.rank === null ? 0 : pointsFor(l.rank) * b.weight,
      note: l.note ?? null,
    })),
  };
}
