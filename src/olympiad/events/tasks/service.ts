import { randomBytes, randomUUID } from "node:crypto";
import { type Kysely, sql } from "kysely";
import type { Config } from "../../../config.js";
import type { Executor } from "../../../db/executor.js";
import type { Database } from "../../../db/schema.js";
import { badRequest, conflict, notFound, Problem } from "../../../http/problem.js";
import { PermanentTaskError, type TaskQueue } from "../../../jobs/queue/types.js";
import { entryStore } from "../../entry/entry.js";
import type { OlympiadRecords } from "../../results/service.js";
import { type RecordBody, type ResultLine, ranksFromScores } from "../../results/standings.js";
import { quarterOf, seasonOf } from "../../season.js";
import type { ParticipantRow } from "../../tables.js";
import { EVENTS, eventById, type OlympiadEvent } from "../events.js";
import { type Metric, type MetricId, metricOf, type Pair, scoreText, type Value } from "./metrics.js";
import { checkAgainstKey, type FileFormat, type Issue, parseTable, type TableRow } from "./parse.js";
import { SCORE_TASK, scoreTaskId } from "./queue-task.js";
import { compareScores, isPublicRow, sha256Hex } from "./split.js";
import type { SubmissionRow, TaskFileRow, TaskRow } from "./tables.js";

/**
 * Scored olympiad events (docs/olympiad-tasks.md): an operator attaches a task (description,
 * public files, hidden key, metric, split, window, quota) to one of the 40 events; entered
 * participants (or teams through their entered members) submit prediction files; a job-queue task
 * per submission (`olympiad-score`, queue-task.ts) scores the event's pending submissions under the
 * event's lease (a lease on the task row, so one scorer per event across workers; the queued task
 * survives a restart); the sweep, a safety net, scores rows left pending and, at the close, ranks
 * each entrant's finals on the private part and appends the result set to chain `olympiad` with its evidence.
 */

export const DEFAULT_PUBLIC_PCT = 30;
export const DEFAULT_DAILY_QUOTA = 5;
export const DEFAULT_MAX_FINALS = 2;
export const MAX_FILES = 10;
/** how long a scorer holds an event; a crashed scorer's event is taken over after it */
export const SCORING_LEASE_MS = 60_000;
export const SCORER_ACTOR = "olympiad:scorer";
/** Starts per scoring task: a busy event lease is retried 1, 2, 4, 8 s later; then the sweep has it. */
export const SCORE_TASK_ATTEMPTS = 5;

export interface TaskInput {
  description: string;
  metric: MetricId;
  k?: number | undefined;
  id_column?: string | undefined;
  value_column?: string | undefined;
  key: { format: FileFormat; content: string };
  files?: { name: string; media_type?: string | undefined; content: string }[] | undefined;
  public_pct?: number | undefined;
  split_seed?: string | undefined;
  opens_at: string;
  closes_at: string;
  daily_quota?: number | undefined;
  max_file_bytes?: number | undefined;
  max_finals?: number | undefined;
}

export interface SubmissionInput {
  format: FileFormat;
  content: string;
}

type Entrant = { id: string; kind: "participant" | "team" };

const DAY_MS = 86_400_000;
const utcDay = (d: Date) => d.toISOString().slice(0, 10);

function invalidSubmission(issues: Issue[]): Problem {
  const first = issues[0];
  const where =
    first && first.row !== null ? ` (row ${first.row}${first.column !== null ? `, column ${first.column}` : ""})` : "";
  return badRequest(
    "submission_invalid",
    `The file does not fit the task${where}: ${first?.problem ?? "invalid"}. Nothing was stored and the quota is untouched.`,
    { issues, row: first?.row ?? null, column: first?.column ?? null },
  );
}

export { SCORE_TASK, scoreTaskId };

export class OlympiadTasks {
  now: () => Date;
  private readonly owner = randomUUID();
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<unknown> | undefined;
  private readonly keyCache = new Map<string, { values: Map<string, Value>; publicIds: Set<string> }>();
  /** The suite's task queue: each accepted submission enqueues a scoring task (`useQueue`). */
  private queue: Pick<TaskQueue, "enqueue"> | undefined;

  constructor(
    readonly db: Kysely<Database>,
    readonly config: Pick<Config, "baseUrl" | "olympiad" | "olympiadTasks">,
    readonly records: OlympiadRecords,
    readonly log: (msg: string, err?: unknown) => void = () => {},
    now: () => Date = () => new Date(),
  ) {
    this.now = now;
  }

  // -------------------------------------------------------------------------------------------
  // Tasks

  private eventOr404(eventId: string): OlympiadEvent {
    const event = eventById(eventId);
    if (!event) {
      throw notFound("unknown_event", `No olympiad event '${eventId}'; the 40 events are in /olympiad.json.`, {
        olympiad_json: `${this.config.baseUrl}/olympiad.json`,
      });
    }
    return event;
  }

  async task(eventId: string, db: Executor = this.db): Promise<TaskRow | undefined> {
    return db.selectFrom("olympiad_tasks").selectAll().where("event_id", "=", eventId).executeTakeFirst();
  }

  private async taskOr404(eventId: string): Promise<{ event: OlympiadEvent; task: TaskRow }> {
    const event = this.eventOr404(eventId);
    const task = await this.task(eventId);
    if (!task) throw notFound("task_not_found", `Event '${eventId}' has no scored task.`, { event_id: eventId });
    return { event, task };
  }

