import { randomUUID } from "node:crypto";
import { PermanentTaskError, type TaskQueue } from "../../../jobs/queue/types.js";
import { eventById } from "../events.js";
import type { TaskClosing } from "./closing.js";
import { type TaskContext, taskOf } from "./context.js";
import { SCORE_TASK, scoreTaskId } from "./queue-task.js";
import type { TaskKeys } from "./scores.js";
import { submissionStore, taskStore } from "./store.js";
import type { TaskRow } from "./tables.js";

/**
 * Scoring (docs/olympiad-tasks.md "Scoring"): a job-queue task per accepted submission
 * (`olympiad-score`, queue-task.ts) scores the event's pending submissions under the event's lease
 * (a lease on the task row, so one scorer per event across workers; the queued task survives a
 * restart); the sweep, a safety net, scores rows left pending and closes the tasks that are due.
 */

/** how long a scorer holds an event; a crashed scorer's event is taken over after it */
export const SCORING_LEASE_MS = 60_000;
/** Starts per scoring task: a busy event lease is retried 1, 2, 4, 8 s later; then the sweep has it. */
export const SCORE_TASK_ATTEMPTS = 5;

export class TaskScoring {
  private readonly owner = randomUUID();
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<unknown> | undefined;
  /** The suite's task queue: each accepted submission enqueues a scoring task (`useQueue`). */
  private queue: Pick<TaskQueue, "enqueue"> | undefined;

  constructor(
    private readonly ctx: TaskContext,
    private readonly keys: TaskKeys,
    private readonly closing: TaskClosing,
  ) {}

  /** Scoring tasks go to this queue (src/services.ts: the runner's); without one, the sweep scores. */
  useQueue(queue: Pick<TaskQueue, "enqueue">): void {
    this.queue = queue;
  }

  /** The submission's scoring task; if it cannot be queued the row stays pending for the sweep. */
  async enqueueScoring(eventId: string, submissionId: string): Promise<void> {
    if (!this.queue) return this.kick();
    try {
      await this.queue.enqueue(
        SCORE_TASK,
        { event_id: eventId },
        { id: scoreTaskId(eventId, submissionId), attempts: SCORE_TASK_ATTEMPTS, backoffMs: 1000 },
      );
    } catch (err) {
      this.ctx.log("olympiad scoring task not queued (the sweep scores the submission)", err);
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
      const task = await taskOf(this.ctx.db, eventId);
      if (task) await this.scorePending(task);
    });
    if (leased) return;
    if (await submissionStore.hasPending(this.ctx.db, eventId)) {
      throw new Error(`olympiad-score: event ${eventId} is being scored elsewhere; retrying`);
    }
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
    if (this.ctx.config.olympiadTasks.scoringPollSeconds <= 0 || this.sweeping) return;
    this.sweeping = this.sweep()
      .catch((err) => this.ctx.log("olympiad scoring sweep failed", err))
      .finally(() => {
        this.sweeping = undefined;
      });
  }

  /** Scores pending submissions and closes due tasks, one event at a time under its lease. */
  async sweep(): Promise<{ scored: number; closed: number }> {
    const nowIso = this.ctx.now().toISOString();
    const due = await taskStore.dueToClose(this.ctx.db, nowIso, 20);
    const pending = await submissionStore.pendingEvents(this.ctx.db, 20);
    const events = [...new Set([...pending, ...due])];
    let scored = 0;
    let closed = 0;
    for (const eventId of events) {
      await this.withLease(eventId, async () => {
        const task = await taskOf(this.ctx.db, eventId);
        if (!task) return;
        scored += await this.scorePending(task);
        if (task.closed_at === null && Date.parse(task.closes_at) <= this.ctx.now().getTime()) {
          if (await this.closing.close(task)) closed++;
        }
      });
    }
    return { scored, closed };
  }

  private async withLease(eventId: string, fn: () => Promise<void>): Promise<boolean> {
    const now = this.ctx.now();
    const until = new Date(now.getTime() + SCORING_LEASE_MS).toISOString();
    if (!(await taskStore.takeLease(this.ctx.db, eventId, this.owner, now.toISOString(), until))) return false;
    try {
      await fn();
    } finally {
      await taskStore.releaseLease(this.ctx.db, eventId, this.owner);
    }
    return true;
  }

  private async scorePending(task: TaskRow): Promise<number> {
    let n = 0;
    for (;;) {
      const batch = await submissionStore.pendingBatch(this.ctx.db, task.event_id, 20);
      if (batch.length === 0) return n;
      for (const sub of batch) {
        const s = await this.keys.scoresOf(task, sub);
        const at = this.ctx.now().toISOString();
        await submissionStore.scorePending(
          this.ctx.db,
          sub.id,
          "error" in s
            ? { status: "failed", error: s.error, scored_at: at }
            : { status: "scored", public_score: s.public_score, private_score: s.private_score, scored_at: at },
        );
        n++;
      }
    }
  }
}
