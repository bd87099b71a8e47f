import type { Executor } from "../../db/executor.js";
import { matching, paged } from "../../db/paginate.js";
import type { CardRefundRow, CardSessionRow, CardSessionStatus, WebhookEventRow } from "./tables.js";

/** Data access for card sessions, refunds and webhook events. No rules here, only queries. */
export const cardStore = {
  async insertSessionIfAbsent(db: Executor, row: CardSessionRow): Promise<boolean> {
    const r = await db
      .insertInto("card_sessions")
      .values(row)
      .onConflict((oc) => oc.column("id").doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0n) === 1;
  },

  session(db: Executor, id: string): Promise<CardSessionRow | undefined> {
    return db.selectFrom("card_sessions").selectAll().where("id", "=", id).executeTakeFirst();
  },

  /** The newest still-open session created for the same request key (retried POST /api/checkout). */
  openSessionByRequestKey(db: Executor, key: string): Promise<CardSessionRow | undefined> {
    return db
      .selectFrom("card_sessions")
      .selectAll()
      .where("request_key", "=", key)
      .where("status", "=", "open")
      .orderBy("created_at", "desc")
      .executeTakeFirst();
  },

  sessionsByPaymentIntent(db: Executor, pi: string): Promise<CardSessionRow[]> {
    return db.selectFrom("card_sessions").selectAll().where("payment_intent_id", "=", pi).execute();
  },

  /** Conditional transition: only from one of `from`. Returns true when this call changed the row. */
  async transition(
    db: Executor,
    id: string,
    from: CardSessionStatus[],
    set: Partial<Pick<CardSessionRow, "status" | "order_id" | "payment_intent_id" | "note" | "email" | "job_id">> & {
      updated_at: string;
    },
  ): Promise<boolean> {
    const r = await db
      .updateTable("card_sessions")
      .set(set)
      .where("id", "=", id)
      .where("status", "in", from)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  },

  async markRefunded(db: Executor, id: string, at: string): Promise<void> {
    await db
      .updateTable("card_sessions")
      .set({ refunded_at: at, updated_at: at })
      .where("id", "=", id)
      .where("refunded_at", "is", null)
      .execute();
  },

  async recordRefund(db: Executor, row: CardRefundRow): Promise<void> {
    await db
      .insertInto("card_refunds")
      .values(row)
      .onConflict((oc) =>
        oc.column("payment_intent_id").doUpdateSet({
          amount_refunded_cents: row.amount_refunded_cents,
          full: row.full,
          charge_id: row.charge_id,
        }),
      )
      .execute();
  },

  refund(db: Executor, pi: string): Promise<CardRefundRow | undefined> {
    return db.selectFrom("card_refunds").selectAll().where("payment_intent_id", "=", pi).executeTakeFirst();
  },

  /** Dedupe gate: inserts the event unless its id exists. Returns the stored row and whether it is new. */
  async recordEvent(db: Executor, row: WebhookEventRow): Promise<{ row: WebhookEventRow; fresh: boolean }> {
    const r = await db
      .insertInto("webhook_events")
      .values(row)
      .onConflict((oc) => oc.column("id").doNothing())
      .executeTakeFirst();
    const fresh = Number(r.numInsertedOrUpdatedRows ?? 0n) === 1;
    if (fresh) return { row, fresh };
    const existing = await db
      .selectFrom("webhook_events")
      .selectAll()
      .where("id", "=", row.id)
      .executeTakeFirstOrThrow();
    if (existing.processed_at === null) {
      await db
        .updateTable("webhook_events")
        .set((eb) => ({ attempts: eb("attempts", "+", 1) }))
        .where("id", "=", row.id)
        .execute();
    }
    return { row: existing, fresh: false };
  },

  async finishEvent(db: Executor, id: string, outcome: string, at: string): Promise<void> {
    await db
      .updateTable("webhook_events")
      .set({ processed_at: at, outcome })
      .where("id", "=", id)
      .where("processed_at", "is", null)
      .execute();
  },

  async noteEventError(db: Executor, id: string, outcome: string): Promise<void> {
    await db
      .updateTable("webhook_events")
      .set({ outcome })
      .where("id", "=", id)
      .where("processed_at", "is", null)
      .execute();
  },

  async listEvents(
    db: Executor,
    q: { limit: number; offset: number; type?: string; search?: string; unprocessed?: boolean },
  ): Promise<{ total: number; items: WebhookEventRow[] }> {
    let query = db.selectFrom("webhook_events");
    if (q.type) query = query.where("type", "=", q.type);
    if (q.unprocessed) query = query.where("processed_at", "is", null);
    query = matching(query, ["id", "object_id", "outcome"], q.search);
    return paged<WebhookEventRow>(
      query,
      [
        ["received_at", "desc"],
        ["id", "asc"],
      ],
      q,
    );
  },
};
