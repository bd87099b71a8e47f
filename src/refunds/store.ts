import type { Kysely, Transaction } from "kysely";
import type { Database } from "../db/schema.js";
import type { RefundChallengeRow, RefundRow, RefundState } from "./tables.js";

type Executor = Kysely<Database> | Transaction<Database>;

/** What an order was paid with, as the ledgers recorded it (read-only queries of their tables). */
export interface PaidWith {
  payer: string | null;
  network: string | null;
  asset: string | null;
  amount_units: string | null;
  tx: string | null;
}

/** Data access for refunds. Queries only; the rules live in service.ts. */
export const refundStore = {
  /** Inserts unless the order already has a refund; true when this call created the row. */
  async insertIfAbsent(db: Executor, row: RefundRow): Promise<boolean> {
    const r = await db
      .insertInto("refunds")
      .values(row)
      .onConflict((oc) => oc.column("order_id").doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0n) === 1;
  },

  get(db: Executor, id: string): Promise<RefundRow | undefined> {
    return db.selectFrom("refunds").selectAll().where("id", "=", id).executeTakeFirst();
  },

  byOrder(db: Executor, orderId: string): Promise<RefundRow | undefined> {
    return db.selectFrom("refunds").selectAll().where("order_id", "=", orderId).executeTakeFirst();
  },

  /**
   * Moves a refund from one of `from` to `to` with `set`; true when this call made the change
   * (the conditional update is what makes two concurrent callers agree on one winner).
   */
  async transition(
    db: Executor,
    id: string,
    from: RefundState[],
    to: RefundState,
    set: Partial<RefundRow>,
    at: string,
  ): Promise<boolean> {
    const r = await db
      .updateTable("refunds")
      .set({ ...set, state: to, updated_at: at })
      .where("id", "=", id)
      .where("state", "in", from)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  },

  /**
   * Stores a signed transaction for a refund that has none (approved → signed). Only the bytes
   * stored here are ever broadcast, so two signers racing can never both pay.
   */
  async storeSigned(
    db: Executor,
    id: string,
    signed: { tx: string; raw_tx: string; evm_nonce: number | null; valid_until: number | null },
    at: string,
  ): Promise<boolean> {
    const r = await db
      .updateTable("refunds")
      .set({ ...signed, state: "signed", updated_at: at })
      .where("id", "=", id)
      .where("state", "=", "approved")
      .where("raw_tx", "is", null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  },

  /**
   * Drops a stored transaction that provably can never land (EVM: its nonce was used by another
   * transaction; Solana: its blockhash expired and it is not on chain), so a new one may be signed.
   */
  async dropSigned(db: Executor, id: string, tx: string, error: string, at: string): Promise<boolean> {
    const r = await db
      .updateTable("refunds")
      .set({ state: "approved", tx: null, raw_tx: null, evm_nonce: null, valid_until: null, error, updated_at: at })
      .where("id", "=", id)
      .where("tx", "=", tx)
      .where("state", "in", ["signed", "sent"])
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  },

  /**
   * A transfer that landed and reverted (the refund wallet lacks USDC or gas, the token is paused):
   * signing again would only burn more fees, so the refund becomes owed, listed for the operator.
   */
  async revertedToOwed(db: Executor, id: string, tx: string, error: string, at: string): Promise<boolean> {
    const r = await db
      .updateTable("refunds")
      .set({ state: "owed", tx: null, raw_tx: null, evm_nonce: null, valid_until: null, error, updated_at: at })
      .where("id", "=", id)
      .where("tx", "=", tx)
      .where("state", "in", ["signed", "sent"])
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  },

  async bumpAttempts(db: Executor, id: string, error: string | null, at: string): Promise<void> {
    await db
      .updateTable("refunds")
      .set((eb) => ({ attempts: eb("attempts", "+", 1), error, updated_at: at }))
      .where("id", "=", id)
      .execute();
  },

  list(db: Executor, q: { state?: RefundState | undefined; limit: number; offset: number }): Promise<RefundRow[]> {
    let query = db.selectFrom("refunds").selectAll();
    if (q.state) query = query.where("state", "=", q.state);
    return query.orderBy("created_at", "desc").orderBy("id").limit(q.limit).offset(q.offset).execute();
  },

  /** Refunds whose money may be moving: approved, signed or sent. */
  unfinished(db: Executor): Promise<RefundRow[]> {
    return db
      .selectFrom("refunds")
      .selectAll()
      .where("state", "in", ["approved", "signed", "sent"])
      .orderBy("created_at")
      .limit(500)
      .execute();
  },

  /** Highest EVM nonce stored for a refund still in flight (so a new one does not reuse it). */
  async highestPendingNonce(db: Executor): Promise<number | undefined> {
    const r = await db
      .selectFrom("refunds")
      .select((eb) => eb.fn.max("evm_nonce").as("n"))
      .where("method", "=", "evm")
      .where("state", "in", ["signed", "sent"])
      .executeTakeFirst();
    return r?.n === null || r?.n === undefined ? undefined : Number(r.n);
  },

  /** The x402 (or MPP) payment of an order: payer, network, asset and atomic amount of its proof. */
  async paidWith(db: Executor, orderId: string): Promise<PaidWith | undefined> {
    const proof = await db
      .selectFrom("payment_proofs")
      .select(["payer", "network", "amount_units", "requirements", "settlement_tx"])
      .where("order_id", "=", orderId)
      .where("state", "=", "granted")
      .executeTakeFirst();
    const ref = await db
      .selectFrom("payment_references")
      .select(["payer", "chain", "tx"])
      .where("order_id", "=", orderId)
      .executeTakeFirst();
    if (!proof && !ref) return undefined;
    let asset: string | null = null;
    try {
      const req = JSON.parse(proof?.requirements ?? "{}") as { asset?: unknown };
      asset = typeof req.asset === "string" ? req.asset : null;
    } catch {
      asset = null;
    }
    return {
      payer: ref?.payer ?? proof?.payer ?? null,
      network: proof?.network ?? null,
      asset,
      amount_units: proof?.amount_units ?? null,
      tx: proof?.settlement_tx ?? ref?.tx ?? null,
    };
  },

  /** Stores a challenge, and deletes those expired for more than a day (they can prove nothing). */
  async insertChallenge(db: Executor, row: RefundChallengeRow): Promise<void> {
    const dayAgo = new Date(Date.parse(row.created_at) - 86_400_000).toISOString();
    await db.deleteFrom("refund_challenges").where("expires_at", "<", dayAgo).execute();
    await db.insertInto("refund_challenges").values(row).execute();
  },

  challenge(db: Executor, nonce: string): Promise<RefundChallengeRow | undefined> {
    return db.selectFrom("refund_challenges").selectAll().where("nonce", "=", nonce).executeTakeFirst();
  },

  async useChallenge(db: Executor, nonce: string, at: string): Promise<boolean> {
    const r = await db
      .updateTable("refund_challenges")
      .set({ used_at: at })
      .where("nonce", "=", nonce)
      .where("used_at", "is", null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  },

  /** Records the first opening of an order's access link (later openings change nothing). */
  async recordOpen(db: Executor, orderId: string, at: string): Promise<void> {
    await db
      .insertInto("access_opens")
      .values({ order_id: orderId, first_opened_at: at })
      .onConflict((oc) => oc.column("order_id").doNothing())
      .execute();
  },

  async firstOpen(db: Executor, orderId: string): Promise<string | undefined> {
    const r = await db
      .selectFrom("access_opens")
      .select("first_opened_at")
      .where("order_id", "=", orderId)
      .executeTakeFirst();
    return r?.first_opened_at;
  },
};
