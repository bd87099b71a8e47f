import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../src/db/database.js";
import { BullTaskQueue } from "../../src/jobs/queue/bullmq.js";
import { TableTaskQueue } from "../../src/jobs/queue/sqlite.js";
import {
  PermanentTaskError,
  TASK_PRIORITY,
  type TaskContext,
  type TaskFailure,
  type TaskQueue,
  type TaskStatus,
} from "../../src/jobs/queue/types.js";
import { type Engine, freshDatabase } from "../support/databases.js";

/**
 * One contract, three queues: the in-process table queue on SQLite (the default), the same on
 * PostgreSQL tables, and BullMQ on its PostgreSQL backend (DATABASE_URL).
 */

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

interface Variant {
  name: string;
  engine: Engine;
  make(db: Db, url: string | undefined, queue: string, leaseMs: number): TaskQueue;
}

const VARIANTS: Variant[] = [
  {
    name: "table queue on SQLite",
    engine: "sqlite",
    make: (db, _url, queue, leaseMs) => new TableTaskQueue(db.kysely, { queue, leaseMs, pollMs: 100 }),
  },
  {
    name: "table queue on PostgreSQL",
    engine: "postgres",
    make: (db, _url, queue, leaseMs) => new TableTaskQueue(db.kysely, { queue, leaseMs, pollMs: 100 }),
  },
  {
    name: "BullMQ on PostgreSQL",
    engine: "postgres",
    make: (_db, url, queue, leaseMs) => new BullTaskQueue({ connectionString: url as string, queue, leaseMs }),
  },
];

let counter = 0;

