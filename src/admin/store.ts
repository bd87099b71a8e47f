import type { Executor } from "../orders/store.js";
import type { AuditRow } from "../orders/tables.js";

/** Read-only queries of the append-only audit log. */
export const auditStore = {
  async list(
    db: Executor,
    q: { limit: number; offset: number; actor?: string; action?: string; subject?: string; search?: string },
  ): Promise<{ total: number; items: AuditRow[] }> {
    let query = db.selectFrom("audit_log");
    if (q.actor) query = query.where("actor", "=", q.actor);
    if (q.action) query = query.where("action", "=", q.action);
    if (q.subject) query = query.where("subject", "=", q.subject);
    if (q.search) {
      const like = `%${q.search.toLowerCase()}%`;
      query = query.where((eb) =>
        eb.or([
          eb(eb.fn("lower", ["actor"]), "like", like),
          eb(eb.fn("lower", ["action"]), "like", like),
          eb(eb.fn("lower", ["subject"]), "like", like),
          eb(eb.fn("lower", ["detail"]), "like", like),
        ]),
      );
    }
    const total = await query.select((eb) => eb.fn.countAll<number | string>().as("n")).executeTakeFirstOrThrow();
    const items = await query.selectAll().orderBy("at", "desc").orderBy("id").limit(q.limit).offset(q.offset).execute();
    return { total: Number(total.n), items };
  },
};
