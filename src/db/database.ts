import fs from "node:fs";
import path from "node:path";
import { Kysely, PostgresDialect, SqliteDialect } from "kysely";
import pg from "pg";
import type { Database } from "./schema.js";
import SQLite from "./sqlite-driver.js";

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
  /** PostgreSQL: statements running longer are cancelled by the server (0 or absent: no limit). */
  statementTimeoutSeconds?: number | undefined;
}

/** SQLite under dataDir by default; PostgreSQL when a URL is given. */
export function openDatabase(options: DatabaseOptions): Db {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options.statementTimeoutSeconds ?? 0);
  return openSqlite(path.join(options.dataDir, "labphi.sqlite"));
}

/** The SQLite file and the files SQLite keeps beside it. */
const SQLITE_FILES = ["", "-wal", "-shm", "-journal"];

/**
 * Only the service's user may read the database (it holds licence keys, e-mail addresses, claims):
 * a folder we create is 0700, the file is created 0600 before SQLite opens it (SQLite gives its
 * -wal, -shm and -journal files the mode of the database file), and files left by an earlier
 * version with wider modes are narrowed to 0600.
 */
function privateSqliteFile(file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.closeSync(fs.openSync(file, fs.constants.O_CREAT | fs.constants.O_RDWR, 0o600));
  if (process.platform === "win32") return;
  for (const suffix of SQLITE_FILES) {
    try {
      const st = fs.statSync(file + suffix);
      if ((st.mode & 0o077) !== 0) fs.chmodSync(file + suffix, 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
  }
}

function openSqlite(file: string): Db {
  privateSqliteFile(file);
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

/** How long a request waits for a PostgreSQL connection before answering 503 database_unavailable. */
export const PG_CONNECT_TIMEOUT_MS = 10_000;

function openPostgres(url: string, statementTimeoutSeconds: number): Db {
  // int8 (bigint) columns come back as JS numbers only when safe; we keep them as strings otherwise.
  // F14: a bounded wait for a connection, and an idle client's error (the server restarting) only
  // drops that client: without a listener the pool's 'error' event would end the process.
  // A statement that runs longer than the limit is cancelled by the server (SQLSTATE 57014, answered
  // 503 database_timeout), so a stuck query cannot hold one of the pool's ten connections for ever.
  // It is the connections' startup setting: `RESET statement_timeout` returns to it (migrations
  // run without it, see migrate.ts).
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    connectionTimeoutMillis: PG_CONNECT_TIMEOUT_MS,
    ...(statementTimeoutSeconds > 0 ? { statement_timeout: statementTimeoutSeconds * 1000 } : {}),
  });
  pool.on("error", () => {});
  // A client checked out between two statements (inside a transaction) that loses its server emits
  // 'error' on itself, not on the pool: without a listener that ends the process too. The statement
  // that uses it next fails (503 database_unavailable) and the pool discards it.
  pool.on("connect", (client) => {
    client.on("error", () => {});
  });
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
