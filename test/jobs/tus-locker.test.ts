import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Problem } from "../../src/http/problem.js";
import { PgTusLocker, uploadLockKey } from "../../src/jobs/tus-locker.js";
import { createPostgresDatabase } from "../support/databases.js";

/**
 * Issue #21 item 8: the tus upload lock shared through PostgreSQL advisory locks. Two lockers
 * stand for two service instances (each its own connections, as two processes would have).
 */

let url: string;
let a: PgTusLocker;
let b: PgTusLocker;
beforeAll(async () => {
  url = await createPostgresDatabase();
  a = new PgTusLocker({ connectionString: url, acquireTimeoutMs: 3000, pollMs: 20 });
  b = new PgTusLocker({ connectionString: url, acquireTimeoutMs: 3000, pollMs: 20 });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
});

const never = () => new AbortController().signal;
const noop = () => {};

async function advisoryLocks(): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    // This test's database only: other test files share the server and take advisory locks of their own.
    const r = await c.query(
      "select count(*)::int as n from pg_locks where locktype = 'advisory' and granted and database = (select oid from pg_database where datname = current_database())",
    );
    return r.rows[0].n;
  } finally {
    await c.end();
  }
}

describe("PgTusLocker", () => {
  it("one key per upload id, 64-bit", () => {
    expect(uploadLockKey("job_a")).toBe(uploadLockKey("job_a"));
    expect(uploadLockKey("job_a")).not.toBe(uploadLockKey("job_b"));
    expect(BigInt(uploadLockKey("job_a"))).toBeLessThan(2n ** 63n);
  });

  it("excludes across instances: B waits while A holds the upload, and gets it when A lets go", async () => {
    const la = a.newLock("job_x1");
    await la.lock(never(), noop);
    const lb = b.newLock("job_x1");
    let gotB = false;
    const waiting = lb.lock(never(), noop).then(() => {
      gotB = true;
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(gotB).toBe(false);
    // another upload is not blocked
    const other = b.newLock("job_x2");
    await other.lock(never(), noop);
    await other.unlock();
    await la.unlock();
    await waiting;
    expect(gotB).toBe(true);
    await lb.unlock();
    expect(await advisoryLocks()).toBe(0);
  });

  it("a waiter on another instance asks the holder to let go (NOTIFY): the holder's request is cancelled", async () => {
    const la = a.newLock("job_y");
    let cancelled = 0;
    await la.lock(never(), () => {
      cancelled++;
      // what tus does when asked: the holder's request ends and unlocks
      setTimeout(() => la.unlock(), 10);
    });
    await a.listen(); // A's LISTEN connection is up (it starts with A's first lock)
    const started = Date.now();
    const lb = b.newLock("job_y");
    await lb.lock(never(), noop);
    expect(cancelled).toBeGreaterThanOrEqual(1);
    expect(Date.now() - started).toBeLessThan(2000);
    await lb.unlock();
  });

  it("times out with 423 upload_locked, and stops when the request is aborted", async () => {
    const short = new PgTusLocker({ connectionString: url, acquireTimeoutMs: 300, pollMs: 20 });
    try {
      const la = a.newLock("job_z");
      await la.lock(never(), noop); // holder ignores release requests
      const err = await short
        .newLock("job_z")
        .lock(never(), noop)
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Problem);
      expect((err as Problem).status).toBe(423);
      expect((err as Problem).code).toBe("upload_locked");
      const abort = new AbortController();
      const pending = short
        .newLock("job_z")
        .lock(abort.signal, noop)
        .catch((e: unknown) => e);
      abort.abort();
      expect(((await pending) as Problem).code).toBe("upload_locked");
      await la.unlock();
    } finally {
      await short.close();
    }
  });

  it("a dead holder's lock is freed with its connection", async () => {
    const dying = new PgTusLocker({ connectionString: url, acquireTimeoutMs: 3000, pollMs: 20 });
    const held = dying.newLock("job_dead");
    await held.lock(never(), noop);
    expect(await advisoryLocks()).toBe(1);
    // The process dies: its connections close (here: the server ends them, as it does for a dead client).
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(
      "select pg_terminate_backend(pid) from pg_locks where locktype = 'advisory' and granted and pid <> pg_backend_pid() and database = (select oid from pg_database where datname = current_database())",
    );
    await admin.end();
    const lb = b.newLock("job_dead");
    await lb.lock(never(), noop);
    await lb.unlock();
    await dying.close().catch(() => {});
    expect(await advisoryLocks()).toBe(0);
  });
});
