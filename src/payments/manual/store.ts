import type { Executor } from "../../db/executor.js";
import { matching, paged } from "../../db/paginate.js";
import type { ClaimRow, ClaimState } from "./tables.js";

/** Data access for claims. No rules here, only queries. */
export const claimStore = {
  /** Inserts a claim. Several claims may name one transfer: the operator approves the payer's. */
  async insert(db: Executor, row: ClaimRow): Promise<void> {
    await db.insertInto("claims").values(row).execute();
  },

  /** Closes the other open claims of a transfer once one of them is approved. */
  async closeSiblings(db: Executor, txKey: string, approvedId: string, reason: string, at: string): Promise<string[]> {
    const open = await db
      .selectFrom("claims")
      .select("id")
      .where("tx_key", "=", txKey)
      .where("id", "!=", approvedId)
      .where("state", "=", "submitted")
      .execute();
    if (open.length === 0) return [];
    await db
      .updateTable("claims")
      .set({ state: "closed", reason, decided_at: at, decided_by: "system", updated_at: at })
      .where("tx_key", "=", txKey)
      .where("id", "!=", approvedId)
      .where("state", "=", "submitted")
      .execute();
    return open.map((r) => r.id);
  },

  byId(db: Executor, id: string): Promise<ClaimRow | undefined> {
    return db.selectFrom("claims").selectAll().where("id", "=", id).executeTakeFirst();
  },

  byTxKey(db: Executor, txKey: string): Promise<ClaimRow[]> {
    return db.selectFrom("claims").selectAll().where("tx_key", "=", txKey).orderBy("created_at").execute();
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
