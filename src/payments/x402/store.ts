import { randomUUID } from "node:crypto";
import type { Executor } from "../../db/executor.js";
import { paged } from "../../db/paginate.js";
import type { PaymentProofRow, ProofState, SettlementAttemptRow } from "./tables.js";

/** Data access for the x402 proof ledger. Queries only; the rules live in service.ts. */
export const proofStore = {
  /** Reserves a proof key; true when this call created the row (the winner proceeds). */
  async reserve(db: Executor, row: PaymentProofRow): Promise<boolean> {
    const result = await db
      .insertInto("payment_proofs")
      .values(row)
      .onConflict((oc) => oc.column("proof_key").doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
  },

  get(db: Executor, proofKey: string): Promise<PaymentProofRow | undefined> {
    return db.selectFrom("payment_proofs").selectAll().where("proof_key", "=", proofKey).executeTakeFirst();
  },

  /** A transaction-hash proof already recorded for this hash (any log index). */
  byTxHashProof(db: Executor, hash: string): Promise<PaymentProofRow | undefined> {
    return db
      .selectFrom("payment_proofs")
      .selectAll()
      .where("kind", "=", "evm_tx")
      .where("expected_tx", "=", hash)
      .executeTakeFirst();
  },

  byBuyerKey(db: Executor, hash: string): Promise<PaymentProofRow | undefined> {
    return db.selectFrom("payment_proofs").selectAll().where("buyer_key_hash", "=", hash).executeTakeFirst();
  },

  /** One of our own settlements (EIP-3009, Solana): its transaction, pending or done. */
  ownSettlement(db: Executor, tx: string): Promise<PaymentProofRow | undefined> {
    const t = tx.toLowerCase();
    return db
      .selectFrom("payment_proofs")
      .selectAll()
      .where("kind", "!=", "evm_tx")
      .where((eb) => eb.or([eb("settlement_tx", "=", t), eb("expected_tx", "=", t)]))
      .executeTakeFirst();
  },

  /** Whether a settlement of this proof ever reached the chain (a transaction was sent or seen). */
  async everBroadcast(db: Executor, proofKey: string): Promise<boolean> {
    const row = await db
      .selectFrom("settlement_attempts")
      .select("id")
      .where("proof_key", "=", proofKey)
      .where("transaction", "is not", null)
      .executeTakeFirst();
    return row !== undefined;
  },

  bySettlementTx(db: Executor, tx: string): Promise<PaymentProofRow | undefined> {
    return db.selectFrom("payment_proofs").selectAll().where("settlement_tx", "=", tx).executeTakeFirst();
  },

  /** Conditional state change: only from one of `from`; returns whether this call won. */
  async transition(
    db: Executor,
    proofKey: string,
    from: ProofState[],
    to: ProofState,
    set: Partial<Omit<PaymentProofRow, "proof_key" | "state">> = {},
  ): Promise<boolean> {
    const result = await db
      .updateTable("payment_proofs")
      .set({ ...set, state: to, updated_at: set.updated_at ?? new Date().toISOString() })
      .where("proof_key", "=", proofKey)
      .where("state", "in", from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  },

  async bumpAttempts(db: Executor, proofKey: string): Promise<void> {
    await db
      .updateTable("payment_proofs")
      .set((eb) => ({ attempts: eb("attempts", "+", 1) }))
      .where("proof_key", "=", proofKey)
      .execute();
  },

  /** Rows a reconciler must look at: anything between reservation and a final state. */
  /** pending_unknown rows at any age; reserved/settling/settled ones only when idle since `olderThanIso`. */
  unfinished(db: Executor, olderThanIso: string): Promise<PaymentProofRow[]> {
    return db
      .selectFrom("payment_proofs")
      .selectAll()
      .where((eb) =>
        eb.or([
          eb("state", "=", "pending_unknown"),
          eb.and([eb("state", "in", ["reserved", "settling", "settled"]), eb("updated_at", "<=", olderThanIso)]),
        ]),
      )
      .orderBy("created_at")
      .limit(200)
      .execute();
  },

  async list(
    db: Executor,
    q: { state?: ProofState; limit: number; offset: number },
  ): Promise<{ total: number; items: PaymentProofRow[] }> {
    let query = db.selectFrom("payment_proofs");
    if (q.state) query = query.where("state", "=", q.state);
    return paged<PaymentProofRow>(
      query,
      [
        ["created_at", "desc"],
        ["proof_key", "asc"],
      ],
      q,
    );
  },

  async recordAttempt(db: Executor, attempt: Omit<SettlementAttemptRow, "id" | "at">): Promise<void> {
    await db
      .insertInto("settlement_attempts")
      .values({ id: randomUUID(), at: new Date().toISOString(), ...attempt })
      .execute();
  },

  attempts(db: Executor, proofKey: string): Promise<SettlementAttemptRow[]> {
    return db.selectFrom("settlement_attempts").selectAll().where("proof_key", "=", proofKey).orderBy("at").execute();
  },
};