  /** `PUT /api/admin/olympiad/events/:event_id/task`: sets the task until it opens; commits the key's hash on the chain. */
  async setTask(eventId: string, input: TaskInput, actor: string): Promise<{ created: boolean; task: TaskRow }> {
    this.eventOr404(eventId);
    const now = this.now();
    const metric = metricOf(input.metric) as Metric;
    if (metric.needsK && input.k === undefined) {
      throw badRequest("task_k_required", `${metric.id} needs k (how many predicted ids of a row count).`);
    }
    const opens = Date.parse(input.opens_at);
    const closes = Date.parse(input.closes_at);
    if (Number.isNaN(opens) || Number.isNaN(closes) || closes <= opens || closes <= now.getTime()) {
      throw badRequest("task_window_invalid", "opens_at must be before closes_at, and closes_at in the future.", {
        opens_at: input.opens_at,
        closes_at: input.closes_at,
      });
    }
    const existing = await this.task(eventId);
    if (existing && now.getTime() >= Date.parse(existing.opens_at)) {
      throw conflict(
        "task_already_open",
        `The task of '${eventId}' opened at ${existing.opens_at}; its key and rules are committed and cannot change.`,
        { opens_at: existing.opens_at, commit_seq: existing.commit_seq },
      );
    }
    const season = seasonOf(this.config, now);
    const closeDate = new Date(closes);
    const closeSeason = seasonOf(this.config, closeDate);
    let quarter: TaskRow["quarter"];
    if (!closeSeason.registration_open) quarter = "tryouts";
    else {
      const q = quarterOf(closeDate);
      if (q === "Q4") {
        throw badRequest(
          "task_close_in_archive_quarter",
          "The close falls in Q4, the archive quarter, which has no counting events.",
          { closes_at: input.closes_at },
        );
      }
      quarter = q;
    }
    const ceiling = this.config.olympiadTasks.submissionMaxBytes;
    const maxFileBytes = input.max_file_bytes ?? ceiling;
    if (maxFileBytes > ceiling) {
      throw badRequest(
        "task_file_limit_too_high",
        `max_file_bytes is at most ${ceiling} (OLYMPIAD_SUBMISSION_MAX_BYTES).`,
        {
          max: ceiling,
        },
      );
    }
    const tooLarge = [
      { name: "key", text: input.key.content },
      ...(input.files ?? []).map((f) => ({ name: f.name, text: f.content })),
    ].find((f) => Buffer.byteLength(f.text, "utf8") > ceiling);
    if (tooLarge) {
      throw new Problem(
        413,
        "task_file_too_large",
        `'${tooLarge.name}' is larger than ${ceiling} bytes (OLYMPIAD_SUBMISSION_MAX_BYTES).`,
        { name: tooLarge.name, max: ceiling },
      );
    }
    const cols = {
      idColumn: input.id_column ?? "id",
      valueColumn: input.value_column ?? "prediction",
      kind: metric.kind,
    };
    const parsed = parseTable(input.key.content, input.key.format, cols);
    if (!parsed.ok) {
      throw badRequest("task_key_invalid", `The answer key does not parse: ${parsed.issues[0]?.problem}.`, {
        issues: parsed.issues,
      });
    }
    const publicBp = (input.public_pct ?? DEFAULT_PUBLIC_PCT) * 100;
    const seed = input.split_seed ?? randomBytes(16).toString("hex");
    const publicRows = parsed.rows.filter((r) => isPublicRow(seed, r.id, publicBp)).length;
    if (publicRows === 0 || publicRows === parsed.rows.length) {
      throw badRequest(
        "task_split_empty",
        `The split leaves the ${publicRows === 0 ? "public" : "private"} part empty (${parsed.rows.length} rows at ${publicBp / 100} %); add rows or choose another seed.`,
        { key_rows: parsed.rows.length },
      );
    }
    const files: TaskFileRow[] = (input.files ?? []).map((f) => ({
      event_id: eventId,
      name: f.name,
      media_type: f.media_type ?? "text/plain; charset=utf-8",
      content: f.content,
      sha256: sha256Hex(f.content),
      bytes: Buffer.byteLength(f.content, "utf8"),
    }));
    if (new Set(files.map((f) => f.name)).size !== files.length) {
      throw badRequest("task_file_name_repeated", "Two public files have the same name.");
    }
    const at = now.toISOString();
    const keySha = sha256Hex(input.key.content);
    const row: TaskRow = {
      event_id: eventId,
      season_id: season.id,
      quarter,
      description: input.description,
      metric: metric.id,
      k: metric.needsK ? (input.k as number) : null,
      id_column: cols.idColumn,
      value_column: cols.valueColumn,
      key_format: input.key.format,
      key_text: input.key.content,
      key_sha256: keySha,
      key_rows: parsed.rows.length,
      public_bp: publicBp,
      split_seed: seed,
      opens_at: new Date(opens).toISOString(),
      closes_at: new Date(closes).toISOString(),
      daily_quota: input.daily_quota ?? DEFAULT_DAILY_QUOTA,
      max_file_bytes: maxFileBytes,
      max_finals: input.max_finals ?? DEFAULT_MAX_FINALS,
      commit_seq: null,
      created_at: existing?.created_at ?? at,
      updated_at: at,
      closed_at: null,
      record_seq: null,
      close_error: null,
      scoring_lease_until: null,
      scoring_owner: null,
    };
    // The commitment: everything that decides the scores, with the key's and the seed's hashes.
    const commitment = {
      event_id: eventId,
      season_id: row.season_id,
      quarter,
      metric: row.metric,
      k: row.k,
      better: metric.better,
      id_column: row.id_column,
      value_column: row.value_column,
      key_format: row.key_format,
      key_sha256: keySha,
      key_rows: row.key_rows,
      public_bp: publicBp,
      split_seed_sha256: sha256Hex(seed),
      opens_at: row.opens_at,
      closes_at: row.closes_at,
      files: files.map((f) => ({ name: f.name, sha256: f.sha256 })),
    };
    await this.records.appendOwn("task", commitment, actor, async (trx, entry) => {
      row.commit_seq = entry.seq;
      if (existing) {
        await trx.deleteFrom("olympiad_tasks").where("event_id", "=", eventId).execute();
        await trx.deleteFrom("olympiad_task_files").where("event_id", "=", eventId).execute();
      }
      await trx.insertInto("olympiad_tasks").values(row).execute();
      if (files.length > 0) await trx.insertInto("olympiad_task_files").values(files).execute();
    });
    this.keyCache.clear();
    return { created: !existing, task: row };
  }

