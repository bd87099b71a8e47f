import type { Executor } from "../../db/executor.js";
import type { OrderRow } from "../../orders/tables.js";
import type { EntryRow, IntentRow, OrderBindingRow } from "../tables.js";

/** The SQL of intents, entries and order bindings (olympiad_intents, olympiad_entries, olympiad_order_bindings). */

export interface EntryWithOrder extends EntryRow {
  order_status: OrderRow["status"];
}

export const entryStore = {
  /** The participant's entry row for a season (whatever its order's status), with the order's status. */
  forParticipant(db: Executor, participantId: string, seasonId: string): Promise<EntryWithOrder | undefined> {
    return db
      .selectFrom("olympiad_entries as e")
      .innerJoin("orders as o", "o.id", "e.order_id")
      .selectAll("e")
      .select("o.status as order_status")
      .where("e.participant_id", "=", participantId)
      .where("e.season_id", "=", seasonId)
      .executeTakeFirst();
  },

  byOrder(db: Executor, orderId: string): Promise<EntryRow | undefined> {
    return db.selectFrom("olympiad_entries").selectAll().where("order_id", "=", orderId).executeTakeFirst();
  },

  /** Inserts unless the order or the (participant, season) pair is taken; true when this call inserted. */
  async insertIfAbsent(db: Executor, row: EntryRow): Promise<boolean> {
    const r = await db
      .insertInto("olympiad_entries")
      .values(row)
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0n) === 1;
  },

  /** A withdrawn entry takes a new order, only if it still holds `fromOrder` (of two racing re-entries one wins). */
  async replaceOrder(
    db: Executor,
    id: string,
    fromOrder: string,
    set: Pick<EntryRow, "order_id" | "proof" | "created_at">,
  ): Promise<boolean> {
    const r = await db
      .updateTable("olympiad_entries")
      .set(set)
      .where("id", "=", id)
      .where("order_id", "=", fromOrder)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  },

  /** Participants whose entry for the season is held by an active order (the entered ones). */
  async enteredIds(db: Executor, seasonId: string): Promise<string[]> {
    const rows = await db
      .selectFrom("olympiad_entries as e")
      .innerJoin("orders as o", "o.id", "e.order_id")
      .select("e.participant_id")
      .where("e.season_id", "=", seasonId)
      .where("o.status", "=", "active")
      .execute();
    return rows.map((r) => r.participant_id);
  },

  async intent(db: Executor, participantId: string, seasonId: string): Promise<IntentRow | undefined> {
    return db
      .selectFrom("olympiad_intents")
      .selectAll()
      .where("participant_id", "=", participantId)
      .where("season_id", "=", seasonId)
      .executeTakeFirst();
  },

  binding(db: Executor, orderId: string): Promise<OrderBindingRow | undefined> {
    return db.selectFrom("olympiad_order_bindings").selectAll().where("order_id", "=", orderId).executeTakeFirst();
  },

  /** Binds an order to a participant unless it is bound already (to anyone); true when this call bound it. */
  async bindIfAbsent(db: Executor, row: OrderBindingRow): Promise<boolean> {
    const r = await db
      .insertInto("olympiad_order_bindings")
      .values(row)
      .onConflict((oc) => oc.column("order_id").doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0n) === 1;
  },

  async insertIntent(db: Executor, row: IntentRow): Promise<boolean> {
    const r = await db
      .insertInto("olympiad_intents")
      .values(row)
      .onConflict((oc) => oc.columns(["participant_id", "season_id"]).doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0n) === 1;
  },
};
