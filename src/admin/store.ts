import { matching, paged } from "../db/paginate.js";
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
    query = matching(query, ["actor", "action", "subject", "detail"], q.search);
    return paged<AuditRow>(
      query,
      [
        ["at", "desc"],
        ["id", "asc"],
      ],
      q,
    );
  },
};