  private stateOf(task: Pick<TaskRow, "opens_at" | "closes_at">, now = this.now()): "scheduled" | "open" | "closed" {
    const t = now.getTime();
    if (t < Date.parse(task.opens_at)) return "scheduled";
    return t < Date.parse(task.closes_at) ? "open" : "closed";
  }

  /** `GET /api/olympiad/events`: the 40 events, each with its task's state, metric and window (or null). */
  async index() {
    const tasks = await this.db
      .selectFrom("olympiad_tasks")
      .select(["event_id", "metric", "opens_at", "closes_at", "record_seq"])
      .execute();
    const by = new Map(tasks.map((t) => [t.event_id, t]));
    const base = `${this.config.baseUrl}/api/olympiad/events`;
    return {
      events: EVENTS.map((e) => {
        const t = by.get(e.id);
        return {
          event_id: e.id,
          name: e.name,
          family: e.family,
          entrants: e.entrants,
          url: `${base}/${e.id}`,
          task: t
            ? {
                state: this.stateOf(t),
                metric: t.metric,
                opens_at: t.opens_at,
                closes_at: t.closes_at,
                record_seq: t.record_seq,
                leaderboard: `${base}/${e.id}/leaderboard`,
              }
            : null,
        };
      }),
    };
  }

  /** `GET /api/olympiad/events/:event_id`: the event and its task as published (never the key before the close). */
  async publicView(eventId: string) {
    const event = this.eventOr404(eventId);
    const task = await this.task(eventId);
    const base = `${this.config.baseUrl}/api/olympiad/events/${eventId}`;
    const eventView = { ...event, scoring: { ...event.scoring } } as Record<string, unknown>;
    if (!task) return { event: eventView, task: null };
    const files = await this.db
      .selectFrom("olympiad_task_files")
      .select(["name", "media_type", "sha256", "bytes"])
      .where("event_id", "=", eventId)
      .orderBy("name")
      .execute();
    const metric = metricOf(task.metric) as Metric;
    const state = this.stateOf(task);
    const closed = state === "closed";
    return {
      event: eventView,
      task: {
        state,
        description: task.description,
        season_id: task.season_id,
        quarter: task.quarter,
        metric: { id: metric.id, name: metric.name, better: metric.better, rule: metric.rule, k: task.k },
        submission_format: {
          formats: ["csv", "jsonl"] as FileFormat[],
          id_column: task.id_column,
          value_column: task.value_column,
          value_kind: metric.kind,
          rows: task.key_rows,
        },
        files: files.map((f) => ({ ...f, url: `${base}/files/${encodeURIComponent(f.name)}` })),
        key: {
          sha256: task.key_sha256,
          committed_seq: task.commit_seq,
          public_pct: task.public_bp / 100,
          published: closed,
          url: closed ? `${base}/key` : null,
        },
        opens_at: task.opens_at,
        closes_at: task.closes_at,
        daily_quota: task.daily_quota,
        max_file_bytes: task.max_file_bytes,
        max_finals: task.max_finals,
        record_seq: task.record_seq,
        leaderboard: `${base}/leaderboard`,
        submissions: `${base}/submissions`,
      },
    };
  }

  async file(eventId: string, name: string): Promise<TaskFileRow> {
    await this.taskOr404(eventId);
    const f = await this.db
      .selectFrom("olympiad_task_files")
      .selectAll()
      .where("event_id", "=", eventId)
      .where("name", "=", name)
      .executeTakeFirst();
    if (!f) throw notFound("task_file_not_found", `The task of '${eventId}' has no public file '${name}'.`);
    return f;
  }

