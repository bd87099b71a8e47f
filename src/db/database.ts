import fs from "node:fs";
import path from "node:path";
import SQLite from "better-sqlite3";
import { Kysely, PostgresDialect, SqliteDialect } from "kysely";
import pg from "pg";
import type { Database } from "./schema.js";

export type DatabaseKind = "sqlite" | "postgres";

export interface Db {
  kysely: Kysely<Database>;
  kind: DatabaseKind;
  /** Where it lives: the SQLite file or the PostgreSQL URL without its password. */
  location: string;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  dataDir: string;
  databaseUrl?: string | undefined;
}

/** SQLite under dataDir by default; PostgreSQL when a URL is given. */
export function openDatabase(options: DatabaseOptions): Db {
  if (options.databaseUrl) return openPostgres(options.databaseUrl);
  return openSqlite(path.join(options.dataDir, "labphi.sqlite"));
}

function openSqlite(file: string): Db {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = new SQLite(file);
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("synchronous = NORMAL");
  sqlite.pragma("foreign_keys = ON");
  sqlite.pragma("busy_timeout = 5000");
  const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  return {
    kysely,
    kind: "sqlite",
    location: file,
    close: () => kysely.destroy(),
  };
}

function openPostgres(url: string): Db {
  // int8 (bigint) columns come back as JS numbers only when safe; we keep them as strings otherwise.
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const safe = new URL(url);
  safe.password = "";
  return {
    kysely,
    kind: "postgres",
    location: safe.toString(),
    close: () => kysely.destroy(),
  };
}

/** ISO 8601 timestamp, the one time format stored in every table. */
export function nowIso(): string {
  return new Date().toISOString();
}

/** True when an error is a unique-constraint violation on either engine. */
export function isUniqueViolation(err: unknown): boolean {
  if (typeof err !== "object" || err === null) return false;
  const e = err as { code?: string; message?: string };
  return e.code === "23505" || e.code === "SQLITE_CONSTRAINT_UNIQUE" || e.code === "SQLITE_CONSTRAINT_PRIMARYKEY";
}
