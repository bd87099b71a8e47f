import type { Executor } from "../orders/store.js";
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

  /** Adds one to an IP's issuance count of a day (insert or increment, atomically) and returns it. */
  async countIssue(db: Executor, ipHash: string, day: string, at: string): Promise<number> {
    const r = await db
      .insertInto("identity_issuance")
      .values({ ip_hash: ipHash, day, count: 1, updated_at: at })
      .onConflict((oc) =>
        oc.columns(["ip_hash", "day"]).doUpdateSet((eb) => ({
          count: eb(eb.ref("identity_issuance.count"), "+", 1),
          updated_at: at,
        })),
      )
      .returning("count")
      .executeTakeFirstOrThrow();
    return Number(r.count);
  },

  /** Deletes issuance counts of days before `day` (YYYY-MM-DD). */
  async pruneIssuance(db: Executor, day: string): Promise<void> {
    await db.deleteFrom("identity_issuance").where("day", "<", day).execute();
  },
};