  /** `GET …/key`: the key, its seed and split, once the close has passed; 403 before. */
  async keyDocument(eventId: string) {
    const { task } = await this.taskOr404(eventId);
    if (this.stateOf(task) !== "closed") {
      throw new Problem(
        403,
        "task_key_not_published",
        `The key of '${eventId}' is published when the event closes (${task.closes_at}); its SHA-256 is committed already.`,
        { closes_at: task.closes_at, key_sha256: task.key_sha256 },
      );
    }
    return {
      event_id: eventId,
      format: task.key_format,
      id_column: task.id_column,
      value_column: task.value_column,
      metric: task.metric,
      k: task.k,
      sha256: task.key_sha256,
      committed_seq: task.commit_seq,
      split_seed: task.split_seed,
      public_bp: task.public_bp,
      split_rule: "row id is public when parseInt(sha256(split_seed + ':' + id)[0:8], 16) % 10000 < public_bp",
      content: task.key_text,
      record_seq: task.record_seq,
    };
  }

  // -------------------------------------------------------------------------------------------
  // Submissions

  /** The entrant a participant submits for, checking the entry (and the team's lock for team events). */
  private async entrantOf(participant: ParticipantRow, event: OlympiadEvent, task: TaskRow): Promise<Entrant> {
    if (event.entrants === "team") {
      const team = await this.db
        .selectFrom("olympiad_team_members as m")
        .innerJoin("olympiad_teams as t", "t.id", "m.team_id")
        .select(["t.id", "t.locked_at"])
        .where("m.participant_id", "=", participant.id)
        .executeTakeFirst();
      if (!team) {
        throw new Problem(403, "team_required", `${event.id} is a team event: submit as a member of a team.`);
      }
      if (team.locked_at === null) {
        throw conflict("team_not_locked", "The team has not locked its roster (ratio rule): it cannot compete yet.", {
          team_id: team.id,
        });
      }
      await this.assertEntered(participant, task);
      return { id: team.id, kind: "team" };
    }
    await this.assertEntered(participant, task);
    return { id: participant.id, kind: "participant" };
  }

  private async assertEntered(participant: ParticipantRow, task: TaskRow): Promise<void> {
    const entry = await entryStore.forParticipant(this.db, participant.id, task.season_id);
    if (entry?.order_status !== "active") {
      throw new Problem(
        403,
        "entry_required",
        `Submitting needs an active entry in season ${task.season_id} (a paid gao-entry order: POST /api/olympiad {"action":"enter"}).`,
        { season_id: task.season_id },
      );
    }
  }

  /** The key's values by id and its public ids (parsed and split once per task). */
  private async keyOf(task: TaskRow): Promise<{ values: Map<string, Value>; publicIds: Set<string> }> {
    const cached = this.keyCache.get(task.key_sha256 + task.event_id);
    if (cached) return cached;
    const metric = metricOf(task.metric) as Metric;
    const parsed = parseTable(task.key_text, task.key_format, {
      idColumn: task.id_column,
      valueColumn: task.value_column,
      kind: metric.kind,
    });
    if (!parsed.ok) throw new Error(`stored key of ${task.event_id} does not parse`);
    const map = {
      values: new Map(parsed.rows.map((r) => [r.id, r.value])),
      publicIds: new Set(
        parsed.rows.filter((r) => isPublicRow(task.split_seed, r.id, task.public_bp)).map((r) => r.id),
      ),
    };
    if (this.keyCache.size > 50) this.keyCache.clear();
    this.keyCache.set(task.key_sha256 + task.event_id, map);
    return map;
  }

  /** `POST …/submissions`: validated at once, stored with its SHA-256 under the daily quota, scored on the queue. */
  async submit(participant: ParticipantRow, eventId: string, input: SubmissionInput) {
    const { event, task } = await this.taskOr404(eventId);
    const now = this.now();
    const state = this.stateOf(task, now);
    if (state === "scheduled") {
      throw conflict("task_not_open", `Submissions to '${eventId}' open at ${task.opens_at}.`, {
        opens_at: task.opens_at,
      });
    }
    if (state === "closed") {
      throw conflict("task_closed", `'${eventId}' closed at ${task.closes_at}; no more submissions.`, {
        closes_at: task.closes_at,
      });
    }
    const bytes = Buffer.byteLength(input.content, "utf8");
    if (bytes > task.max_file_bytes) {
      throw new Problem(
        413,
        "submission_too_large",
        `The file is ${bytes} bytes; this task takes at most ${task.max_file_bytes}.`,
        {
          bytes,
          max_file_bytes: task.max_file_bytes,
        },
      );
    }
    const entrant = await this.entrantOf(participant, event, task);
    const metric = metricOf(task.metric) as Metric;
    const parsed = parseTable(input.content, input.format, {
      idColumn: task.id_column,
      valueColumn: task.value_column,
      kind: metric.kind,
    });
    if (!parsed.ok) throw invalidSubmission(parsed.issues);
    const key = await this.keyOf(task);
    const issues = checkAgainstKey(parsed.rows, new Set(key.values.keys()), task.id_column);
    if (issues.length > 0) throw invalidSubmission(issues);

    const day = utcDay(now);
    const row: SubmissionRow = {
      id: `sub_${randomBytes(12).toString("hex")}`,
      event_id: eventId,
      entrant_id: entrant.id,
      entrant_kind: entrant.kind,
      participant_id: participant.id,
      format: input.format,
      content: input.content,
      sha256: sha256Hex(input.content),
      bytes,
      rows: parsed.rows.length,
      status: "pending",
      public_score: null,
      private_score: null,
      error: null,
      final: 0,
      created_at: now.toISOString(),
      scored_at: null,
    };
    const used = await this.db.transaction().execute(async (trx) => {
      // one conditional upsert: the count rises only below the quota (row lock on PostgreSQL,
      // one writer at a time on SQLite), so concurrent submissions cannot pass it together
      const r = await trx
        .insertInto("olympiad_submission_counts")
        .values({ event_id: eventId, entrant_id: entrant.id, day, n: 1 })
        .onConflict((oc) =>
          oc
            .columns(["event_id", "entrant_id", "day"])
            .doUpdateSet({ n: sql`olympiad_submission_counts.n + 1` })
            .where("olympiad_submission_counts.n", "<", task.daily_quota),
        )
        .executeTakeFirst();
      if (Number(r.numInsertedOrUpdatedRows ?? 0n) !== 1) return null;
      await trx.insertInto("olympiad_submissions").values(row).execute();
      const c = await trx
        .selectFrom("olympiad_submission_counts")
        .select("n")
        .where("event_id", "=", eventId)
        .where("entrant_id", "=", entrant.id)
        .where("day", "=", day)
        .executeTakeFirstOrThrow();
      return Number(c.n);
    });
    const resets = new Date(Date.parse(`${day}T00:00:00Z`) + DAY_MS).toISOString();
    if (used === null) {
      const retry = Math.max(1, Math.ceil((Date.parse(resets) - now.getTime()) / 1000));
      throw new Problem(
        429,
        "submission_quota_exceeded",
        `${entrant.kind === "team" ? "The team" : "You"} used today's ${task.daily_quota} submissions to '${eventId}'; the quota resets at ${resets}.`,
        { daily_quota: task.daily_quota, resets_at: resets, entrant: entrant.id },
        { "Retry-After": String(retry) },
      );
    }
    await this.enqueueScoring(eventId, row.id);
    return {
      submission_id: row.id,
      event_id: eventId,
      entrant: entrant.id,
      entrant_kind: entrant.kind,
      sha256: row.sha256,
      bytes,
      rows: row.rows,
      status: row.status,
      submitted_at: row.created_at,
      quota: { used, daily_quota: task.daily_quota, resets_at: resets },
      submissions_url: `${this.config.baseUrl}/api/olympiad/events/${eventId}/submissions`,
    };
  }

