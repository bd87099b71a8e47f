import { sql } from "kysely";
import type { Executor } from "../../../db/executor.js";
import type { SubmissionCountRow, SubmissionRow, TaskFileRow, TaskRow } from "./tables.js";

/**
 * The SQL of scored events (src/olympiad/events/tasks/tables.ts): tasks, their public files, the
 * scoring lease and the recorded result set (`taskStore`); submissions and their daily counts, and
 * the team an entrant submits for (`submissionStore`). Queries only: the rules are in the parts that
 * call them (definition.ts, publication.ts, submissions.ts, scoring.ts, closing.ts, leaderboard.ts).
 */

/** What the events index shows of a task. */
export type TaskSummary = Pick<TaskRow, "event_id" | "metric" | "opens_at" | "closes_at" | "record_seq">;

/** What an event's page lists of a public file (its content is served on its own). */
export type TaskFileSummary = Pick<TaskFileRow, "name" | "media_type" | "sha256" | "bytes">;

export const taskStore = {
  task(db: Executor, eventId: string): Promise<TaskRow | undefined> {
    return db.selectFrom("olympiad_tasks").selectAll().where("event_id", "=", eventId).executeTakeFirst();
  },

  /** Every task, as the events index shows it (in no particular order). */
  summaries(db: Executor): Promise<TaskSummary[]> {
    return db
      .selectFrom("olympiad_tasks")
      .select(["event_id", "metric", "opens_at", "closes_at", "record_seq"])
      .execute();
  },

  async deleteTask(db: Executor, eventId: string): Promise<void> {
    await db.deleteFrom("olympiad_tasks").where("event_id", "=", eventId).execute();
  },

  async insertTask(db: Executor, row: TaskRow): Promise<void> {
    await db.insertInto("olympiad_tasks").values(row).execute();
  },

  async deleteFiles(db: Executor, eventId: string): Promise<void> {
    await db.deleteFrom("olympiad_task_files").where("event_id", "=", eventId).execute();
  },

  /** Inserts the task's public files (at least one: an empty insert is not SQL). */
  async insertFiles(db: Executor, files: TaskFileRow[]): Promise<void> {
    await db.insertInto("olympiad_task_files").values(files).execute();
  },

  /** The task's public files, by name. */
  files(db: Executor, eventId: string): Promise<TaskFileSummary[]> {
    return db
      .selectFrom("olympiad_task_files")
      .select(["name", "media_type", "sha256", "bytes"])
      .where("event_id", "=", eventId)
      .orderBy("name")
      .execute();
  },

  file(db: Executor, eventId: string, name: string): Promise<TaskFileRow | undefined> {
    return db
      .selectFrom("olympiad_task_files")
      .selectAll()
      .where("event_id", "=", eventId)
      .where("name", "=", name)
      .executeTakeFirst();
  },

  /** Event ids of open tasks whose close has passed (`nowIso`), at most `limit`. */
  async dueToClose(db: Executor, nowIso: string, limit: number): Promise<string[]> {
    const rows = await db
      .selectFrom("olympiad_tasks")
      .select("event_id")
      .where("closed_at", "is", null)
      .where("closes_at", "<=", nowIso)
      .limit(limit)
      .execute();
    return rows.map((r) => r.event_id);
  },

  /**
   * Takes the event's scoring lease for `owner` until `untilIso`, only while it is free or expired
   * at `nowIso`: one conditional update, so of two racing scorers one wins. True when taken.
   */
  async takeLease(db: Executor, eventId: string, owner: string, nowIso: string, untilIso: string): Promise<boolean> {
    const r = await db
      .updateTable("olympiad_tasks")
      .set({ scoring_lease_until: untilIso, scoring_owner: owner })
      .where("event_id", "=", eventId)
      .where((eb) => eb.or([eb("scoring_lease_until", "is", null), eb("scoring_lease_until", "<", nowIso)]))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  },

  /** Frees the event's scoring lease if `owner` still holds it. */
  async releaseLease(db: Executor, eventId: string, owner: string): Promise<void> {
    await db
      .updateTable("olympiad_tasks")
      .set({ scoring_lease_until: null, scoring_owner: null })
      .where("event_id", "=", eventId)
      .where("scoring_owner", "=", owner)
      .execute();
  },

  /** Closes the task once, only while open: true for the one caller that closed it. */
  async markClosed(
    db: Executor,
    eventId: string,
    at: string,
    recordSeq: number | null,
    error: string | null,
  ): Promise<boolean> {
    const r = await db
      .updateTable("olympiad_tasks")
      .set({ closed_at: at, record_seq: recordSeq, close_error: error })
      .where("event_id", "=", eventId)
      .where("closed_at", "is", null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  },

  /** Points the task at its latest result set (a correction's entry). */
  async setRecordSeq(db: Executor, eventId: string, seq: number): Promise<void> {
    await db.updateTable("olympiad_tasks").set({ record_seq: seq }).where("event_id", "=", eventId).execute();
  },
};

/** What a scorer reads of a submission. */
export type SubmissionToScore = Pick<SubmissionRow, "id" | "content" | "format">;

/** A scoring's outcome as stored: a status and its time, with the scores or the error. */
export type ScoreUpdate = Pick<SubmissionRow, "status" | "scored_at"> &
  Partial<Pick<SubmissionRow, "error" | "public_score" | "private_score">>;

/** What the close ranks of a scored submission. */
export type ScoredSubmission = Pick<
  SubmissionRow,
  "id" | "entrant_id" | "sha256" | "public_score" | "private_score" | "final" | "created_at"
>;

/** What the leaderboard reads of a scored submission. */
export type PublicScore = Pick<SubmissionRow, "id" | "entrant_id" | "entrant_kind" | "public_score" | "created_at">;

/** What an entrant reads of its own submissions. */
export type OwnSubmission = Pick<
  SubmissionRow,
  | "id"
  | "participant_id"
  | "sha256"
  | "bytes"
  | "rows"
  | "status"
  | "public_score"
  | "private_score"
  | "error"
  | "final"
  | "created_at"
  | "scored_at"
>;

export const submissionStore = {
  async insert(db: Executor, row: SubmissionRow): Promise<void> {
    await db.insertInto("olympiad_submissions").values(row).execute();
  },

  /**
   * Counts one submission of the entrant's day, only below `quota`: one conditional upsert (row
   * lock on PostgreSQL, one writer at a time on SQLite), so concurrent submissions cannot pass it
   * together. True when counted.
   */
  async countOne(db: Executor, key: Omit<SubmissionCountRow, "n">, quota: number): Promise<boolean> {
    const r = await db
      .insertInto("olympiad_submission_counts")
      .values({ event_id: key.event_id, entrant_id: key.entrant_id, day: key.day, n: 1 })
      .onConflict((oc) =>
        oc
          .columns(["event_id", "entrant_id", "day"])
          .doUpdateSet({ n: sql`olympiad_submission_counts.n + 1` })
          .where("olympiad_submission_counts.n", "<", quota),
      )
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0n) === 1;
  },

  /** The entrant's count of the day (the row must exist). */
  async count(db: Executor, key: Omit<SubmissionCountRow, "n">): Promise<number> {
    const c = await db
      .selectFrom("olympiad_submission_counts")
      .select("n")
      .where("event_id", "=", key.event_id)
      .where("entrant_id", "=", key.entrant_id)
      .where("day", "=", key.day)
      .executeTakeFirstOrThrow();
    return Number(c.n);
  },

  /** The entrant's submissions to the event, newest first, at most `limit`. */
  ofEntrant(db: Executor, eventId: string, entrantId: string, limit: number): Promise<OwnSubmission[]> {
    return db
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
      .where("entrant_id", "=", entrantId)
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .limit(limit)
      .execute();
  },

  /** The ids among `ids` that are the entrant's submissions to the event. */
  async idsOfEntrant(db: Executor, eventId: string, entrantId: string, ids: readonly string[]): Promise<string[]> {
    const found = await db
      .selectFrom("olympiad_submissions")
      .select("id")
      .where("event_id", "=", eventId)
      .where("entrant_id", "=", entrantId)
      .where("id", "in", ids)
      .execute();
    return found.map((f) => f.id);
  },

  /** Unselects every final submission of the entrant to the event. */
  async clearFinals(db: Executor, eventId: string, entrantId: string): Promise<void> {
    await db
      .updateTable("olympiad_submissions")
      .set({ final: 0 })
      .where("event_id", "=", eventId)
      .where("entrant_id", "=", entrantId)
      .execute();
  },

  /** Selects the entrant's submissions `ids` (non-empty) as its finals. */
  async markFinals(db: Executor, eventId: string, entrantId: string, ids: readonly string[]): Promise<void> {
    await db
      .updateTable("olympiad_submissions")
      .set({ final: 1 })
      .where("event_id", "=", eventId)
      .where("entrant_id", "=", entrantId)
      .where("id", "in", ids)
      .execute();
  },

  /** Whether the event has a pending submission. */
  async hasPending(db: Executor, eventId: string): Promise<boolean> {
    const left = await db
      .selectFrom("olympiad_submissions")
      .select("id")
      .where("event_id", "=", eventId)
      .where("status", "=", "pending")
      .limit(1)
      .executeTakeFirst();
    return left !== undefined;
  },

  /** Event ids with pending submissions, at most `limit`. */
  async pendingEvents(db: Executor, limit: number): Promise<string[]> {
    const rows = await db
      .selectFrom("olympiad_submissions")
      .select("event_id")
      .distinct()
      .where("status", "=", "pending")
      .limit(limit)
      .execute();
    return rows.map((r) => r.event_id);
  },

  /** The event's oldest pending submissions, at most `limit`. */
  pendingBatch(db: Executor, eventId: string, limit: number): Promise<SubmissionToScore[]> {
    return db
      .selectFrom("olympiad_submissions")
      .select(["id", "content", "format"])
      .where("event_id", "=", eventId)
      .where("status", "=", "pending")
      .orderBy("created_at")
      .limit(limit)
      .execute();
  },

  /** Stores a scoring's outcome, only while the submission is still pending. */
  async scorePending(db: Executor, id: string, update: ScoreUpdate): Promise<void> {
    await db
      .updateTable("olympiad_submissions")
      .set(update)
      .where("id", "=", id)
      .where("status", "=", "pending")
      .execute();
  },

  /** The event's submissions a rescore scores again (scored or failed). */
  toRescore(db: Executor, eventId: string): Promise<SubmissionToScore[]> {
    return db
      .selectFrom("olympiad_submissions")
      .select(["id", "content", "format"])
      .where("event_id", "=", eventId)
      .where("status", "in", ["scored", "failed"])
      .execute();
  },

  /** Stores a rescore's outcome, whatever the submission's status. */
  async rescore(db: Executor, id: string, update: ScoreUpdate): Promise<void> {
    await db.updateTable("olympiad_submissions").set(update).where("id", "=", id).execute();
  },

  /** The event's scored submissions (with their finals flag) in submission order, for the close. */
  scored(db: Executor, eventId: string): Promise<ScoredSubmission[]> {
    return db
      .selectFrom("olympiad_submissions")
      .select(["id", "entrant_id", "sha256", "public_score", "private_score", "final", "created_at"])
      .where("event_id", "=", eventId)
      .where("status", "=", "scored")
      .orderBy("created_at")
      .orderBy("id")
      .execute();
  },

  /** The event's scored submissions as the leaderboard reads them (in no particular order). */
  publicScores(db: Executor, eventId: string): Promise<PublicScore[]> {
    return db
      .selectFrom("olympiad_submissions")
      .select(["id", "entrant_id", "entrant_kind", "public_score", "created_at"])
      .where("event_id", "=", eventId)
      .where("status", "=", "scored")
      .execute();
  },
};
