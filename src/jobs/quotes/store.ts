import type { Executor } from "../../db/executor.js";
import { toBigInt } from "../usage.js";

/** Quote queries beyond those of store.ts (insertQuote, quote, quoteTransition). Queries only. */
export const quoteStore = {
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
    return toBigInt(r?.total);
  },
};
