import os from "node:os";

/**
 * The task queue the suite-job runner stands on (issue #10). Its tasks are named: `segment` (a suite
 * job's segment) and `olympiad-score` (issue #26); the runner dispatches them by name (runner.ts,
 * `RunnerOptions.tasks`). Two implementations share this
 * interface and one contract-test suite (test/jobs/queue.contract.test.ts):
 *
 * - `TableTaskQueue` (sqlite.ts): a small in-process queue on the `queue_tasks` table, the SQLite
 *   default (one machine);
 * - `BullTaskQueue` (bullmq.ts): BullMQ 6 on its PostgreSQL backend, used whenever DATABASE_URL is
 *   set (several `labphi worker` processes on several machines).
 *
 * Semantics both keep:
 * - a task has a deterministic id: enqueueing an id that exists (in any state) does nothing;
 * - waiting tasks are taken by ascending `priority` (paid segments before free ones), then first in,
 *   first out;
 * - a task runs on one worker at a time, under a lease the worker renews while the handler runs;
 *   a lease that runs out (the worker was killed or stalled) hands the task to another worker;
 * - every start counts as an attempt (a start whose worker died too); a failed attempt is retried
 *   after `backoffMs × 2^(attempt-1)` until `attempts` starts are used, then the task fails and
 *   `onFailed` is called with the reason (before the task is recorded failed, so a crash there
 *   repeats the call rather than losing it: make it idempotent);
 * - a `PermanentTaskError` fails the task at once (no retry);
 * - `stop()` stops taking tasks, lets running handlers finish for `graceMs`, then aborts them and
 *   puts their tasks back without counting the attempt;
 * - `cancel(ids)` removes the waiting ones of those tasks (never a running or finished one).
 */

export interface EnqueueOptions {
  /** Deterministic task id (e.g. `<job>:<segment>`): enqueueing it again is a no-op. */
  id: string;
  /** Starts allowed, the first included (default 3). */
  attempts?: number;
  /** First retry delay; doubles per attempt (default 1000 ms). */
  backoffMs?: number;
  /**
   * Scheduling class: waiting tasks are taken in ascending priority, then in the order they became
   * due (default 0, the first class). `TASK_PRIORITY`: paid jobs' segments 0, free ones' 10.
   */
  priority?: number;
}

/**
 * Priorities of suite-job segments (issue #21 item 3): a paid job's segments are taken before any
 * waiting segment of a free job. 0 is also BullMQ's "no priority", which it takes before every
 * prioritized job; its PostgreSQL backend claims by `ORDER BY priority, seq`.
 */
export const TASK_PRIORITY = { paid: 0, free: 10 } as const;

/** The priority of a job's segments from how it was bought (`jobs.paid_by`). */
export function taskPriority(paidBy: string): number {
  return paidBy === "free" ? TASK_PRIORITY.free : TASK_PRIORITY.paid;
}

export interface TaskContext {
  id: string;
  name: string;
  /** 1-based attempt number (starts so far, this one included) */
  attempt: number;
  maxAttempts: number;
  /** Who runs it (host:pid:random). */
  workerId: string;
  /** Aborted when the lease is lost or `stop()` gives up waiting: stop work, throw. */
  signal: AbortSignal;
}

export type TaskHandler = (name: string, payload: unknown, ctx: TaskContext) => Promise<void>;

export interface TaskFailure {
  id: string;
  name: string;
  payload: unknown;
  attempts: number;
  /** Why the last attempt failed (the handler's error message, or the lease that ran out). */
  reason: string;
  /** The `PermanentTaskError` code when that failed it. */
  code?: string;
}

export interface WorkOptions {
  /** Tasks run at once by this process (default 1). */
  concurrency?: number;
  /** Called once a task has failed for good (see the semantics above). */
  onFailed?: (failure: TaskFailure) => Promise<void> | void;
}

export type TaskState = "waiting" | "active" | "done" | "failed";

export interface TaskStatus {
  id: string;
  state: TaskState;
  /** starts so far */
  attempts: number;
  /** the last failure's reason, if any */
  reason: string | null;
}

export interface TaskQueue {
  readonly kind: "table" | "bullmq";
  /** Lease length: a dead worker's task is taken over within `recoveryBoundMs`. */
  readonly leaseMs: number;
  /** Worst-case time from a worker's death to another worker taking its task over. */
  readonly recoveryBoundMs: number;
  /** Prepares the backing store (BullMQ runs its migrations, idempotently). Called by the others. */
  start(): Promise<void>;
  enqueue(name: string, payload: unknown, opts: EnqueueOptions): Promise<{ created: boolean }>;
  /** Starts this process's workers (once per queue object). */
  work(handler: TaskHandler, opts?: WorkOptions): Promise<void>;
  status(id: string): Promise<TaskStatus | undefined>;
  /**
   * Removes the waiting tasks among `ids` (due, or waiting for a retry): they never run, and
   * `status` no longer knows them. A running task is left to its handler (which must see the
   * cancellation itself: the runner reads the job's state) and a finished one stays as it is.
   * Returns how many were removed. Used by `POST /api/jobs/:id/cancel` (src/jobs/manage.ts).
   */
  cancel(ids: readonly string[]): Promise<number>;
  /**
   * Stops taking tasks; running handlers get `graceMs` (default: the lease) to finish, then are
   * aborted and their tasks released. `abandon: true` stops dead instead, as a crash would
   * (tests: leases are left to run out).
   */
  stop(opts?: { graceMs?: number; abandon?: boolean }): Promise<void>;
}

/** A failure no retry can fix (e.g. a corrupted input): the task fails at once. */
export class PermanentTaskError extends Error {
  constructor(
    message: string,
    readonly code: string = "permanent",
  ) {
    super(message);
    this.name = "PermanentTaskError";
  }
}

export const DEFAULT_ATTEMPTS = 3;
export const DEFAULT_BACKOFF_MS = 1000;

export function backoffDelay(baseMs: number, attempt: number): number {
  return Math.min(baseMs * 2 ** Math.max(0, attempt - 1), 10 * 60_000);
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** An id for this process's workers: host:pid:random. */
export function newWorkerId(): string {
  return `${os.hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
}