describe.each(VARIANTS)("task queue contract: $name", (variant) => {
  let db: Db;
  let url: string | undefined;
  const open: TaskQueue[] = [];

  beforeAll(async () => {
    const fresh = await freshDatabase(variant.engine);
    db = fresh.db;
    url = fresh.databaseUrl;
  });
  afterAll(async () => {
    for (const q of open) await q.stop({ graceMs: 0 }).catch(() => {});
    await db.close();
  });

  /** a fresh queue name per test, and queue objects on it ("workers") */
  function workers(n: number, leaseMs = 10_000): TaskQueue[] {
    const name = `q${++counter}`;
    const qs = Array.from({ length: n }, () => variant.make(db, url, name, leaseMs));
    open.push(...qs);
    return qs;
  }

  const status = (q: TaskQueue, id: string) => q.status(id);
  const inState = (q: TaskQueue, id: string, state: TaskStatus["state"]) =>
    until(`${id} ${state}`, async () => {
      const s = await status(q, id);
      return s?.state === state ? s : undefined;
    });

  it("runs each task once under two workers, never two at a time", async () => {
    const [a, b] = workers(2) as [TaskQueue, TaskQueue];
    const ids = Array.from({ length: 12 }, (_, i) => `job-${i}:${i}`);
    for (const id of ids) await a.enqueue("t", { id }, { id });
    const runs = new Map<string, string[]>();
    const active = new Set<string>();
    let overlap = false;
    const handler = (who: string) => async (_name: string, payload: unknown, ctx: TaskContext) => {
      if (active.has(ctx.id)) overlap = true;
      active.add(ctx.id);
      runs.set(ctx.id, [...(runs.get(ctx.id) ?? []), who]);
      expect((payload as { id: string }).id).toBe(ctx.id);
      await sleep(40);
      active.delete(ctx.id);
    };
    await a.work(handler("a"), { concurrency: 2 });
    await b.work(handler("b"), { concurrency: 2 });
    for (const id of ids) await inState(a, id, "done");
    expect(overlap).toBe(false);
    expect([...runs.keys()].sort()).toEqual([...ids].sort());
    for (const id of ids) expect(runs.get(id)).toHaveLength(1);
    await a.stop();
    await b.stop();
  });

  it("retries a failing task with backoff, then succeeds", async () => {
    const [q] = workers(1) as [TaskQueue];
    const seen: number[] = [];
    const failures: TaskFailure[] = [];
    await q.enqueue("t", { x: 1 }, { id: "retry:1", attempts: 3, backoffMs: 50 });
    await q.work(
      async (_n, _p, ctx) => {
        seen.push(ctx.attempt);
        expect(ctx.maxAttempts).toBe(3);
        if (ctx.attempt < 3) throw new Error(`flaky ${ctx.attempt}`);
      },
      { onFailed: (f) => void failures.push(f) },
    );
    const s = await inState(q, "retry:1", "done");
    expect(seen).toEqual([1, 2, 3]);
    expect(s.attempts).toBe(3);
    expect(failures).toEqual([]);
    await q.stop();
  });

  it("fails a task after its attempts, with the reason, once", async () => {
    const [q] = workers(1) as [TaskQueue];
    const failures: TaskFailure[] = [];
    let runs = 0;
    await q.enqueue("t", { x: 2 }, { id: "exhaust:1", attempts: 2, backoffMs: 50 });
    await q.work(
      async (_n, _p, ctx) => {
        runs++;
        throw new Error(`boom on attempt ${ctx.attempt}`);
      },
      { onFailed: (f) => void failures.push(f) },
    );
    const s = await inState(q, "exhaust:1", "failed");
    expect(s.reason).toContain("boom on attempt 2");
    await sleep(300);
    expect(runs).toBe(2);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ id: "exhaust:1", name: "t", payload: { x: 2 }, attempts: 2 });
    expect(failures[0]?.reason).toContain("boom on attempt 2");
    await q.stop();
  });

  it("fails a task at once on a PermanentTaskError", async () => {
    const [q] = workers(1) as [TaskQueue];
    const failures: TaskFailure[] = [];
    await q.enqueue("t", {}, { id: "perm:1", attempts: 5, backoffMs: 50 });
    await q.work(
      async () => {
        throw new PermanentTaskError("input is corrupt", "input_corrupt");
      },
      { onFailed: (f) => void failures.push(f) },
    );
    const s = await inState(q, "perm:1", "failed");
    expect(s.attempts).toBe(1);
    expect(failures).toMatchObject([{ attempts: 1, code: "input_corrupt", reason: "input is corrupt" }]);
    await q.stop();
  });

  it("hands a dead worker's task to another worker once its lease runs out", async () => {
    const leaseMs = 1500;
    const [a, b] = workers(2, leaseMs) as [TaskQueue, TaskQueue];
    await a.enqueue("t", {}, { id: "lease:1", attempts: 3 });
    let startedOnA = false;
    await a.work(async (_n, _p, ctx) => {
      startedOnA = true;
      // hangs until its worker goes away
      await new Promise((_r, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)));
    });
    await until("a started", async () => startedOnA);
    await a.stop({ abandon: true }); // as a SIGKILL: no release, the lease just stops being renewed
    const died = Date.now();
    let takenAfter = -1;
    let attemptOnB = 0;
    await b.work(async (_n, _p, ctx) => {
      takenAfter = Date.now() - died;
      attemptOnB = ctx.attempt;
    });
    await inState(b, "lease:1", "done");
    expect(attemptOnB).toBe(2);
    expect(takenAfter).toBeGreaterThan(0);
    expect(takenAfter).toBeLessThanOrEqual(b.recoveryBoundMs + 1500);
    await b.stop();
  });

  it("fails a task whose last attempt's worker died, with a clear reason (never stuck)", async () => {
    const [a, b] = workers(2, 1500) as [TaskQueue, TaskQueue];
    await a.enqueue("t", {}, { id: "lease:last", attempts: 1 });
    let startedOnA = false;
    await a.work(async (_n, _p, ctx) => {
      startedOnA = true;
      await new Promise((_r, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)));
    });
    await until("a started", async () => startedOnA);
    await a.stop({ abandon: true });
    const failures: TaskFailure[] = [];
    let ranOnB = false;
    await b.work(
      async () => {
        ranOnB = true;
      },
      { onFailed: (f) => void failures.push(f) },
    );
    const s = await inState(b, "lease:last", "failed");
    expect(ranOnB).toBe(false);
    expect(s.reason).toMatch(/lease expired/);
    expect(failures).toHaveLength(1);
    expect(failures[0]?.reason).toMatch(/lease expired on attempt 1 of 1/);
    await b.stop();
  });

  it("releases a running task on stop() without counting the attempt", async () => {
    const [a, b] = workers(2) as [TaskQueue, TaskQueue];
    await a.enqueue("t", {}, { id: "release:1", attempts: 1 });
    let startedOnA = false;
    await a.work(async (_n, _p, ctx) => {
      startedOnA = true;
      await new Promise((_r, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)));
    });
    await until("a started", async () => startedOnA);
    await a.stop({ graceMs: 100 });
    let attemptOnB = 0;
    await b.work(async (_n, _p, ctx) => {
      attemptOnB = ctx.attempt;
    });
    await inState(b, "release:1", "done");
    expect(attemptOnB).toBe(1);
    await b.stop();
  });

  it("takes a paid task queued behind 20 free ones next (priority before first-in-first-out)", async () => {
    const [q] = workers(1) as [TaskQueue];
    const free = Array.from({ length: 20 }, (_, i) => `free-${i}:0`);
    for (const id of free) await q.enqueue("t", { id }, { id, priority: TASK_PRIORITY.free });
    const order: string[] = [];
    let release: () => void = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    await q.work(async (_n, _p, ctx) => {
      order.push(ctx.id);
      // the first free task runs while the paid one arrives behind the 19 others
      if (order.length === 1) await held;
    });
    await until("the first free task started", async () => order.length === 1);
    await q.enqueue("t", { id: "paid-0:0" }, { id: "paid-0:0", priority: TASK_PRIORITY.paid });
    release();
    await inState(q, "paid-0:0", "done");
    for (const id of free) await inState(q, id, "done");
    expect(order[0]).toBe("free-0:0");
    expect(order[1]).toBe("paid-0:0");
    // the free ones keep their order among themselves
    expect(order.filter((id) => id.startsWith("free-"))).toEqual(free);
    await q.stop();
  });

  it("dedupes by id: enqueueing an existing id (waiting or finished) does nothing", async () => {
    const [q] = workers(1) as [TaskQueue];
    expect(await q.enqueue("t", { v: 1 }, { id: "dup:1" })).toEqual({ created: true });
    expect(await q.enqueue("t", { v: 2 }, { id: "dup:1" })).toEqual({ created: false });
    const payloads: unknown[] = [];
    await q.work(async (_n, p) => {
      payloads.push(p);
    });
    await inState(q, "dup:1", "done");
    expect(await q.enqueue("t", { v: 3 }, { id: "dup:1" })).toEqual({ created: false });
    await sleep(300);
    expect(payloads).toEqual([{ v: 1 }]);
    expect(await q.status("missing:1")).toBeUndefined();
    await q.stop();
  });

  it("cancel removes waiting tasks (ready or waiting for a retry), never a running or finished one", async () => {
    const [q] = workers(1) as [TaskQueue];
    // waiting before any worker runs
    for (const id of ["cx:g:0", "cx:g:1", "cx:g:2", "other:g:0"]) await q.enqueue("t", { id }, { id });
    expect(await q.cancel(["cx:g:0", "cx:g:1", "cx:g:2", "missing:g:9"])).toBe(3);
    for (const id of ["cx:g:0", "cx:g:1", "cx:g:2"]) expect(await q.status(id)).toBeUndefined();
    expect((await q.status("other:g:0"))?.state).toBe("waiting");
    expect(await q.cancel([])).toBe(0);

    // one running (held), one failed once and waiting for its retry (long backoff), one done
    let release: () => void = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    const ran: string[] = [];
    await q.enqueue("t", {}, { id: "run:g:0" });
    await q.work(
      async (_n, _p, ctx) => {
        ran.push(ctx.id);
        if (ctx.id === "run:g:0") await held;
        if (ctx.id === "retry:g:0") throw new Error("flaky");
      },
      { concurrency: 2 },
    );
    await inState(q, "other:g:0", "done");
    await until("run started", async () => ran.includes("run:g:0"));
    await q.enqueue("t", {}, { id: "retry:g:0", attempts: 3, backoffMs: 60_000 });
    await until("retry failed once", async () => {
      const s = await q.status("retry:g:0");
      return s?.attempts === 1 && s.state === "waiting";
    });
    expect(await q.cancel(["run:g:0", "retry:g:0", "other:g:0"])).toBe(1);
    expect(await q.status("retry:g:0")).toBeUndefined();
    expect((await q.status("other:g:0"))?.state).toBe("done");
    expect((await q.status("run:g:0"))?.state).toBe("active");
    release();
    await inState(q, "run:g:0", "done");
    expect(ran.filter((id) => id === "retry:g:0")).toHaveLength(1);
    await q.stop();
  });
});
