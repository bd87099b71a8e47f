import { dayOf, secondsToNextUtcDay } from "../http/client-ip.js";
import { Problem } from "../http/problem.js";
import type { Executor } from "./executor.js";

/**
 * Per-IP daily budgets of free surfaces (issue #21; docs/limits.md): how many of a thing one
 * client IP (its keyed hash, `clientIpHash`) may create per UTC day. A count is one row per
 * (scope, IP hash, day), incremented by an atomic upsert inside the transaction that creates the
 * thing: a refusal rolls the count back with it, concurrent requests queue on the row, and every
 * instance sharing the database shares the budget. Rows older than two days are deleted when a new
 * day's first row of the scope is made.
 */

export interface IpDailyTables {
  ip_daily_counts: IpDailyCountRow;
}

export interface IpDailyCountRow {
  scope: string;
  ip_hash: string;
  day: string;
  count: number;
  updated_at: string;
}

const KEEP_DAYS = 2;

/** What one scope counts, for its refusal (429 `code` with Retry-After to the next UTC midnight). */
export interface DailyBudget {
  scope: string;
  /** most per IP per UTC day; 0 = no limit (nothing counted) */
  limit: number;
  code: string;
  /** the refusal's sentence, given the limit */
  message: (limit: number) => string;
}

/** Counts one for `ipHash` today in `budget.scope`; past the limit, a 429 problem (roll back). */
export async function countToday(db: Executor, budget: DailyBudget, ipHash: string, at: Date): Promise<void> {
  if (budget.limit <= 0) return;
  const day = dayOf(at);
  const iso = at.toISOString();
  const row = await db
    .insertInto("ip_daily_counts")
    .values({ scope: budget.scope, ip_hash: ipHash, day, count: 1, updated_at: iso })
    .onConflict((oc) =>
      oc.columns(["scope", "ip_hash", "day"]).doUpdateSet((eb) => ({
        count: eb(eb.ref("ip_daily_counts.count"), "+", 1),
        updated_at: iso,
      })),
    )
    .returning("count")
    .executeTakeFirstOrThrow();
  const count = Number(row.count);
  if (count > budget.limit) {
    const retry = secondsToNextUtcDay(at);
    throw new Problem(
      429,
      budget.code,
      budget.message(budget.limit),
      { limit: budget.limit, retry_after: retry },
      { "Retry-After": String(retry) },
    );
  }
  if (count === 1) {
    const keep = dayOf(new Date(at.getTime() - KEEP_DAYS * 86_400_000));
    await db.deleteFrom("ip_daily_counts").where("scope", "=", budget.scope).where("day", "<", keep).execute();
  }
}
