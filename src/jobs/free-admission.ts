import { PostgresAdapter, sql } from "kysely";
import type { Executor } from "../db/executor.js";
import { Problem } from "../http/problem.js";
import { BYTES_PER_GB } from "./pricing.js";
import { jobStore } from "./store.js";
import { INPUT_STATES, type QuoteRow } from "./tables.js";
import { toBigInt } from "./usage.js";

/**
 * Admission of free suite jobs (issue #21 item 3, docs/suite.md "Who gets free work"). Checked in
 * the transaction that creates a free job, after `lockFreeAdmission`:
 *
 * - one caller (its join-work identity, else its client IP) has at most `runningPerCaller`
 *   running and `queuedPerCaller` queued free jobs: more → 429 `free_jobs_limit` + Retry-After;
 * - the free bytes queued by all callers stay under `queueBytes`: more → 503 `free_tier_busy` +
 *   Retry-After (a job larger than the cap is admitted only into an empty free queue, so a
 *   100 GB identity job can still run).
 *
 * Which states count. Queued: `queued` (input complete, waiting for a worker) and the input states
 * `awaiting_input` and `uploading`: a free job waiting for its upload already holds a job token and
 * its caller's free bytes and can be fed at any moment, so a caller who could park any number of
 * jobs there would start them all at once and the cap would hold nothing. An input-state job whose
 * last change is older than `ABANDONED_INPUT_MS` (24 h, when abandoned uploads expire) no longer
 * counts, so a forgotten job cannot block its caller, or the free queue, for good. Running:
 * `running`. Paid jobs never count, and are never refused here.
 */

export interface FreeLimits {
  runningPerCaller: number;
  queuedPerCaller: number;
  /** queued free bytes of all callers */
  queueBytes: bigint | number;
}

export const DEFAULT_FREE_LIMITS: FreeLimits = {
  runningPerCaller: 1,
  queuedPerCaller: 3,
  queueBytes: 20n * BYTES_PER_GB,
};

/** An input-state job untouched this long is abandoned: it no longer counts as queued. */
export const ABANDONED_INPUT_MS = 24 * 3_600_000;
/** Retry-After of both refusals: a free slot opens when a job moves on, which is not predictable. */
export const FREE_RETRY_AFTER_SECONDS = 60;

/** Who a quote's job counts against: `idn:<identity id>`, else `ip:<client IP hash>`, else null. */
export function callerOfQuote(
  quote: Pick<QuoteRow, "identity_id"> & { client_ip_hash?: string | null },
): string | null {
  if (quote.identity_id) return `idn:${quote.identity_id}`;
  if (quote.client_ip_hash) return `ip:${quote.client_ip_hash}`;
  return null;
}

/** The advisory lock of free admission (one key for the whole service: `hashtext('labphi:free-admission')`). */
const LOCK_SQL = sql`select pg_advisory_xact_lock(hashtext('labphi:free-admission'))`;

/**
 * Serializes the free-budget checks and the job insert across transactions and instances: on
 * PostgreSQL a transaction-scoped advisory lock (released at commit or rollback); SQLite runs one
 * write transaction at a time already. One lock for all callers, so the global queue cap is exact
 * too; what it covers is a few indexed reads and one insert.
 */
export async function lockFreeAdmission(trx: Executor): Promise<void> {
  if (trx.getExecutor().adapter instanceof PostgresAdapter) await LOCK_SQL.execute(trx);
}

export class FreeAdmission {
  constructor(
    private readonly limits: FreeLimits = DEFAULT_FREE_LIMITS,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Refuses a new free job of `bytes` for `caller` past the limits (see the module comment). */
  async admit(db: Executor, caller: string | null, bytes: bigint): Promise<void> {
    const cutoff = new Date(this.now().getTime() - ABANDONED_INPUT_MS).toISOString();
    if (caller !== null) {
      const rows = await jobStore.freeJobsByState(db, caller, INPUT_STATES, cutoff);
      let running = 0;
      let queued = 0;
      for (const r of rows) {
        if (r.state === "running") running += Number(r.n);
        else queued += Number(r.n);
      }
      const { runningPerCaller: maxRunning, queuedPerCaller: maxQueued } = this.limits;
      if (queued >= maxQueued || running + queued >= maxRunning + maxQueued) {
        throw new Problem(
          429,
          "free_jobs_limit",
          `This caller already has ${queued} queued and ${running} running free jobs (at most ${maxQueued} queued and ${maxRunning} running, counted per join-work identity, else per IP); upload or finish one first, or pay for this job.`,
          {
            caller_kind: caller.startsWith("idn:") ? "identity" : "ip",
            queued,
            running,
            max_queued: maxQueued,
            max_running: maxRunning,
            retry_after: FREE_RETRY_AFTER_SECONDS,
          },
          { "Retry-After": String(FREE_RETRY_AFTER_SECONDS) },
        );
      }
    }
    const held = toBigInt(await jobStore.freeBytesWaiting(db, INPUT_STATES, cutoff));
    const cap = BigInt(this.limits.queueBytes);
    if (held > 0n && held + bytes > cap) {
      throw new Problem(
        503,
        "free_tier_busy",
        `The free queue holds ${held} bytes of free jobs (at most ${cap}); try again later, or pay for this job (paid jobs are not limited by it).`,
        {
          queued_free_bytes: Number(held),
          limit_bytes: Number(cap),
          bytes: Number(bytes),
          retry_after: FREE_RETRY_AFTER_SECONDS,
        },
        { "Retry-After": String(FREE_RETRY_AFTER_SECONDS) },
      );
    }
  }
}
