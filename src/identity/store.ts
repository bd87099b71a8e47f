import type { Executor } from "../db/executor.js";
import type { IdentityRow } from "./tables.js";

/** Data access for identities. No rules here, only queries. */
export const identityStore = {
  async insert(db: Executor, row: IdentityRow): Promise<void> {
    await db.insertInto("identities").values(row).execute();
  },

  byId(db: Executor, id: string): Promise<IdentityRow | undefined> {
    return db.selectFrom("identities").selectAll().where("id", "=", id).executeTakeFirst();
  },

  byTokenHash(db: Executor, tokenHash: string): Promise<IdentityRow | undefined> {
    return db.selectFrom("identities").selectAll().where("token_hash", "=", tokenHash).executeTakeFirst();
  },

  /** Replaces the token only if it is still `fromHash`: of two concurrent renewals one wins. */
  async replaceToken(
    db: Executor,
    id: string,
    fromHash: string,
    set: { token_hash: string; expires_at: string; updated_at: string },
  ): Promise<boolean> {
    const r = await db
      .updateTable("identities")
      .set(set)
      .where("id", "=", id)
      .where("token_hash", "=", fromHash)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  },
};
