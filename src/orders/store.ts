import type { Executor } from "../db/executor.js";
import { matching, paged } from "../db/paginate.js";
import type { OrderRow, PaymentReferenceRow } from "./tables.js";

/** Data access for orders and the audit log. No rules here, only queries. */
export const orderStore = {
  /** Inserts unless the proof key exists; returns true when this call created the row. */
  async insertIfAbsent(db: Executor, row: OrderRow): Promise<boolean> {
    const result = await db
      .insertInto("orders")
      .values(row)
      .onConflict((oc) => oc.column("proof_key").doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
  },

  byProofKey(db: Executor, proofKey: string): Promise<OrderRow | undefined> {
    return db.selectFrom("orders").selectAll().where("proof_key", "=", proofKey).executeTakeFirst();
  },

  byId(db: Executor, id: string): Promise<OrderRow | undefined> {
    return db.selectFrom("orders").selectAll().where("id", "=", id).executeTakeFirst();
  },

  byTokenHash(db: Executor, hash: string): Promise<OrderRow | undefined> {
    return db.selectFrom("orders").selectAll().where("access_token_hash", "=", hash).executeTakeFirst();
  },

  byLicenseKey(db: Executor, key: string): Promise<OrderRow | undefined> {
    return db.selectFrom("orders").selectAll().where("license_key", "=", key).executeTakeFirst();
  },

  /** Inserts the reference unless it exists; returns the row now stored (ours or the earlier holder's). */
  async claimReference(db: Executor, row: PaymentReferenceRow): Promise<PaymentReferenceRow> {
    await db
      .insertInto("payment_references")
      .values(row)
      .onConflict((oc) => oc.column("ref").doNothing())
      .execute();
    return db.selectFrom("payment_references").selectAll().where("ref", "=", row.ref).executeTakeFirstOrThrow();
  },

  reference(db: Executor, ref: string): Promise<PaymentReferenceRow | undefined> {
    return db.selectFrom("payment_references").selectAll().where("ref", "=", ref).executeTakeFirst();
  },

  /** Binds a held reference to what its payment bought (an order, or a job). */
  async bindReference(
    db: Executor,
    ref: string,
    holder: string,
    column: "order_id" | "job_id",
    id: string,
    at: string,
  ): Promise<void> {
    await db
      .updateTable("payment_references")
      .set(column === "order_id" ? { order_id: id, granted_at: at } : { job_id: id, granted_at: at })
      .where("ref", "=", ref)
      .where("holder", "=", holder)
      .execute();
  },

  /** Releases a reference still held without an order (its settlement failed). */
  async releaseReference(db: Executor, ref: string, holder: string): Promise<void> {
    await db
      .deleteFrom("payment_references")
      .where("ref", "=", ref)
      .where("holder", "=", holder)
      .where("order_id", "is", null)
      .where("job_id", "is", null)
      .execute();
  },

  /** Orders paid on chain by one wallet (recovery by wallet signature). */
  ordersPaidBy(db: Executor, chain: string, payer: string): Promise<OrderRow[]> {
    return db
      .selectFrom("orders")
      .innerJoin("payment_references", "payment_references.order_id", "orders.id")
      .selectAll("orders")
      .where("payment_references.chain", "=", chain as PaymentReferenceRow["chain"])
      .where("payment_references.payer", "=", payer)
      .orderBy("orders.created_at", "desc")
      .limit(200)
      .execute();
  },

  /** Conditional status change: only from `from`, so concurrent operators cannot both win. */
  async setStatus(
    db: Executor,
    id: string,
    from: OrderRow["status"][],
    to: OrderRow["status"],
    reason: string,
    at: string,
  ): Promise<boolean> {
    const result = await db
      .updateTable("orders")
      .set({ status: to, updated_at: at, revoked_at: at, revoke_reason: reason })
      .where("id", "=", id)
      .where("status", "in", from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  },

  async list(
    db: Executor,
    q: { limit: number; offset: number; sku?: string; status?: string; rail?: string; search?: string },
  ): Promise<{ total: number; items: OrderRow[] }> {
    let query = db.selectFrom("orders");
    if (q.sku) query = query.where("sku", "=", q.sku);
    if (q.status) query = query.where("status", "=", q.status as OrderRow["status"]);
    if (q.rail) query = query.where("rail", "=", q.rail);
    query = matching(query, ["email", "id", "agent_id", "transaction_ref"], q.search);
    return paged<OrderRow>(
      query,
      [
        ["created_at", "desc"],
        ["id", "asc"],
      ],
      q,
    );
  },
};
