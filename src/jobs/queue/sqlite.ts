import { type FSWatcher, watch, writeFileSync } from "node:fs";
import { type ExpressionBuilder, type Kysely, sql } from "kysely";
import type { Database } from "../../db/schema.js";
import type { QueueTaskRow } from "../tables.js";
import {
  backoffDelay,
  DEFAULT_ATTEMPTS,
  DEFAULT_BACKOFF_MS,
  type EnqueueOptions,
  errorMessage,
  newWorkerId,
  PermanentTaskError,
  type TaskHandler,
  type TaskQueue,
  type TaskStatus,
  type WorkOptions,
} from "./types.js";

/**
 * The in-process task queue of the SQLite default (one machine), on the `queue_tasks` table
 * (semantics: types.ts). Claiming is one conditional update (`ready` and due, or `leased` with a
 * lease that ran out → `leased` by us, attempts + 1); every later write is fenced by
 * (worker, attempts), so a worker that lost its lease changes nothing. The lease is renewed every
 * lease/3 while the handler runs. Idle workers poll every `pollMs` (and wake at once on a local
 * enqueue, and, with `wakeFile`, on another process's: the enqueuer writes the file, the idle
 * workers watch it). Waiting tasks are taken by ascending `priority` (paid before free), then by `run_after`.
 * Portable SQL: it also runs on PostgreSQL tables (the contract suite runs it there),
 * but with several machines the lease compares their clocks; there, BullMQ is used.
 */

export interface TableQueueOptions {
  /** Name of the queue inside the table (default `suite`). */
  queue?: string;
  /** Lease length (default 20 s). */
  leaseMs?: number;
  /** Idle poll period (default 100 ms: a worker process on the same SQLite file takes a new segment within it). */
  pollMs?: number;
  /** Where operational errors go (a failed claim, a failed renewal). */
  log?: (msg: string) => void;
  /**
   * A file beside the database (one machine): an enqueue writes one byte to it and idle workers of
   * other processes watch it (fs.watch: inotify on Linux), so a `labphi worker` takes a new task
   * at once instead of at its next poll (up to `pollMs`; issue #23 item 6). Only a hint: where the
   * watch is not available, the poll still finds every task.
   */
  wakeFile?: string;
}

interface Envelope {
  name: string;
  payload: unknown;
  backoffMs: number;
}

interface Running {
  row: QueueTaskRow;
  controller: AbortController;
  /** set when the lease could not be renewed: someone else may run it now */
  lost: boolean;
  /** set when stop() aborted it: put it back */
  released: boolean;
}

