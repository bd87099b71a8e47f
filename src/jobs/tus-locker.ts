import { createHash } from "node:crypto";
import type { Lock, Locker, RequestRelease } from "@tus/server";
import pg from "pg";
import { Problem } from "../http/problem.js";

/**
 * The tus upload lock shared by every service instance through PostgreSQL advisory locks (issue
 * #21 item 8, docs/limits.md "tus uploads on many instances"): a tus request (POST, HEAD, PATCH)
 * on an upload holds the upload's lock while it runs, whichever instance serves it, so two PATCH
 * requests of one upload never write at once, and a PATCH sent to instance B after one to instance
 * A starts from the offset A left. The upload's bytes and its `.json` info live in DATA_DIR/spool/tus, which the
 * instances must share (a shared volume): @tus/file-store reads the offset from the file's size.
 *
 * How: each held lock is a session-level `pg_advisory_lock` on its own connection, checked out of
 * a small pool of its own for as long as the lock is held (never the app's pool). A waiter polls
 * `pg_try_advisory_lock` every `pollMs` until `acquireTimeoutMs` (then 423 `upload_locked`, which
 * tus clients retry). Released with `pg_advisory_unlock_all()` before the connection goes back to
 * the pool; when that fails the connection is destroyed. A holder that dies (process killed,
 * network gone) loses its connection, and PostgreSQL frees its locks with the session.
 *
 * Like @tus/server's MemoryLocker, a waiter asks the holder to let go (the holder's request is
 * cancelled: a stalled PATCH must not hold an upload for ever): a holder in this process is told
 * directly, one in another instance through `NOTIFY labphi_tus_release, '<upload id>'`, which every
 * instance LISTENs to on one connection.
 */

export const TUS_RELEASE_CHANNEL = "labphi_tus_release";

export interface PgTusLockerOptions {
  connectionString: string;
  /** How long a request waits for an upload's lock (default 30 s, MemoryLocker's). */
  acquireTimeoutMs?: number;
  /** How often a waiter tries again (default 50 ms). */
  pollMs?: number;
  /** Locks held or awaited at once by this instance (connections; default 20). */
  maxConnections?: number;
  /** Reports unexpected failures (a lost LISTEN connection, an unlock that failed). */
  onError?: (err: unknown) => void;
}

/** The 64-bit advisory lock key of an upload: the first 8 bytes of a SHA-256, as a signed bigint. */
export function uploadLockKey(id: string): string {
  const digest = createHash("sha256").update(`labphi:tus:${id}`).digest();
  return digest.readBigInt64BE(0).toString();
}

export class PgTusLocker implements Locker {
  readonly acquireTimeoutMs: number;
  readonly pollMs: number;
  private readonly pool: pg.Pool;
  /** The locks this instance holds, by upload id, with the way to ask their request to stop. */
  readonly held = new Map<string, RequestRelease>();
  /** The connections of the locks held now (closed with the locker: their sessions end, the locks go). */
  readonly connections = new Set<pg.PoolClient>();
  private listener: Promise<pg.Client> | undefined;
  private closed = false;

  constructor(private readonly options: PgTusLockerOptions) {
    this.acquireTimeoutMs = options.acquireTimeoutMs ?? 30_000;
    this.pollMs = options.pollMs ?? 50;
    this.pool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.maxConnections ?? 20,
      connectionTimeoutMillis: this.acquireTimeoutMs,
      // no statement_timeout: a lock is held by an idle session for as long as its request runs
    });
    // A connection that breaks (the server restarting) only loses its lock (and PostgreSQL frees it).
    this.pool.on("error", (err) => options.onError?.(err));
    this.pool.on("connect", (client) => {
      client.on("error", () => {});
    });
  }

  newLock(id: string): Lock {
    return new PgTusLock(id, this);
  }

  /** The connection of a new lock (from the locker's own pool). */
  connect(): Promise<pg.PoolClient> {
    return this.pool.connect();
  }

  /** Asks the holder of `id`, in this instance or another, to end its request. */
  async requestRelease(id: string): Promise<void> {
    const local = this.held.get(id);
    if (local) {
      await local();
      return;
    }
    await this.pool.query("select pg_notify($1, $2)", [TUS_RELEASE_CHANNEL, id]);
  }

  /** Starts listening for other instances' release requests (once; again after a lost connection). */
  listen(): Promise<pg.Client> {
    if (this.listener) return this.listener;
    const client = new pg.Client({ connectionString: this.options.connectionString });
    const drop = (err: unknown) => {
      this.options.onError?.(err);
      this.listener = undefined;
      client.end().catch(() => {});
    };
    client.on("error", drop);
    client.on("notification", (msg) => {
      if (msg.channel !== TUS_RELEASE_CHANNEL || !msg.payload) return;
      const release = this.held.get(msg.payload);
      if (release) Promise.resolve(release()).catch((err) => this.options.onError?.(err));
    });
    this.listener = (async () => {
      await client.connect();
      await client.query(`listen ${TUS_RELEASE_CHANNEL}`);
      return client;
    })();
    this.listener.catch(drop);
    return this.listener;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  async close(): Promise<void> {
    this.closed = true;
    const listener = this.listener;
    this.listener = undefined;
    if (listener) await listener.then((c) => c.end()).catch(() => {});
    for (const client of this.connections) client.release(true);
    this.connections.clear();
    await this.pool.end();
  }
}

