import { createHash } from "node:crypto";
import { type Kysely, PostgresAdapter, type Transaction } from "kysely";
import type { ChainEntryRow } from "./hash-chain-tables.js";
import type { Database } from "./schema.js";

/**
 * The shared append-only hash chain (docs/olympiad-records.md "The chain"): olympiad records and
 * the operator audit log. Each chain (`olympiad`, `audit`, …) is a gapless sequence 1, 2, 3, … of
 * entries; each entry holds the previous entry's hash, so changing, removing or reordering any
 * entry breaks every later link.
 *
 *   hash = hex(SHA-256(UTF-8(canonicalJson({ at, body, chain, kind, prev_hash, seq }))))
 *
 * with `body` the entry's JSON value and `prev_hash` 64 zeros for seq 1. The pure half of this
 * file (canonicalJson, entryHash, verifyChain) imports nothing but node:crypto: the standings
 * verifier and the CLI use it on published documents alone.
 */

/** prev_hash of a chain's first entry. */
export const GENESIS_HASH = "0".repeat(64);

/** Chain names and entry kinds: short lowercase words (they are part of every hash). */
export const CHAIN_NAME = /^[a-z][a-z0-9_.-]{0,63}$/;

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** One entry as stored and published (body parsed). */
export interface ChainEntry {
  chain: string;
  seq: number;
  at: string;
  kind: string;
  body: JsonValue;
  prev_hash: string;
  hash: string;
}

export interface ChainHead {
  chain: string;
  /** 0 for an empty chain */
  seq: number;
  /** GENESIS_HASH for an empty chain */
  hash: string;
}

// ---------------------------------------------------------------------------------------------
// Pure: canonical JSON, the entry hash, chain verification.

/**
 * Canonical JSON: object keys sorted by UTF-16 code units (plain `<` on JS strings), no
 * whitespace, strings and numbers written as JSON.stringify writes them. Keys whose value is
 * `undefined` are left out (as JSON.stringify does); `toJSON` is honoured. Refused (TypeError):
 * NaN, ±Infinity, bigint, functions, symbols and `undefined` in arrays, so a value either has one
 * canonical form or none. For an object that came from JSON.parse of canonical JSON,
 * canonicalJson(JSON.parse(text)) === text.
 */
export function canonicalJson(value: unknown): string {
  return write(value, "$");
}

function write(value: unknown, path: string): string {
  if (value === null) return "null";
  if (typeof value === "object" && typeof (value as { toJSON?: unknown }).toJSON === "function") {
    return write((value as { toJSON(): unknown }).toJSON(), path);
  }
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "string":
      return JSON.stringify(value);
    case "number":
      if (!Number.isFinite(value)) throw new TypeError(`canonicalJson: ${path} is not a finite number`);
      return JSON.stringify(value);
    case "object": {
      if (Array.isArray(value)) {
        return `[${value
          .map((v, i) => {
            if (v === undefined) throw new TypeError(`canonicalJson: ${path}[${i}] is undefined`);
            return write(v, `${path}[${i}]`);
          })
          .join(",")}]`;
      }
      const obj = value as Record<string, unknown>;
      const keys = Object.keys(obj)
        .filter((k) => obj[k] !== undefined)
        .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      return `{${keys.map((k) => `${JSON.stringify(k)}:${write(obj[k], `${path}.${k}`)}`).join(",")}}`;
    }
    default:
      throw new TypeError(`canonicalJson: ${path} is a ${typeof value}, not JSON`);
  }
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** The exact bytes that are hashed (UTF-8 of this string): see the file comment. */
export function entryPreimage(e: Omit<ChainEntry, "hash">): string {
  return canonicalJson({ at: e.at, body: e.body, chain: e.chain, kind: e.kind, prev_hash: e.prev_hash, seq: e.seq });
}

export function entryHash(e: Omit<ChainEntry, "hash">): string {
  return sha256Hex(entryPreimage(e));
}

export type ChainVerdict =
  | { ok: true; entries: number; head: ChainHead }
  | { ok: false; entries: number; seq: number; reason: string };

const HEX64 = /^[0-9a-f]{64}$/;

