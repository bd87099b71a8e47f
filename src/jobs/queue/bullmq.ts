import {
  createPostgresBackend,
  DelayedError,
  type Job,
  type JobProgress,
  type PostgresConnectionOptions,
  type PostgresQueueBackend,
  Queue,
  runMigrations,
  UnrecoverableError,
  Worker,
} from "bullmq";
import pg from "pg";
import {
  DEFAULT_ATTEMPTS,
  DEFAULT_BACKOFF_MS,
  type EnqueueOptions,
  errorMessage,
  newWorkerId,
  PermanentTaskError,
  type TaskFailure,
  type TaskHandler,
  type TaskQueue,
  type TaskStatus,
  type WorkOptions,
} from "./types.js";

/**
 * The task queue on BullMQ 6's PostgreSQL backend (DATABASE_URL set): several `labphi worker`
 * processes on several machines share it. Semantics as in types.ts, mapped onto BullMQ:
 *
 * - deterministic id → BullMQ `jobId` (adding an existing id does nothing; our `:` is escaped,
 *   BullMQ refuses it in custom ids); jobs are kept after they finish, so re-enqueueing a finished
 *   task stays a no-op;
 * - lease → BullMQ's lock (`lockDuration` = lease, renewed every lease/2 while the handler runs);
 *   a dead worker's job is found by the stalled-job check every lease/2 and handed to another
 *   worker: recovery ≤ lease + lease/2;
 * - attempts count starts (`attemptsStarted`, minus starts released by `stop()`, kept in the job's
 *   data): a job started once more than allowed (its last start's worker died) fails at once with a
 *   reason; handler failures retry with BullMQ's exponential backoff;
 * - priority → BullMQ's job priority (0, "no priority", is taken first; then ascending): its
 *   PostgreSQL backend stores it in `job.priority` and claims with `ORDER BY priority, seq`, so a
 *   paid segment (0) is taken before every waiting free one (10), retries keeping their class;
 * - BullMQ's migrations run at `start()`: idempotent, serialized by its advisory lock.
 */

export interface BullQueueOptions {
  /** postgres:// URL (DATABASE_URL). */
  connectionString: string;
  /** BullMQ queue name (no `:`; default `suite`). */
  queue?: string;
  /** Lock (lease) length (default 20 s). */
  leaseMs?: number;
  log?: (msg: string) => void;
}

interface Data {
  /** our task id (the BullMQ job id is its escaped form) */
  id: string;
  payload: unknown;
  /** starts given back by stop() (not counted as attempts) */
  released?: number;
}

type PgQueue = Queue<
  unknown,
  unknown,
  string,
  unknown,
  unknown,
  string,
  PostgresQueueBackend,
  PostgresConnectionOptions
>;
// biome-ignore lint/suspicious/noExplicitAny: BullMQ's Job data type
type PgWorker = Worker<any, any, string, PostgresQueueBackend, JobProgress, PostgresConnectionOptions>;

interface Running {
  job: Job;
  token: string | undefined;
  controller: AbortController;
  released: boolean;
}

/** BullMQ refuses `:` in custom ids: escape it reversibly. */
export const bullJobId = (id: string) => id.replace(/%/g, "%25").replace(/:/g, "%3A");

/** BullMQ states of a job that waits to run (cancel removes these). */
const WAITING_STATES = new Set(["waiting", "prioritized", "delayed", "paused", "wait", "waiting-children"]);

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * A failure that ends the task. A job that will be retried can read "failed" for a moment on its
 * way to "delayed" (seen once in CI: the reason of attempt 1 taken as the final one), so a failed
 * state counts only once the job has finished or has no attempt left.
 */
function finallyFailed(job: Job, state: string): boolean {
  return state === "failed" && (Boolean(job.finishedOn) || job.attemptsMade >= (job.opts.attempts ?? 1));
}