class PgTusLock implements Lock {
  private client: pg.PoolClient | undefined;
  private readonly key: string;

  constructor(
    private readonly id: string,
    private readonly locker: PgTusLocker,
  ) {
    this.key = uploadLockKey(id);
  }

  async lock(signal: AbortSignal, requestRelease: RequestRelease): Promise<void> {
    const { locker } = this;
    // Listening is best effort: without it a waiter still gets the lock when the holder ends.
    locker.listen().catch(() => {});
    const deadline = Date.now() + locker.acquireTimeoutMs;
    let client: pg.PoolClient;
    try {
      client = await locker.connect();
    } catch (err) {
      // Every lock connection of this instance busy for acquireTimeoutMs (TUS_LOCK_CONNECTIONS),
      // or PostgreSQL unreachable: a retryable answer, never a 500.
      if (signal.aborted || locker.isClosed) throw locked(this.id, "the request ended");
      throw locked(this.id, `no lock connection free (${err instanceof Error ? err.message : "error"})`);
    }
    let asked = 0;
    try {
      for (;;) {
        if (signal.aborted || locker.isClosed) throw locked(this.id, "the request ended");
        const r = await client.query<{ ok: boolean }>("select pg_try_advisory_lock($1::bigint) as ok", [this.key]);
        if (r.rows[0]?.ok) {
          this.client = client;
          locker.connections.add(client);
          locker.held.set(this.id, requestRelease);
          return;
        }
        if (Date.now() >= deadline) throw locked(this.id, `still locked after ${locker.acquireTimeoutMs} ms`);
        // Ask the holder to let go now and then (its request may be stalled on a dead connection).
        if (asked++ % 20 === 0) await locker.requestRelease(this.id).catch(() => {});
        await new Promise((resolve) => setTimeout(resolve, locker.pollMs));
      }
    } catch (err) {
      if (this.client !== client) client.release();
      throw err;
    }
  }

  async unlock(): Promise<void> {
    const client = this.client;
    if (!client) throw new Error("Releasing an unlocked lock!");
    this.client = undefined;
    this.locker.held.delete(this.id);
    if (!this.locker.connections.delete(client)) return; // the locker closed: the session is gone
    try {
      await client.query("select pg_advisory_unlock_all()");
      client.release();
    } catch (err) {
      // Destroying the connection ends its session, and PostgreSQL frees the lock with it.
      client.release(err instanceof Error ? err : true);
    }
  }
}

function locked(id: string, why: string): Problem {
  return new Problem(
    423,
    "upload_locked",
    `Another request is writing this upload (${why}); try again (HEAD for the offset, then PATCH from it).`,
    { upload_id: id, retry_after: 1 },
  );
}

/**
 * The tus locker of a deployment: shared through PostgreSQL when the database is PostgreSQL (and
 * its URL is known), else undefined (@tus/server's MemoryLocker: one process, the SQLite default).
 */
export function tusLockerFor(
  db: { kind: string },
  config: { databaseUrl: string | undefined; tusLockConnections: number },
  onError?: (err: unknown) => void,
): PgTusLocker | undefined {
  if (db.kind !== "postgres" || !config.databaseUrl) return undefined;
  return new PgTusLocker({
    connectionString: config.databaseUrl,
    maxConnections: config.tusLockConnections,
    ...(onError ? { onError } : {}),
  });
}