/**
 * Checks a whole chain from its first entry, in the given order: seq 1, 2, 3, … without gaps,
 * one chain name, each prev_hash equal to the previous entry's hash (64 zeros for seq 1), each
 * hash recomputed from the entry. Answers the first broken seq (the position's expected seq when
 * the entry there carries another one) and why.
 */
export function verifyChain(entries: readonly unknown[], opts: { chain?: string } = {}): ChainVerdict {
  let prev = GENESIS_HASH;
  let name = opts.chain;
  for (let i = 0; i < entries.length; i++) {
    const expected = i + 1;
    const bad = (reason: string): ChainVerdict => ({ ok: false, entries: entries.length, seq: expected, reason });
    const e = entries[i] as Partial<ChainEntry> | null;
    if (typeof e !== "object" || e === null) return bad("the entry is not an object");
    if (typeof e.seq !== "number" || !Number.isSafeInteger(e.seq)) return bad("seq is not an integer");
    if (e.seq !== expected) {
      return bad(
        e.seq > expected
          ? `entry ${expected} is missing (found seq ${e.seq} in its place)`
          : `entries are out of order or repeated (found seq ${e.seq} at position ${expected})`,
      );
    }
    for (const field of ["chain", "at", "kind", "prev_hash", "hash"] as const) {
      if (typeof e[field] !== "string") return bad(`${field} is not a string`);
    }
    if (!("body" in e) || e.body === undefined) return bad("body is missing");
    name ??= e.chain as string;
    if (e.chain !== name) return bad(`entry belongs to chain '${e.chain}', not '${name}'`);
    if (e.prev_hash !== prev) {
      return bad(`prev_hash ${e.prev_hash} does not link to the previous entry's hash ${prev}`);
    }
    let recomputed: string;
    try {
      recomputed = entryHash(e as ChainEntry);
    } catch (err) {
      return bad(`the body is not canonical JSON: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (!HEX64.test(e.hash as string) || recomputed !== e.hash) {
      return bad(`hash ${e.hash} does not match the entry's content (recomputed ${recomputed})`);
    }
    prev = recomputed;
  }
  return { ok: true, entries: entries.length, head: { chain: name ?? "", seq: entries.length, hash: prev } };
}

// ---------------------------------------------------------------------------------------------
// Stored: append, list, head.

export type ChainExecutor = Kysely<Database> | Transaction<Database>;

export interface AppendOptions {
  /**
   * Runs inside the append's transaction after the chain's head is locked and before the entry is
   * written: the place to check a rule against the chain as it is (throwing aborts the append,
   * and the caller's transaction with it).
   */
  guard?: (trx: Transaction<Database>, head: ChainHead) => Promise<void>;
  /** The entry's time; defaults to now. */
  at?: string;
}

function isPostgres(db: ChainExecutor): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

function toEntry(row: ChainEntryRow): ChainEntry {
  return {
    chain: row.chain,
    seq: Number(row.seq),
    at: row.at,
    kind: row.kind,
    body: JSON.parse(row.body) as JsonValue,
    prev_hash: row.prev_hash,
    hash: row.hash,
  };
}

/**
 * Appends one entry to `chain` and returns it. Inside the caller's transaction when given one
 * (the entry commits or rolls back with the caller's writes); otherwise in its own.
 *
 * Concurrency, both engines: the chain's head row is the write lock. The append first makes sure
 * the row exists (insert … on conflict do nothing), then reads it `for update` on PostgreSQL
 * (concurrent appenders queue on the row lock until the holder commits, and then read its new
 * head); SQLite has one writer at a time and the first insert takes the write lock. The primary
 * key (chain, seq) stops a duplicate seq should anything bypass the lock.
 */
export async function append(
  db: ChainExecutor,
  chain: string,
  kind: string,
  body: JsonValue | Record<string, unknown>,
  opts: AppendOptions = {},
): Promise<ChainEntry> {
  if (!CHAIN_NAME.test(chain)) throw new TypeError(`invalid chain name '${chain}'`);
  if (!CHAIN_NAME.test(kind)) throw new TypeError(`invalid entry kind '${kind}'`);
  const bodyText = canonicalJson(body);
  if (!db.isTransaction) {
    return (db as Kysely<Database>).transaction().execute((trx) => append(trx, chain, kind, body, opts));
  }
  const trx = db as Transaction<Database>;
  const at = opts.at ?? new Date().toISOString();
  await trx
    .insertInto("chain_heads")
    .values({ chain, seq: 0, hash: GENESIS_HASH, updated_at: at })
    .onConflict((oc) => oc.column("chain").doNothing())
    .execute();
  let q = trx.selectFrom("chain_heads").select(["seq", "hash"]).where("chain", "=", chain);
  if (isPostgres(trx)) q = q.forUpdate();
  const locked = await q.executeTakeFirstOrThrow();
  const head: ChainHead = { chain, seq: Number(locked.seq), hash: locked.hash };
  if (opts.guard) await opts.guard(trx, head);
  const entry: Omit<ChainEntry, "hash"> = {
    chain,
    seq: head.seq + 1,
    at,
    kind,
    body: JSON.parse(bodyText) as JsonValue,
    prev_hash: head.hash,
  };
  const hash = entryHash(entry);
  await trx
    .insertInto("chain_entries")
    .values({ chain, seq: entry.seq, at, kind, body: bodyText, prev_hash: entry.prev_hash, hash })
    .execute();
  await trx
    .updateTable("chain_heads")
    .set({ seq: entry.seq, hash, updated_at: at })
    .where("chain", "=", chain)
    .where("seq", "=", head.seq)
    .execute();
  return { ...entry, hash };
}

/** Entries of `chain` with seq > after, in seq order (at most `limit`, default 1000). */
export async function list(
  db: ChainExecutor,
  chain: string,
  opts: { after?: number; limit?: number } = {},
): Promise<ChainEntry[]> {
  const rows = await db
    .selectFrom("chain_entries")
    .selectAll()
    .where("chain", "=", chain)
    .where("seq", ">", opts.after ?? 0)
    .orderBy("seq", "asc")
    .limit(opts.limit ?? 1000)
    .execute();
  return rows.map(toEntry);
}

/** Entry `seq` of `chain`, if it exists. */
export async function entryAt(db: ChainExecutor, chain: string, seq: number): Promise<ChainEntry | undefined> {
  const row = await db
    .selectFrom("chain_entries")
    .selectAll()
    .where("chain", "=", chain)
    .where("seq", "=", seq)
    .executeTakeFirst();
  return row ? toEntry(row) : undefined;
}

/** ISO 8601 of the latest entry of `chain`, or null when it has none. */
export async function lastAt(db: ChainExecutor, chain: string): Promise<string | null> {
  const row = await db
    .selectFrom("chain_entries")
    .select("at")
    .where("chain", "=", chain)
    .orderBy("seq", "desc")
    .limit(1)
    .executeTakeFirst();
  return row?.at ?? null;
}

/** Every entry of `chain`, in seq order (read page by page). */
export async function listAll(db: ChainExecutor, chain: string, pageSize = 1000): Promise<ChainEntry[]> {
  const out: ChainEntry[] = [];
  for (;;) {
    const page = await list(db, chain, { after: out.at(-1)?.seq ?? 0, limit: pageSize });
    out.push(...page);
    if (page.length < pageSize) return out;
  }
}

/** The chain's last seq and hash, from its last entry (seq 0 and 64 zeros when empty). */
export async function head(db: ChainExecutor, chain: string): Promise<ChainHead> {
  const row = await db
    .selectFrom("chain_entries")
    .select(["seq", "hash"])
    .where("chain", "=", chain)
    .orderBy("seq", "desc")
    .limit(1)
    .executeTakeFirst();
  return row ? { chain, seq: Number(row.seq), hash: row.hash } : { chain, seq: 0, hash: GENESIS_HASH };
}

// ---------------------------------------------------------------------------------------------
// The audit log on the chain: every audit_log row is also entry kind `audit` on chain `audit`.

export const AUDIT_CHAIN = "audit";
export const AUDIT_KIND = "audit";

/** The chain body of an audit_log row (the stored detail text parsed back). */
export function auditEntryBody(row: {
  id: string;
  actor: string;
  action: string;
  subject: string;
  detail: string;
}): JsonValue {
  let detail: JsonValue;
  try {
    detail = JSON.parse(row.detail) as JsonValue;
  } catch {
    detail = { value: row.detail };
  }
  return { id: row.id, actor: row.actor, action: row.action, subject: row.subject, detail };
}