  /** `GET …/submissions` (participant): the entrant's submissions; private scores only after the close. */
  async mySubmissions(participant: ParticipantRow, eventId: string) {
    const { event, task } = await this.taskOr404(eventId);
    const entrant = await this.entrantOf(participant, event, task);
    const closed = this.stateOf(task) === "closed";
    const rows = await this.db
      .selectFrom("olympiad_submissions")
      .select([
        "id",
        "participant_id",
        "sha256",
        "bytes",
        "rows",
        "status",
        "public_score",
        "private_score",
        "error",
        "final",
        "created_at",
        "scored_at",
      ])
      .where("event_id", "=", eventId)
      .where("entrant_id", "=", entrant.id)
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .limit(500)
      .execute();
    return {
      event_id: eventId,
      entrant: entrant.id,
      entrant_kind: entrant.kind,
      state: this.stateOf(task),
      max_finals: task.max_finals,
      submissions: rows.map((r) => ({
        submission_id: r.id,
        submitted_by: r.participant_id,
        sha256: r.sha256,
        bytes: r.bytes,
        rows: r.rows,
        status: r.status,
        public_score: r.public_score,
        private_score: closed ? r.private_score : null,
        error: r.error,
        final: r.final === 1,
        submitted_at: r.created_at,
        scored_at: r.scored_at,
      })),
    };
  }

  /** `POST …/finals`: the entrant's final submissions (at most max_finals), before the close. */
  async selectFinals(participant: ParticipantRow, eventId: string, ids: readonly string[]) {
    const { event, task } = await this.taskOr404(eventId);
    if (this.stateOf(task) === "closed") {
      throw conflict("task_closed", `'${eventId}' closed at ${task.closes_at}; finals are fixed.`, {
        closes_at: task.closes_at,
      });
    }
    const entrant = await this.entrantOf(participant, event, task);
    const unique = [...new Set(ids)];
    if (unique.length > task.max_finals) {
      throw badRequest("too_many_finals", `At most ${task.max_finals} final submissions.`, {
        max_finals: task.max_finals,
      });
    }
    await this.db.transaction().execute(async (trx) => {
      if (unique.length > 0) {
        const found = await trx
          .selectFrom("olympiad_submissions")
          .select("id")
          .where("event_id", "=", eventId)
          .where("entrant_id", "=", entrant.id)
          .where("id", "in", unique)
          .execute();
        const known = new Set(found.map((f) => f.id));
        const unknown = unique.filter((id) => !known.has(id));
        if (unknown.length > 0) {
          throw notFound(
            "submission_not_found",
            `Not submissions of ${entrant.id} to '${eventId}': ${unknown.join(", ")}.`,
            {
              unknown,
            },
          );
        }
      }
      await trx
        .updateTable("olympiad_submissions")
        .set({ final: 0 })
        .where("event_id", "=", eventId)
        .where("entrant_id", "=", entrant.id)
        .execute();
      if (unique.length > 0) {
        await trx
          .updateTable("olympiad_submissions")
          .set({ final: 1 })
          .where("event_id", "=", eventId)
          .where("entrant_id", "=", entrant.id)
          .where("id", "in", unique)
          .execute();
      }
    });
    return { event_id: eventId, entrant: entrant.id, finals: unique, max_finals: task.max_finals };
  }