const iso = (ms: number) => new Date(ms).toISOString();
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class TableTaskQueue implements TaskQueue {
  readonly kind = "table" as const;
  readonly leaseMs: number;
  readonly pollMs: number;
  readonly queue: string;
  readonly workerId = newWorkerId();
  private readonly log: (msg: string) => void;
  private loops: Promise<void>[] = [];
  private readonly running = new Set<Running>();
  private stopping = false;
  private abandoned = false;
  private waiters = new Set<() => void>();
  private readonly wakeFile: string | undefined;
  private watcher: FSWatcher | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    opts: TableQueueOptions = {},
  ) {
    this.queue = opts.queue ?? "suite";
    this.leaseMs = opts.leaseMs ?? 20_000;
    this.pollMs = opts.pollMs ?? 100;
    this.log = opts.log ?? (() => {});
    this.wakeFile = opts.wakeFile;
  }

  get recoveryBoundMs(): number {
    return this.leaseMs + this.pollMs;
  }

  async start(): Promise<void> {}

  async enqueue(name: string, payload: unknown, opts: EnqueueOptions): Promise<{ created: boolean }> {
    const at = iso(Date.now());
    const envelope: Envelope = { name, payload, backoffMs: opts.backoffMs ?? DEFAULT_BACKOFF_MS };
    const r = await this.db
      .insertInto("queue_tasks")
      .values({
        id: opts.id,
        queue: this.queue,
        payload: JSON.stringify(envelope),
        state: "ready",
        priority: opts.priority ?? 0,
        attempts: 0,
        max_attempts: opts.attempts ?? DEFAULT_ATTEMPTS,
        run_after: at,
        lease_until: null,
        worker: null,
        error: null,
        created_at: at,
        updated_at: at,
      })
      .onConflict((oc) => oc.column("id").doNothing())
      .executeTakeFirst();
    const created = Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
    if (created) {
      this.poke();
      this.wakeOthers();
    }
    return { created };
  }

  async status(id: string): Promise<TaskStatus | undefined> {
    const row = await this.db.selectFrom("queue_tasks").selectAll().where("id", "=", id).executeTakeFirst();
    if (!row) return undefined;
    const state = { ready: "waiting", leased: "active", done: "done", failed: "failed" } as const;
    return { id, state: state[row.state], attempts: row.attempts, reason: row.error };
  }

  async cancel(ids: readonly string[]): Promise<number> {
    let removed = 0;
    // in slices: a job has at most a few thousand segments, SQLite binds at most 32766 values
    for (let i = 0; i < ids.length; i += 500) {
      const r = await this.db
        .deleteFrom("queue_tasks")
        .where("queue", "=", this.queue)
        .where("id", "in", ids.slice(i, i + 500))
        .where("state", "=", "ready")
        .executeTakeFirst();
      removed += Number(r.numDeletedRows);
    }
    return removed;
  }

  async work(handler: TaskHandler, opts: WorkOptions = {}): Promise<void> {
    if (this.loops.length > 0) throw new Error("work() already started on this queue");
    this.stopping = false;
    const n = Math.max(1, opts.concurrency ?? 1);
    this.watchWakeFile();
    for (let i = 0; i < n; i++) this.loops.push(this.loop(handler, opts));
  }

  async stop(opts: { graceMs?: number; abandon?: boolean } = {}): Promise<void> {
    this.stopping = true;
    this.watcher?.close();
    this.watcher = undefined;
    for (const w of this.waiters) w();
    if (opts.abandon) {
      // as a crash: no more writes, leases left to run out
      this.abandoned = true;
      for (const r of this.running) r.controller.abort(new Error("worker abandoned"));
    } else {
      const finished = Promise.all(this.loops).then(() => true);
      const inTime = await Promise.race([finished, sleep(opts.graceMs ?? this.leaseMs).then(() => false)]);
      if (!inTime) {
        for (const r of this.running) {
          r.released = true;
          r.controller.abort(new Error("worker stopping"));
        }
      }
    }
    await Promise.all(this.loops);
    this.loops = [];
  }

  /** wake idle local workers (a task was just enqueued here) */
  private poke(): void {
    for (const w of this.waiters) w();
  }

  /** wake the idle workers of other processes on this database (`wakeFile`) */
  private wakeOthers(): void {
    if (!this.wakeFile) return;
    try {
      writeFileSync(this.wakeFile, "1");
    } catch {
      // only a hint: the others' poll finds the task
    }
  }

  /** this process's idle workers wake when another process enqueues (`wakeFile`) */
  private watchWakeFile(): void {
    if (!this.wakeFile || this.watcher) return;
    try {
      writeFileSync(this.wakeFile, "", { flag: "a" });
      this.watcher = watch(this.wakeFile, { persistent: false }, () => this.poke());
      this.watcher.on("error", () => {
        this.watcher?.close();
        this.watcher = undefined;
      });
    } catch {
      // no watch here (e.g. a file system without notifications): the poll finds every task
    }
  }

  private idle(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.waiters.delete(done);
        resolve();
      };
      const t = setTimeout(done, this.pollMs);
      this.waiters.add(done);
    });
  }

  private async loop(handler: TaskHandler, opts: WorkOptions): Promise<void> {
    while (!this.stopping) {
      let claimed: { row: QueueTaskRow; previous: Pick<QueueTaskRow, "state" | "worker" | "error"> } | undefined;
      try {
        claimed = await this.claim();
      } catch (err) {
        this.log(`queue claim failed: ${errorMessage(err)}`);
        await this.idle();
        continue;
      }
      if (!claimed) {
        await this.idle();
        continue;
      }
      await this.run(claimed.row, claimed.previous, handler, opts);
    }
  }

  private due(now: string) {
    return (eb: ExpressionBuilder<Database, "queue_tasks">) =>
      eb.or([
        eb.and([eb("state", "=", "ready"), eb("run_after", "<=", now)]),
        eb.and([eb("state", "=", "leased"), eb("lease_until", "<", now)]),
      ]);
  }

  private async claim(): Promise<
    { row: QueueTaskRow; previous: Pick<QueueTaskRow, "state" | "worker" | "error"> } | undefined
  > {
    const now = iso(Date.now());
    const candidate = await this.db
      .selectFrom("queue_tasks")
      .select(["id", "state", "worker", "error"])
      .where("queue", "=", this.queue)
      .where(this.due(now))
      // paid segments before free ones (TASK_PRIORITY), then first due, first taken
      .orderBy("priority")
      .orderBy("run_after")
      .limit(1)
      .executeTakeFirst();
    if (!candidate) return undefined;
    const row = await this.db
      .updateTable("queue_tasks")
      .set({
        state: "leased",
        attempts: sql<number>`attempts + 1`,
        lease_until: iso(Date.now() + this.leaseMs),
        worker: this.workerId,
        updated_at: now,
      })
      .where("id", "=", candidate.id)
      .where(this.due(now))
      .returningAll()
      .executeTakeFirst();
    // lost the race to another worker: the caller claims again
    if (!row) return this.claim();
    return { row, previous: candidate };
  }

  /** an update of a task we hold: fenced by worker and attempt */
  private fenced(row: QueueTaskRow) {
    return this.db
      .updateTable("queue_tasks")
      .where("id", "=", row.id)
      .where("worker", "=", this.workerId)
      .where("attempts", "=", row.attempts)
      .where("state", "=", "leased");
  }

  private async run(
    row: QueueTaskRow,
    previous: Pick<QueueTaskRow, "state" | "worker" | "error">,
    handler: TaskHandler,
    opts: WorkOptions,
  ): Promise<void> {
    const env = JSON.parse(row.payload) as Envelope;
    if (row.attempts > row.max_attempts) {
      // the lease of its last attempt ran out: the worker running it died or stalled
      const reason =
        `lease expired on attempt ${row.max_attempts} of ${row.max_attempts} (worker ${previous.worker ?? "?"} ` +
        `stopped renewing it: killed or stalled)${previous.error ? `; earlier failure: ${previous.error}` : ""}`;
      await this.fail(row, env, reason, row.max_attempts, opts, undefined);
      return;
    }
    const r: Running = { row, controller: new AbortController(), lost: false, released: false };
    this.running.add(r);
    const beat = setInterval(
      () => {
        if (this.abandoned) return;
        this.fenced(row)
          .set({ lease_until: iso(Date.now() + this.leaseMs) })
          .executeTakeFirst()
          .then((u) => {
            if (Number(u.numUpdatedRows) === 0 && !r.lost) {
              r.lost = true;
              r.controller.abort(new Error("lease lost"));
            }
          })
          .catch((err) => this.log(`lease renewal of ${row.id} failed: ${errorMessage(err)}`));
      },
      Math.max(50, Math.floor(this.leaseMs / 3)),
    );
    try {
      await handler(env.name, env.payload, {
        id: row.id,
        name: env.name,
        attempt: row.attempts,
        maxAttempts: row.max_attempts,
        workerId: this.workerId,
        signal: r.controller.signal,
      });
      clearInterval(beat);
      if (this.abandoned || r.lost) return;
      await this.fenced(row)
        .set({ state: "done", lease_until: null, error: null, updated_at: iso(Date.now()) })
        .execute();
    } catch (err) {
      clearInterval(beat);
      if (this.abandoned || r.lost) return;
      const at = iso(Date.now());
      if (r.released) {
        // stop() gave up waiting: back to ready, this start not counted
        await this.fenced(row)
          .set({
            state: "ready",
            attempts: row.attempts - 1,
            lease_until: null,
            worker: null,
            run_after: at,
            updated_at: at,
          })
          .execute()
          .catch((e) => this.log(`release of ${row.id} failed: ${errorMessage(e)}`));
        return;
      }
      const reason = errorMessage(err);
      if (err instanceof PermanentTaskError || row.attempts >= row.max_attempts) {
        await this.fail(row, env, reason, row.attempts, opts, err instanceof PermanentTaskError ? err.code : undefined);
        return;
      }
      await this.fenced(row)
        .set({
          state: "ready",
          lease_until: null,
          error: reason,
          run_after: iso(Date.now() + backoffDelay(env.backoffMs, row.attempts)),
          updated_at: at,
        })
        .execute()
        .catch((e) => this.log(`retry of ${row.id} not recorded: ${errorMessage(e)}`));
    } finally {
      clearInterval(beat);
      this.running.delete(r);
    }
  }

  /** final failure: tell the owner first, then record it (a crash between repeats the call) */
  private async fail(
    row: QueueTaskRow,
    env: Envelope,
    reason: string,
    attempts: number,
    opts: WorkOptions,
    code: string | undefined,
  ) {
    try {
      await opts.onFailed?.({ id: row.id, name: env.name, payload: env.payload, attempts, reason, code });
    } catch (err) {
      // not recorded: the lease runs out and the failure is handled again
      this.log(`failure handler of ${row.id} failed: ${errorMessage(err)}`);
      return;
    }
    await this.fenced(row)
      .set({ state: "failed", lease_until: null, error: reason, updated_at: iso(Date.now()) })
      .execute()
      .catch((e) => this.log(`failure of ${row.id} not recorded: ${errorMessage(e)}`));
  }
}