export class BullTaskQueue implements TaskQueue {
  readonly kind = "bullmq" as const;
  readonly leaseMs: number;
  readonly name: string;
  readonly workerId = newWorkerId();
  private readonly connectionString: string;
  private readonly log: (msg: string) => void;
  private started: Promise<PgQueue> | undefined;
  private worker: PgWorker | undefined;
  private readonly running = new Map<string, Running>();
  /** task ids whose final failure this process already reported */
  private readonly reported = new Set<string>();
  private onFailed: WorkOptions["onFailed"];

  constructor(opts: BullQueueOptions) {
    this.connectionString = opts.connectionString;
    this.name = opts.queue ?? "suite";
    this.leaseMs = opts.leaseMs ?? 20_000;
    this.log = opts.log ?? (() => {});
  }

  /** how often the stalled-job check runs */
  get stalledIntervalMs(): number {
    return Math.max(500, Math.floor(this.leaseMs / 2));
  }

  get recoveryBoundMs(): number {
    return this.leaseMs + this.stalledIntervalMs;
  }

  start(): Promise<void> {
    this.started ??= (async (): Promise<PgQueue> => {
      const client = new pg.Client({ connectionString: this.connectionString });
      await client.connect();
      try {
        await runMigrations(client);
      } finally {
        await client.end();
      }
      const queue: PgQueue = new Queue(this.name, { connection: this.connectionString }, createPostgresBackend);
      queue.on("error", (err) => this.log(`queue error: ${errorMessage(err)}`));
      await queue.waitUntilReady();
      return queue;
    })();
    const started = this.started;
    // a failed start may be retried
    started.catch(() => {
      if (this.started === started) this.started = undefined;
    });
    return started.then(() => undefined);
  }

  private async queue(): Promise<PgQueue> {
    await this.start();
    return this.started as Promise<PgQueue>;
  }

  async enqueue(name: string, payload: unknown, opts: EnqueueOptions): Promise<{ created: boolean }> {
    const queue = await this.queue();
    const jobId = bullJobId(opts.id);
    if (await queue.getJob(jobId)) return { created: false };
    const data: Data = { id: opts.id, payload, released: 0 };
    await queue.add(name, data, {
      jobId,
      attempts: opts.attempts ?? DEFAULT_ATTEMPTS,
      // BullMQ: 0 = no priority, taken before every prioritized job; then ascending (paid 0, free 10)
      ...(opts.priority ? { priority: opts.priority } : {}),
      backoff: { type: "exponential", delay: opts.backoffMs ?? DEFAULT_BACKOFF_MS },
      removeOnComplete: false,
      removeOnFail: false,
    });
    // (another producer adding the same id between the two calls makes this add a no-op)
    return { created: true };
  }

  async status(id: string): Promise<TaskStatus | undefined> {
    const queue = await this.queue();
    const job = await queue.getJob(bullJobId(id));
    if (!job) return undefined;
    const s = await job.getState();
    const state =
      s === "completed" ? "done" : finallyFailed(job, s) ? "failed" : s === "active" ? "active" : ("waiting" as const);
    const data = job.data as Data;
    return {
      id,
      state,
      attempts: job.attemptsStarted - (data.released ?? 0),
      reason: job.failedReason ? job.failedReason : null,
    };
  }

  /** Removes the waiting ones (waiting, prioritized, delayed for a retry, paused) among `ids`. */
  async cancel(ids: readonly string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const queue = await this.queue();
    let removed = 0;
    for (const id of ids) {
      const jobId = bullJobId(id);
      const job = await queue.getJob(jobId);
      if (!job) continue;
      const state = await job.getState();
      if (!WAITING_STATES.has(state)) continue;
      // 0 when a worker took it meanwhile (locked): it runs, and its handler sees the cancellation
      removed += await queue.remove(jobId);
    }
    return removed;
  }

