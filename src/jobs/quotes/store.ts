import type { Executor } from "../../db/executor.js";
import { toBigInt } from "../usage.js";

/** Quote queries beyond those of store.ts (insertQuote, quote, quoteTransition). Queries only. */
export const quoteStore = {
  /** Sets an open quote's callback URL (POST /api/ppp-checkout with one): true when the quote was still open. */
  async setCallback(db: Executor, id: string, url: string): Promise<boolean> {
    const r = await db
      .updateTable("quotes")
      .set({ callback_url: url })
      .where("id", "=", id)
      .where("state", "=", "open")
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  },

  /**
   * Free bytes promised by an identity's quotes created in [start, end) that bought a job (state
   * paid or used) whose usage is not in the ledger yet: the free cap they hold until the runner
   * records the job's input. `excludeQuoteId` leaves one quote out (when re-checking that quote).
   */
  async reservedFreeBytes(
    db: Executor,
    identityId: string,
    start: string,
    end: string,
    excludeQuoteId?: string,
  ): Promise<bigint> {
    let q = db
      .selectFrom("quotes")
      .select((eb) => eb.fn.sum<string | number | bigint | null>("free_bytes").as("total"))
      .where("identity_id", "=", identityId)
      .where("state", "in", ["paid", "used"])
      .where("created_at", ">=", start)
      .where("created_at", "<", end)
      .where("free_bytes", ">", 0)
      .where("id", "not in", (eb) =>
        eb
          .selectFrom("usage_events")
          .select("quote_id")
          .where("identity_id", "=", identityId)
          .where("quote_id", "is not", null)
          .$narrowType<{ quote_id: string }>(),
      );
    if (excludeQuoteId !== undefined) q = q.where("id", "!=", excludeQuoteId);
    const r = await q.executeTakeFirst();
    return toBigInt(r?.total);
  },

  /**
   * Free bytes of an anonymous client IP's quotes created in [start, end) that bought a job (state
   * paid or used): what the IP's daily allowance has given (the promised bytes, not the uploaded
   * ones: an anonymous job's free part is spent when it is bought). `excludeQuoteId`: as above.
   */
  async anonFreeBytes(
    db: Executor,
    ipHash: string,
    start: string,
    end: string,
    excludeQuoteId?: string,
  ): Promise<bigint> {
    let q = db
      .selectFrom("quotes")
      .select((eb) => eb.fn.sum<string | number | bigint | null>("free_bytes").as("total"))
      .where("client_ip_hash", "=", ipHash)
      .where("identity_id", "is", null)
      .where("state", "in", ["paid", "used"])
      .where("created_at", ">=", start)
      .where("created_at", "<", end)
      .where("free_bytes", ">", 0);
    if (excludeQuoteId !== undefined) q = q.where("id", "!=", excludeQuoteId);
    const r = await q.executeTakeFirst();
    // a cancelled job gives back the free bytes it did not code (src/jobs/manage.ts `returnUnused`):
    // its ledger events sum to the bytes it coded
    let back = db
      .selectFrom("quotes as q")
      .innerJoin("usage_events as u", "u.quote_id", "q.id")
      .select((eb) => ["q.free_bytes", eb.fn.sum<string | number | bigint | null>("u.value_bytes").as("coded")])
      .where("q.client_ip_hash", "=", ipHash)
      .where("q.identity_id", "is", null)
      .where("q.state", "in", ["paid", "used"])
      .where("q.created_at", ">=", start)
      .where("q.created_at", "<", end)
      .where("q.free_bytes", ">", 0)
      .where("q.id", "in", (eb) =>
        eb
          .selectFrom("usage_events")
          .select("quote_id")
          .where("id", "like", "suite:%:cancel")
          .where("quote_id", "is not", null)
          .$narrowType<{ quote_id: string }>(),
      )
      .groupBy(["q.id", "q.free_bytes"]);
    if (excludeQuoteId !== undefined) back = back.where("q.id", "!=", excludeQuoteId);
    let returned = 0n;
    for (const row of await back.execute()) {
      const free = toBigInt(row.free_bytes);
      const coded = toBigInt(row.coded);
      const used = coded > 0n ? coded : 0n;
      if (free > used) returned += free - used;
    }
    return toBigInt(r?.total) - returned;
  },
};
