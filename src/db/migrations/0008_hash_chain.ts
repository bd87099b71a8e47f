import { type Kysely, PostgresAdapter, sql } from "kysely";
import { canonicalJson, entryHash, GENESIS_HASH, type JsonValue } from "../hash-chain.js";

// The shared append-only hash chain (issue #11 item 4): olympiad records and the audit log.
// chain_entries holds every chain's entries (PK chain, seq; append-only by trigger on both
// engines, like audit_log); chain_heads holds one row per chain, the lock every append takes.
// The audit log rows written before this migration are put on chain `audit` in (at, id) order,
// so the whole log verifies. Hash rule: src/db/hash-chain.ts, docs/olympiad-records.md.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("chain_entries")
    .addColumn("chain", "text", (c) => c.notNull())
    .addColumn("seq", "integer", (c) => c.notNull().check(sql`seq >= 1`))
    .addColumn("at", "text", (c) => c.notNull())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("body", "text", (c) => c.notNull())
    .addColumn("prev_hash", "text", (c) => c.notNull())
    .addColumn("hash", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("chain_entries_pk", ["chain", "seq"])
    .execute();

  await db.schema
    .createTable("chain_heads")
    .addColumn("chain", "text", (c) => c.primaryKey())
    .addColumn("seq", "integer", (c) => c.notNull())
    .addColumn("hash", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();

  // Backfill: the audit log so far, oldest first.
  type Audit = { id: string; at: string; actor: string; action: string; subject: string; detail: string };
  const rows = await sql<Audit>`select id, at, actor, action, subject, detail from audit_log order by at, id`.execute(
    db,
  );
  let prev = GENESIS_HASH;
  let seq = 0;
  let at = new Date().toISOString();
  for (const row of rows.rows) {
    seq += 1;
    const body = auditBody(row);
    const entry = { chain: "audit", seq, at: row.at, kind: "audit", body, prev_hash: prev };
    const hash = entryHash(entry);
    await sql`insert into chain_entries (chain, seq, at, kind, body, prev_hash, hash)
values ('audit', ${seq}, ${row.at}, 'audit', ${canonicalJson(body)}, ${prev}, ${hash})`.execute(db);
    prev = hash;
    at = row.at;
  }
  if (seq > 0) {
    await sql`insert into chain_heads (chain, seq, hash, updated_at) values ('audit', ${seq}, ${prev}, ${at})`.execute(
      db,
    );
  }

  // Entries are never updated or deleted: the database itself refuses.
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`create function chain_entries_append_only() returns trigger language plpgsql as $$
begin raise exception 'chain_entries is append-only'; end $$`.execute(db);
    await sql`create trigger chain_entries_append_only before update or delete on chain_entries
for each row execute function chain_entries_append_only()`.execute(db);
  } else {
    await sql`create trigger chain_entries_no_update before update on chain_entries
begin select raise(abort, 'chain_entries is append-only'); end`.execute(db);
    await sql`create trigger chain_entries_no_delete before delete on chain_entries
begin select raise(abort, 'chain_entries is append-only'); end`.execute(db);
  }
}

/** The body of an audit entry on the chain (the same shape OrderService.audit appends). */
function auditBody(row: { id: string; actor: string; action: string; subject: string; detail: string }): JsonValue {
  let detail: JsonValue;
  try {
    detail = JSON.parse(row.detail) as JsonValue;
  } catch {
    detail = { value: row.detail };
  }
  return { id: row.id, actor: row.actor, action: row.action, subject: row.subject, detail };
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`drop trigger if exists chain_entries_append_only on chain_entries`.execute(db);
    await sql`drop function if exists chain_entries_append_only()`.execute(db);
  } else {
    await sql`drop trigger if exists chain_entries_no_update`.execute(db);
    await sql`drop trigger if exists chain_entries_no_delete`.execute(db);
  }
  await db.schema.dropTable("chain_heads").execute();
  await db.schema.dropTable("chain_entries").execute();
}
