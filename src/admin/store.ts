import type { Executor } from "../db/executor.js";
import {
  AUDIT_CHAIN,
  auditEntryBody,
  type ChainHead,
  canonicalJson,
  head,
  listAll,
  verifyChain,
} from "../db/hash-chain.js";
import { matching, paged } from "../db/paginate.js";
import type { AuditRow } from "../orders/tables.js";

export interface AuditChainReport {
  /** the chain verifies and every audit_log row is on it, unchanged, exactly once */
  ok: boolean;
  /** entries on chain `audit` */
  entries: number;
  /** rows in audit_log */
  rows: number;
  head: { seq: number; hash: string };
  /** the first broken entry of the chain, when it does not verify */
  broken: { seq: number; reason: string } | null;
  /** audit_log rows that differ from their chain entry, or have none, or more than one (first 20) */
  mismatches: { id: string; seq: number | null; reason: string }[];
}

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

  /**
   * Verifies the audit log against hash chain `audit`: the chain links and hashes, and each
   * audit_log row matches exactly one entry (same id, time, actor, action, subject, detail).
   */
  async verifyChain(db: Executor): Promise<AuditChainReport> {
    const entries = await listAll(db, AUDIT_CHAIN);
    const rows = await db.selectFrom("audit_log").selectAll().execute();
    const verdict = verifyChain(entries, { chain: AUDIT_CHAIN });
    const stored: ChainHead = await head(db, AUDIT_CHAIN);
    const mismatches: AuditChainReport["mismatches"] = [];
    const byId = new Map<string, { seq: number; at: string; body: string }[]>();
    for (const e of entries) {
      const id = typeof e.body === "object" && e.body !== null && !Array.isArray(e.body) ? e.body.id : undefined;
      if (typeof id !== "string") {
        mismatches.push({ id: "", seq: e.seq, reason: "chain entry without an audit id" });
        continue;
      }
      const list = byId.get(id) ?? [];
      list.push({ seq: e.seq, at: e.at, body: canonicalJson(e.body) });
      byId.set(id, list);
    }
    for (const row of rows) {
      const found = byId.get(row.id) ?? [];
      byId.delete(row.id);
      const first = found[0];
      if (!first) mismatches.push({ id: row.id, seq: null, reason: "audit row missing from the chain" });
      else if (found.length > 1)
        mismatches.push({ id: row.id, seq: first.seq, reason: "audit row on the chain twice" });
      else if (first.at !== row.at || first.body !== canonicalJson(auditEntryBody(row))) {
        mismatches.push({ id: row.id, seq: first.seq, reason: "audit row differs from its chain entry" });
      }
    }
    for (const [id, found] of byId) {
      for (const f of found) mismatches.push({ id, seq: f.seq, reason: "chain entry without an audit row" });
    }
    const headOk = verdict.ok && verdict.head.seq === stored.seq && verdict.head.hash === stored.hash;
    return {
      ok: verdict.ok && headOk && mismatches.length === 0,
      entries: entries.length,
      rows: rows.length,
      head: { seq: stored.seq, hash: stored.hash },
      broken: verdict.ok ? null : { seq: verdict.seq, reason: verdict.reason },
      mismatches: mismatches.slice(0, 20),
    };
  },
};