  // -------------------------------------------------------------------------------------------
  // Leaderboard

  /** `GET …/leaderboard`: best public score per entrant (ties: earliest submission); after the close, the recorded private ranking too. */
  async leaderboard(eventId: string) {
    const { task } = await this.taskOr404(eventId);
    const metric = metricOf(task.metric) as Metric;
    const rows = await this.db
      .selectFrom("olympiad_submissions")
      .select(["id", "entrant_id", "entrant_kind", "public_score", "created_at"])
      .where("event_id", "=", eventId)
      .where("status", "=", "scored")
      .execute();
    const best = new Map<string, (typeof rows)[number] & { count: number }>();
    for (const r of rows) {
      if (r.public_score === null) continue;
      const cur = best.get(r.entrant_id);
      const count = (cur?.count ?? 0) + 1;
      if (!cur || better(metric, r.public_score, r.created_at, cur.public_score as string, cur.created_at)) {
        best.set(r.entrant_id, { ...r, count });
      } else cur.count = count;
    }
    const ordered = [...best.values()].sort((a, b) =>
      better(metric, a.public_score as string, a.created_at, b.public_score as string, b.created_at) ? -1 : 1,
    );
    const state = this.stateOf(task);
    let final: {
      seq: number;
      hash: string;
      results: {
        entrant: string;
        rank: number | null;
        private_score: string | null;
        public_score: string | null;
        submission_sha256: string | null;
      }[];
    } | null = null;
    if (task.record_seq !== null) {
      const entry = await this.db
        .selectFrom("chain_entries")
        .select(["seq", "hash", "body"])
        .where("chain", "=", "olympiad")
        .where("seq", "=", task.record_seq)
        .executeTakeFirst();
      if (entry) {
        const body = JSON.parse(entry.body) as RecordBody;
        final = {
          seq: entry.seq,
          hash: entry.hash,
          results: [...body.results]
            .sort((a, b) => (a.rank ?? Number.MAX_SAFE_INTEGER) - (b.rank ?? Number.MAX_SAFE_INTEGER))
            .map((l) => ({
              entrant: (l.team_id ?? l.participant_id) as string,
              rank: l.rank,
              private_score: l.score,
              public_score: l.public_score ?? null,
              submission_sha256: l.submission_sha256 ?? null,
            })),
        };
      }
    }
    return {
      event_id: eventId,
      state,
      metric: { id: metric.id, better: metric.better },
      closes_at: task.closes_at,
      public: ordered.map((r, i) => ({
        rank: i + 1,
        entrant: r.entrant_id,
        entrant_kind: r.entrant_kind,
        public_score: r.public_score as string,
        submitted_at: r.created_at,
        scored_submissions: r.count,
      })),
      final,
    };
  }

  // -------------------------------------------------------------------------------------------
  // Scoring (a queue task per submission) and closing (the sweep)

  /** Scoring tasks go to this queue (src/services.ts: the runner's); without one, the sweep scores. */
  useQueue(queue: Pick<TaskQueue, "enqueue">): void {
    this.queue = queue;
  }

  /** The submission's scoring task; if it cannot be queued the row stays pending for the sweep. */
  private async enqueueScoring(eventId: string, submissionId: string): Promise<void> {
    if (!this.queue) return this.kick();
    try {
      await this.queue.enqueue(
        SCORE_TASK,
        { event_id: eventId },
        { id: scoreTaskId(eventId, submissionId), attempts: SCORE_TASK_ATTEMPTS, backoffMs: 1000 },
      );
    } catch (err) {
      this.log("olympiad scoring task not queued (the sweep scores the submission)", err);
      this.kick();
    }
  }

  /**
   * The `olympiad-score` task's handler: the event's pending submissions, under the event's lease
   * (one scorer per event whichever worker runs it). A lease held elsewhere with rows still
   * pending is a retry (the holder may have read its batch before this row was stored).
   */
  async scoreTask(payload: unknown): Promise<void> {
    const eventId = (payload as { event_id?: unknown } | null)?.event_id;
    if (typeof eventId !== "string" || !eventById(eventId)) {
      throw new PermanentTaskError(`olympiad-score: no event '${String(eventId)}'`, "bad_payload");
    }
    const leased = await this.withLease(eventId, async () => {
      const task = await this.task(eventId);
      if (task) await this.scorePending(task);
    });
    if (leased) return;
    const left = await this.db
      .selectFrom("olympiad_submissions")
      .select("id")
      .where("event_id", "=", eventId)
      .where("status", "=", "pending")
      .limit(1)
      .executeTakeFirst();
    if (left) throw new Error(`olympiad-score: event ${eventId} is being scored elsewhere; retrying`);
  }

