import { matching, paged } from "../../db/paginate.js";
import type { Executor } from "../../orders/store.js";
import type { ClaimRow, ClaimState } from "./tables.js";

/** Data access for claims. No rules here, only queries. */
export const claimStore = {
  /** Inserts the claim; false when its transaction reference is already claimed (unique tx_key). */
  async insertIfAbsent(db: Executor, row: ClaimRow): Promise<boolean> {
    const r = await db
      .insertInto("claims")
      .values(row)
      .onConflict((oc) => oc.column("tx_key").doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0n) === 1;
  },

  byId(db: Executor, id: string): Promise<ClaimRow | undefined> {
    return db.selectFrom("claims").selectAll().where("id", "=", id).executeTakeFirst();
  },

  byTxKey(db: Executor, txKey: string): Promise<ClaimRow | undefined> {
    return db.selectFrom("claims").selectAll().where("tx_key", "=", txKey).executeTakeFirst();
  },

  /** An order paid by this on-chain transaction through another rail (x402), read-only. */
  async orderWithTransaction(db: Executor, refs: string[]): Promise<string | undefined> {
    if (refs.length === 0) return undefined;
    const row = await db.selectFrom("orders").select("id").where("transaction_ref", "in", refs).executeTakeFirst();
    return row?.id;
  },

  /** Conditional transition: only from `from`. Returns true when this call changed the row. */
  async transition(
    db: Executor,
    id: string,
    from: ClaimState,
    set: Partial<Pick<ClaimRow, "state" | "order_id" | "decided_by" | "decided_at" | "reason">> & {
      updated_at: string;
    },
  ): Promise<boolean> {
    const r = await db.updateTable("claims").set(set).where("id", "=", id).where("state", "=", from).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  },

  async list(
    db: Executor,
    q: { limit: number; offset: number; state?: string; rail?: string; search?: string },
  ): Promise<{ total: number; items: ClaimRow[] }> {
    let query = db.selectFrom("claims");
    if (q.state) query = query.where("state", "=", q.state as ClaimState);
    if (q.rail) query = query.where("rail", "=", q.rail);
    query = matching(query, ["id", "email", "tx_ref", "company", "sku"], q.search);
    return paged<ClaimRow>(
      query,
      [
        ["created_at", "desc"],
        ["id", "asc"],
      ],
      q,
    );
  },
};
