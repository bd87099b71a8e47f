/**
 * Where the per-IP rate-limit counters live (docs/limits.md "Rate limits"). One interface, two
 * stores: in the process (SQLite, one service process) and in PostgreSQL (DATABASE_URL: every
 * instance shares the counters, `rate-limit-store-pg.ts`). The `@fastify/rate-limit` routes, the
 * operator-token failure limit and the MCP tool calls all count through the same store.
 *
 * A window is fixed and opened by the first request of a key: it lasts `windowMs` from that
 * request, and the next request after it opens a new one (both stores, same rule).
 */

export interface RateCount {
  /** Requests counted in the key's current window, this one included. */
  current: number;
  /** Milliseconds until the window ends. */
  ttl: number;
}

export interface RateLimitStore {
  /** Counts one request of `key` and answers the window's count (opening a window when none is open). */
  incr(key: string, windowMs: number): Promise<RateCount>;
  /** The key's count without counting (0 when no window is open). */
  read(key: string, windowMs: number): Promise<RateCount>;
  /** Gives back one count of the key's open window (an attempt that turned out not to count). */
  refund(key: string, windowMs: number): Promise<void>;
  /** Stops background work (the expired-window sweep). */
  close(): Promise<void>;
}

/** At most this many keys are kept in the process; when full, expired windows go first, then the oldest. */
const MAX_KEYS = 100_000;

/** The counters in the process memory: one service process (the SQLite default). */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly windows = new Map<string, { current: number; start: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  async incr(key: string, windowMs: number): Promise<RateCount> {
    const now = this.now();
    let w = this.windows.get(key);
    if (!w || w.start + windowMs <= now) {
      if (w) this.windows.delete(key);
      if (this.windows.size >= MAX_KEYS) this.evict(now, windowMs);
      w = { current: 0, start: now };
      this.windows.set(key, w);
    }
    w.current += 1;
    return { current: w.current, ttl: w.start + windowMs - now };
  }

  async read(key: string, windowMs: number): Promise<RateCount> {
    const now = this.now();
    const w = this.windows.get(key);
    if (!w || w.start + windowMs <= now) return { current: 0, ttl: 0 };
    return { current: w.current, ttl: w.start + windowMs - now };
  }

  async refund(key: string, windowMs: number): Promise<void> {
    const w = this.windows.get(key);
    if (w && w.current > 0 && w.start + windowMs > this.now()) w.current -= 1;
  }

  async close(): Promise<void> {}

  private evict(now: number, windowMs: number) {
    for (const [k, w] of this.windows) if (w.start + windowMs <= now) this.windows.delete(k);
    // Still full: drop the oldest tenth (Map keeps insertion order, and a new window is re-inserted).
    if (this.windows.size >= MAX_KEYS) {
      let n = Math.ceil(MAX_KEYS / 10);
      for (const k of this.windows.keys()) {
        if (n-- <= 0) break;
        this.windows.delete(k);
      }
    }
  }
}