  /** Starts the periodic sweep (0: none in this process). */
  start(intervalMs: number): void {
    if (intervalMs <= 0 || this.timer) return;
    this.timer = setInterval(() => this.kick(), intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.sweeping?.catch(() => {});
  }

  /** A sweep soon, unless one is running (submissions ask for one; the interval too). */
  private kick(): void {
    if (this.config.olympiadTasks.scoringPollSeconds <= 0 || this.sweeping) return;
    this.sweeping = this.sweep()
      .catch((err) => this.log("olympiad scoring sweep failed", err))
      .finally(() => {
        this.sweeping = undefined;
      });
  }

  /** Scores pending submissions and closes due tasks, one event at a time under its lease. */
  async sweep(): Promise<{ scored: number; closed: number }> {
    const nowIso = this.now().toISOString();
    const due = await this.db
      .selectFrom("olympiad_tasks")
      .select("event_id")
      .where("closed_at", "is", null)
      .where("closes_at", "<=", nowIso)
      .limit(20)
      .execute();
    const pending = await this.db
      .selectFrom("olympiad_submissions")
      .select("event_id")
      .distinct()
      .where("status", "=", "pending")
      .limit(20)
      .execute();
    const events = [...new Set([...pending.map((p) => p.event_id), ...due.map((d) => d.event_id)])];
    let scored = 0;
    let closed = 0;
    for (const eventId of events) {
      await this.withLease(eventId, async () => {
        const task = await this.task(eventId);
        if (!task) return;
        scored += await this.scorePending(task);
        if (task.closed_at === null && Date.parse(task.closes_at) <= this.now().getTime()) {
          if (await this.close(task)) closed++;
        }
      });
    }
    return { scored, closed };
  }

  private async withLease(eventId: string, fn: () => Promise<void>): Promise<boolean> {
    const now = this.now();
    const r = await this.db
      .updateTable("olympiad_tasks")
      .set({ scoring_lease_until: new Date(now.getTime() + SCORING_LEASE_MS).toISOString(), scoring_owner: this.owner })
      .where("event_id", "=", eventId)
      .where((eb) => eb.or([eb("scoring_lease_until", "is", null), eb("scoring_lease_until", "<", now.toISOString())]))
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) !== 1) return false;
    try {
      await fn();
    } finally {
      await this.db
        .updateTable("olympiad_tasks")
        .set({ scoring_lease_until: null, scoring_owner: null })
        .where("event_id", "=", eventId)
        .where("scoring_owner", "=", this.owner)
        .execute();
    }
    return true;
  }

  /** The public and private scores of one file against the key. */
  private async scoresOf(
    task: TaskRow,
    sub: Pick<SubmissionRow, "content" | "format">,
  ): Promise<{ public_score: string; private_score: string } | { error: string }> {
    const metric = metricOf(task.metric) as Metric;
    const key = await this.keyOf(task);
    const parsed = parseTable(sub.content, sub.format, {
      idColumn: task.id_column,
      valueColumn: task.value_column,
      kind: metric.kind,
    });
    if (!parsed.ok) return { error: `the file no longer parses: ${parsed.issues[0]?.problem}` };
    const byId = new Map(parsed.rows.map((r: TableRow) => [r.id, r.value]));
    const pub: Pair[] = [];
    const priv: Pair[] = [];
    for (const [id, truth] of key.values) {
      const pred = byId.get(id);
      if (pred === undefined) return { error: `id ${id} is missing` };
      (key.publicIds.has(id) ? pub : priv).push({ truth, pred });
    }
    try {
      const p = scoreText(metric.score(pub, task.k ?? undefined));
      const q = scoreText(metric.score(priv, task.k ?? undefined));
      if (p === null || q === null) return { error: "the metric's value is not a finite number" };
      return { public_score: p, private_score: q };
    } catch (err) {
      return { error: `the metric failed: ${err instanceof Error ? err.message : String(err)}` };
    }
  }

  private async scorePending(task: TaskRow): Promise<number> {
    let n = 0;
    for (;;) {
      const batch = await this.db
        .selectFrom("olympiad_submissions")
        .select(["id", "content", "format"])
        .where("event_id", "=", task.event_id)
        .where("status", "=", "pending")
        .orderBy("created_at")
        .limit(20)
        .execute();
      if (batch.length === 0) return n;
      for (const sub of batch) {
        const s = await this.scoresOf(task, sub);
        const at = this.now().toISOString();
        await this.db
          .updateTable("olympiad_submissions")
          .set(
            "error" in s
              ? { status: "failed", error: s.error, scored_at: at }
              : { status: "scored", public_score: s.public_score, private_score: s.private_score, scored_at: at },
          )
          .where("id", "=", sub.id)
          .where("status", "=", "pending")
          .execute();
        n++;
      }
    }
  }

  /** Each entrant's finals (selected, or its best public ones), its best private score among them. */
  private async finalLines(task: TaskRow, event: OlympiadEvent): Promise<ResultLine[]> {
    const metric = metricOf(task.metric) as Metric;
    const subs = await this.db
      .selectFrom("olympiad_submissions")
      .select(["id", "entrant_id", "sha256", "public_score", "private_score", "final", "created_at"])
      .where("event_id", "=", task.event_id)
      .where("status", "=", "scored")
      .orderBy("created_at")
      .orderBy("id")
      .execute();
    const by = new Map<string, typeof subs>();
    for (const s of subs) by.set(s.entrant_id, [...(by.get(s.entrant_id) ?? []), s]);
    const lines: ResultLine[] = [];
    for (const [entrant, list] of [...by.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
      const selected = list.filter((s) => s.final === 1);
      const finals =
        selected.length > 0
          ? selected
          : [...list]
              .sort((a, b) =>
                better(metric, a.public_score as string, a.created_at, b.public_score as string, b.created_at) ? -1 : 1,
              )
              .slice(0, task.max_finals);
      const pick = [...finals].sort((a, b) =>
        better(metric, a.private_score as string, a.created_at, b.private_score as string, b.created_at) ? -1 : 1,
      )[0];
      if (!pick) continue;
      lines.push({
        ...(event.entrants === "team" ? { team_id: entrant } : { participant_id: entrant }),
        rank: null,
        score: pick.private_score,
        submission_id: pick.id,
        submission_sha256: pick.sha256,
        public_score: pick.public_score,
        ...(selected.length > 0 ? {} : { note: "no finals selected: best public submissions used" }),
      });
    }
    const ranks = ranksFromScores(
      lines.map((l) => l.score),
      metric.better,
    );
    lines.forEach((l, i) => {
      l.rank = ranks[i] ?? null;
    });
    return lines;
  }

  private resultBody(
    task: TaskRow,
    event: OlympiadEvent,
    lines: ResultLine[],
    correction?: { supersedes: number; reason: string },
  ) {
    const metric = metricOf(task.metric) as Metric;
    const base = `${this.config.baseUrl}/api/olympiad/events/${task.event_id}`;
    const body: RecordBody = {
      season_id: task.season_id,
      quarter: task.quarter,
      event_id: event.id,
      family: event.family,
      entrants: event.entrants,
      weight: event.weight,
      better: metric.better,
      held_on: task.closes_at.slice(0, 10),
      results: lines,
      evidence: {
        url: `${base}/key`,
        sha256: task.key_sha256,
        note: `Scored by the service: ${metric.id} on the private part of the key; the key and its split seed are published at the url; the key's SHA-256 was committed at seq ${task.commit_seq}.`,
      },
      scoring: {
        metric: metric.id,
        k: task.k,
        key_sha256: task.key_sha256,
        key_committed_seq: task.commit_seq,
        split_seed: task.split_seed,
        public_bp: task.public_bp,
        key_url: `${base}/key`,
        leaderboard_url: `${base}/leaderboard`,
      },
      ...(correction ?? {}),
    };
    return body;
  }

  /** At the close: ranks the finals on the private part and appends the result set to the chain. */
  private async close(task: TaskRow): Promise<boolean> {
    const event = eventById(task.event_id) as OlympiadEvent;
    const lines = await this.finalLines(task, event);
    const at = this.now().toISOString();
    const markClosed = async (db: Executor, recordSeq: number | null, error: string | null) => {
      const r = await db
        .updateTable("olympiad_tasks")
        .set({ closed_at: at, record_seq: recordSeq, close_error: error })
        .where("event_id", "=", task.event_id)
        .where("closed_at", "is", null)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) !== 1) throw new Error(`task ${task.event_id} closed twice`);
    };
    if (lines.length === 0) {
      await markClosed(this.db, null, "no scored submission: nothing to record");
      return true;
    }
    try {
      await this.records.appendOwn("result", this.resultBody(task, event, lines) as never, SCORER_ACTOR, (trx, entry) =>
        markClosed(trx, entry.seq, null),
      );
    } catch (err) {
      if (!(err instanceof Problem)) throw err;
      // e.g. an operator recorded this event's result by hand already: kept, and said on the task
      await markClosed(this.db, null, `${err.code}: ${err.detail}`);
      this.log(`olympiad task ${task.event_id} closed without a record: ${err.code}`);
    }
    return true;
  }

  /**
   * `POST /api/admin/olympiad/events/:event_id/rescore`: after a metric fix, every submission is
   * scored again and the result set is replaced by an appended correction (never an edit).
   */
  async rescore(eventId: string, reason: string, actor: string) {
    const { event, task } = await this.taskOr404(eventId);
    if (task.record_seq === null) {
      throw conflict("task_not_recorded", `'${eventId}' has no recorded result set to correct yet.`, {
        closed_at: task.closed_at,
        close_error: task.close_error,
      });
    }
    const subs = await this.db
      .selectFrom("olympiad_submissions")
      .select(["id", "content", "format"])
      .where("event_id", "=", eventId)
      .where("status", "in", ["scored", "failed"])
      .execute();
    const at = this.now().toISOString();
    for (const sub of subs) {
      const s = await this.scoresOf(task, sub);
      await this.db
        .updateTable("olympiad_submissions")
        .set(
          "error" in s
            ? { status: "failed", error: s.error, public_score: null, private_score: null, scored_at: at }
            : {
                status: "scored",
                error: null,
                public_score: s.public_score,
                private_score: s.private_score,
                scored_at: at,
              },
        )
        .where("id", "=", sub.id)
        .execute();
    }
    const lines = await this.finalLines(task, event);
    if (lines.length === 0) throw conflict("task_nothing_to_record", "No submission scores after re-scoring.");
    const body = this.resultBody(task, event, lines, { supersedes: task.record_seq, reason });
    const entry = await this.records.appendOwn("correction", body as never, actor, async (trx, e) => {
      await trx.updateTable("olympiad_tasks").set({ record_seq: e.seq }).where("event_id", "=", eventId).execute();
    });
    return { event_id: eventId, seq: entry.seq, hash: entry.hash, supersedes: task.record_seq, rescored: subs.length };
  }
}

/** a beats b: the better score by the metric's direction; equal scores go to the earlier submission. */
function better(metric: Metric, a: string, aAt: string, b: string, bAt: string): boolean {
  const c = compareScores(a, b);
  if (c !== 0) return metric.better === "higher" ? c > 0 : c < 0;
  return aAt < bAt;
}