  async work(handler: TaskHandler, opts: WorkOptions = {}): Promise<void> {
    if (this.worker) throw new Error("work() already started on this queue");
    await this.start();
    this.onFailed = opts.onFailed;
    const worker: PgWorker = new Worker(
      this.name,
      (job: Job, token?: string) => this.process(job, token, handler),
      {
        connection: this.connectionString,
        concurrency: Math.max(1, opts.concurrency ?? 1),
        lockDuration: this.leaseMs,
        stalledInterval: this.stalledIntervalMs,
        // our attempt count (starts) fails a job before BullMQ's own stall limit would
        maxStalledCount: 1000,
        name: this.workerId,
      },
      createPostgresBackend,
    );
    worker.on("error", (err) => {
      const lost = /could not renew lock for job (\S+)/.exec(errorMessage(err));
      const r = lost ? this.running.get(lost[1] as string) : undefined;
      if (r) r.controller.abort(new Error("lease lost"));
      else this.log(`worker error: ${errorMessage(err)}`);
    });
    // a final failure this process did not report from inside the processor (e.g. BullMQ's own limits)
    worker.on("failed", (job) => {
      if (!job) return;
      void job
        .getState()
        .then((s) => (finallyFailed(job, s) ? this.report(job, job.failedReason, job.attemptsStarted) : undefined))
        .catch((err) => this.log(`failed-event handling: ${errorMessage(err)}`));
    });
    this.worker = worker;
    await worker.waitUntilReady();
  }

  private async report(job: Job, reason: string, attempts: number, code?: string): Promise<void> {
    const data = job.data as Data;
    if (this.reported.has(data.id)) return;
    const failure: TaskFailure = { id: data.id, name: job.name, payload: data.payload, attempts, reason, code };
    await this.onFailed?.(failure);
    this.reported.add(data.id);
  }

  private async process(job: Job, token: string | undefined, handler: TaskHandler): Promise<void> {
    const data = job.data as Data;
    const max = job.opts.attempts ?? 1;
    const attempt = job.attemptsStarted - (data.released ?? 0);
    if (attempt > max) {
      const reason =
        `lease expired on attempt ${max} of ${max} (the worker running it stopped renewing its lock: killed or ` +
        `stalled)${job.failedReason ? `; earlier failure: ${job.failedReason}` : ""}`;
      await this.report(job, reason, max);
      throw new UnrecoverableError(reason);
    }
    const r: Running = { job, token, controller: new AbortController(), released: false };
    this.running.set(job.id as string, r);
    try {
      await handler(job.name, data.payload, {
        id: data.id,
        name: job.name,
        attempt,
        maxAttempts: max,
        workerId: this.workerId,
        signal: r.controller.signal,
      });
    } catch (err) {
      if (r.released) {
        // stop() gave up waiting: back to the queue now, this start not counted
        await job.updateData({ ...data, released: (data.released ?? 0) + 1 });
        await job.moveToDelayed(Date.now(), token);
        throw new DelayedError();
      }
      const reason = errorMessage(err);
      if (err instanceof PermanentTaskError || attempt >= max) {
        await this.report(job, reason, attempt, err instanceof PermanentTaskError ? err.code : undefined);
        throw new UnrecoverableError(reason);
      }
      throw err;
    } finally {
      this.running.delete(job.id as string);
    }
  }

  async stop(opts: { graceMs?: number; abandon?: boolean } = {}): Promise<void> {
    const worker = this.worker;
    if (worker) {
      if (opts.abandon) {
        // as a crash: locks are left to run out (force: do not wait for the handlers)
        for (const r of this.running.values()) r.controller.abort(new Error("worker abandoned"));
        await worker.close(true);
      } else {
        const closing = worker.close();
        const inTime = await Promise.race([
          closing.then(() => true),
          sleep(opts.graceMs ?? this.leaseMs).then(() => false),
        ]);
        if (!inTime) {
          for (const r of this.running.values()) {
            r.released = true;
            r.controller.abort(new Error("worker stopping"));
          }
        }
        await closing;
      }
      this.worker = undefined;
    }
    const started = this.started;
    this.started = undefined;
    if (started) await (await started.catch(() => undefined))?.close();
  }
}
