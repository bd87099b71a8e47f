import type { Kysely } from "kysely";
import type { Config } from "../../../config.js";
import type { Executor } from "../../../db/executor.js";
import type { Database } from "../../../db/schema.js";
import type { TaskQueue } from "../../../jobs/queue/types.js";
import type { OlympiadRecords } from "../../results/service.js";
import type { ParticipantRow } from "../../tables.js";
import { TaskClosing } from "./closing.js";
import { type TaskContext, taskOf } from "./context.js";
import { TaskDefinition, type TaskInput } from "./definition.js";
import { TaskLeaderboard } from "./leaderboard.js";
import { TaskPublication } from "./publication.js";
import { SCORE_TASK, scoreTaskId } from "./queue-task.js";
import { TaskKeys } from "./scores.js";
import { TaskScoring } from "./scoring.js";
import { type SubmissionInput, TaskSubmissions } from "./submissions.js";
import type { TaskFileRow, TaskRow } from "./tables.js";

/**
 * Scored olympiad events (docs/olympiad-tasks.md): an operator attaches a task (description,
 * public files, hidden key, metric, split, window, quota) to one of the 40 events; entered
 * participants (or teams through their entered members) submit prediction files; a job-queue task
 * per submission (`olympiad-score`, queue-task.ts) scores the event's pending submissions under the
 * event's lease (a lease on the task row, so one scorer per event across workers; the queued task
 * survives a restart); the sweep, a safety net, scores rows left pending and, at the close, ranks
 * each entrant's finals on the private part and appends the result set to chain `olympiad` with its evidence.
 *
 * `OlympiadTasks` is the capability's one service; its parts are in this folder: definition.ts
 * (setting a task), publication.ts (what anyone reads), submissions.ts, scoring.ts (queue task,
 * lease, sweep), closing.ts (result set and rescore), leaderboard.ts, scores.ts (the key and a
 * file's scores), context.ts (what they share) and store.ts (every SQL statement).
 */

export { SCORER_ACTOR } from "./closing.js";
export {
  DEFAULT_DAILY_QUOTA,
  DEFAULT_MAX_FINALS,
  DEFAULT_PUBLIC_PCT,
  MAX_FILES,
  type TaskInput,
} from "./definition.js";
export { SCORE_TASK_ATTEMPTS, SCORING_LEASE_MS } from "./scoring.js";
export type { SubmissionInput } from "./submissions.js";
export { SCORE_TASK, scoreTaskId };

export class OlympiadTasks {
  now: () => Date;
  private readonly definition: TaskDefinition;
  private readonly publication: TaskPublication;
  private readonly submissions: TaskSubmissions;
  private readonly scoring: TaskScoring;
  private readonly closing: TaskClosing;
  private readonly board: TaskLeaderboard;

  constructor(
    readonly db: Kysely<Database>,
    readonly config: Pick<Config, "baseUrl" | "olympiad" | "olympiadTasks">,
    readonly records: OlympiadRecords,
    readonly log: (msg: string, err?: unknown) => void = () => {},
    now: () => Date = () => new Date(),
  ) {
    this.now = now;
    // the parts read the clock through the service: a test (or page) may replace `now`
    const ctx: TaskContext = { db, config, records, log, now: () => this.now() };
    const keys = new TaskKeys();
    this.definition = new TaskDefinition(ctx, keys);
    this.publication = new TaskPublication(ctx);
    this.closing = new TaskClosing(ctx, keys);
    this.scoring = new TaskScoring(ctx, keys, this.closing);
    this.submissions = new TaskSubmissions(ctx, keys, this.scoring);
    this.board = new TaskLeaderboard(ctx);
  }

  // -------------------------------------------------------------------------------------------
  // Tasks (definition.ts, publication.ts)

  task(eventId: string, db: Executor = this.db): Promise<TaskRow | undefined> {
    return taskOf(db, eventId);
  }

  /** `PUT /api/admin/olympiad/events/:event_id/task`: sets the task until it opens; commits the key's hash on the chain. */
  setTask(eventId: string, input: TaskInput, actor: string): Promise<{ created: boolean; task: TaskRow }> {
    return this.definition.setTask(eventId, input, actor);
  }

  /** `GET /api/olympiad/events`: the 40 events, each with its task's state, metric and window (or null). */
  index() {
    return this.publication.index();
  }

  /** `GET /api/olympiad/events/:event_id`: the event and its task as published (never the key before the close). */
  publicView(eventId: string) {
    return this.publication.publicView(eventId);
  }

  file(eventId: string, name: string): Promise<TaskFileRow> {
    return this.publication.file(eventId, name);
  }

  /** `GET …/key`: the key, its seed and split, once the close has passed; 403 before. */
  keyDocument(eventId: string) {
    return this.publication.keyDocument(eventId);
  }

  // -------------------------------------------------------------------------------------------
  // Submissions (submissions.ts)

  /** `POST …/submissions`: validated at once, stored with its SHA-256 under the daily quota, scored on the queue. */
  submit(participant: ParticipantRow, eventId: string, input: SubmissionInput) {
    return this.submissions.submit(participant, eventId, input);
  }

  /** `GET …/submissions` (participant): the entrant's submissions; private scores only after the close. */
  mySubmissions(participant: ParticipantRow, eventId: string) {
    return this.submissions.mySubmissions(participant, eventId);
  }

  /** `POST …/finals`: the entrant's final submissions (at most max_finals), before the close. */
  selectFinals(participant: ParticipantRow, eventId: string, ids: readonly string[]) {
    return this.submissions.selectFinals(participant, eventId, ids);
  }

  // -------------------------------------------------------------------------------------------
  // Leaderboard (leaderboard.ts)

  /** `GET …/leaderboard`: best public score per entrant (ties: earliest submission); after the close, the recorded private ranking too. */
  leaderboard(eventId: string) {
    return this.board.leaderboard(eventId);
  }

  // -------------------------------------------------------------------------------------------
  // Scoring (scoring.ts: a queue task per submission; the sweep) and closing (closing.ts)

  /** Scoring tasks go to this queue (src/services.ts: the runner's); without one, the sweep scores. */
  useQueue(queue: Pick<TaskQueue, "enqueue">): void {
    this.scoring.useQueue(queue);
  }

  /** The `olympiad-score` task's handler: the event's pending submissions, under the event's lease. */
  scoreTask(payload: unknown): Promise<void> {
    return this.scoring.scoreTask(payload);
  }

  /** Starts the periodic sweep (0: none in this process). */
  start(intervalMs: number): void {
    this.scoring.start(intervalMs);
  }

  stop(): Promise<void> {
    return this.scoring.stop();
  }

  /** Scores pending submissions and closes due tasks, one event at a time under its lease. */
  sweep(): Promise<{ scored: number; closed: number }> {
    return this.scoring.sweep();
  }

  /**
   * `POST /api/admin/olympiad/events/:event_id/rescore`: after a metric fix, every submission is
   * scored again and the result set is replaced by an appended correction (never an edit).
   */
  rescore(eventId: string, reason: string, actor: string) {
    return this.closing.rescore(eventId, reason, actor);
  }
}
