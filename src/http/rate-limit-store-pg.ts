import { type Kysely, sql } from "kysely";
import type { Database } from "../db/schema.js";
import type { RateCount, RateLimitStore } from "./rate-limit-store.js";

/**
 * The rate-limit counters in PostgreSQL (DATABASE_URL): every service instance counts in the same
 * rows, so a client's budget is the same whichever instance answers (docs/limits.md "Rate limits",
 * issue #21 item 8). One row per key (`<client ip>|<group>`): the window's start (ms since the
 * epoch) and its count. Counting is one statement, atomic under concurrency (the conflicting row
 * is locked by `ON CONFLICT DO UPDATE`, so two instances never both see the same count):
 *
 *   INSERT (key, now, 1) ON CONFLICT (key) DO UPDATE
 *     SET count = 1 and window_start = now   when the stored window has ended,
 *         count = count + 1                   otherwise
 *   RETURNING count, window_start
 *
 * A window is opened by the key's first request, as in the in-process store. Rows whose window
 * ended are deleted by a sweep (every `sweepEveryMs`, on each instance; deleting twice is harmless).
 * The clock is the service's (injectable), not the database's: instances are expected to keep
 * their clocks in step (NTP); a skew of a few ms moves a window's end by as much.
 */

export interface RateLimitTables {
  rate_limits: {
    key: string;
    /** ms since the epoch (bigint) */
    window_start: string | number;
    count: number;
  };
}

export interface PgRateLimitStoreOptions {
  now?: () => number;
  /** How often expired rows are deleted (0: never on a timer; `sweep()` still works). */
  sweepEveryMs?: number;
  /** The longest window in use: rows older than it are expired whatever their key. */
  maxWindowMs?: number;
}

export class PgRateLimitStore implements RateLimitStore {
  private readonly now: () => number;
  private readonly maxWindowMs: number;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    options: PgRateLimitStoreOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.maxWindowMs = options.maxWindowMs ?? 60_000;
    const every = options.sweepEveryMs ?? 60_000;
    if (every > 0) {
      this.timer = setInterval(() => {
        this.sweep().catch(() => {});
      }, every);
      this.timer.unref();
    }
  }

  async incr(key: string, windowMs: number): Promise<RateCount> {
    const now = Math.floor(this.now());
    const { rows } = await sql<{ count: number; window_start: string | number }>`
      insert into rate_limits as r (key, window_start, count) values (${key}, ${now}::bigint, 1)
      on conflict (key) do update set
        count = case when r.window_start + ${windowMs}::bigint <= ${now}::bigint then 1 else r.count + 1 end,
        window_start = case when r.window_start + ${windowMs}::bigint <= ${now}::bigint
          then ${now}::bigint else r.window_start end
      returning count, window_start`.execute(this.db);
    const row = rows[0];
    if (!row) throw new Error("rate_limits: no row returned");
    return { current: Number(row.count), ttl: Number(row.window_start) + windowMs - now };
  }

  async read(key: string, windowMs: number): Promise<RateCount> {
    const now = Math.floor(this.now());
    const row = await this.db
      .selectFrom("rate_limits")
      .select(["count", "window_start"])
      .where("key", "=", key)
      .executeTakeFirst();
    if (!row || Number(row.window_start) + windowMs <= now) return { current: 0, ttl: 0 };
    return { current: Number(row.count), ttl: Number(row.window_start) + windowMs - now };
  }

  async refund(key: string, windowMs: number): Promise<void> {
    const now = Math.floor(this.now());
    await sql`
      update rate_limits set count = count - 1
      where key = ${key} and count > 0 and window_start + ${windowMs}::bigint > ${now}::bigint`.execute(this.db);
  }

  /** Deletes the rows whose window has ended; answers how many. */
  async sweep(): Promise<number> {
    const r = await this.db
      .deleteFrom("rate_limits")
      .where("window_start", "<=", this.now() - this.maxWindowMs)
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
