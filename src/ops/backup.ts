import fs from "node:fs";
import path from "node:path";
import SQLite, { type SqliteDatabase } from "../db/sqlite-driver.js";

/**
 * Online backup and restore of the SQLite database (issue #14 "Operations"). The backup uses
 * SQLite's online backup API (through better-sqlite3): every page is copied in one step from one
 * read transaction, so the copy is consistent while the service keeps writing, and (WAL mode)
 * writers are not blocked. The
 * copy is written beside the target and renamed into place (a crash never leaves half a backup
 * under the target's name), with mode 0600 (it holds e-mail addresses and licence keys).
 * PostgreSQL is backed up with its own tools (pg_dump / pg_restore): see docs/operations.md.
 */

export interface TableCount {
  table: string;
  rows: number;
}

export interface BackupReport {
  file: string;
  bytes: number;
  pages: number;
  tables: TableCount[];
  migration: string | undefined;
}

/** Tables of ours (not SQLite's), with their row counts, and the newest migration applied. */
export function describeSqlite(file: string): { tables: TableCount[]; migration: string | undefined } {
  const db = new SQLite(file, { readonly: true, fileMustExist: true });
  try {
    const names = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
      .pluck()
      .all() as string[];
    const tables = names.map((table) => ({
      table,
      rows: Number(
        db
          .prepare(`SELECT count(*) FROM "${table.replaceAll('"', '""')}"`)
          .pluck()
          .get(),
      ),
    }));
    const migration = names.includes("kysely_migration")
      ? (db.prepare("SELECT name FROM kysely_migration ORDER BY name DESC LIMIT 1").pluck().get() as string | undefined)
      : undefined;
    return { tables, migration };
  } finally {
    db.close();
  }
}

/** Problems found by SQLite's own integrity check, and whether the file is one of ours. */
export function checkSqlite(file: string): string[] {
  let db: SqliteDatabase;
  try {
    db = new SQLite(file, { readonly: true, fileMustExist: true });
  } catch (err) {
    return [`cannot open ${file}: ${err instanceof Error ? err.message : String(err)}`];
  }
  try {
    const problems = (db.prepare("PRAGMA integrity_check").pluck().all() as string[]).filter((r) => r !== "ok");
    const hasMigrations = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'kysely_migration'").pluck().get();
    if (!hasMigrations) problems.push("not a Lab Phi database (no kysely_migration table)");
    return problems;
  } catch (err) {
    return [err instanceof Error ? err.message : String(err)];
  } finally {
    db.close();
  }
}

const ALL_PAGES = 2 ** 30;

function staging(target: string): string {
  return path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}.partial`);
}

/**
 * Copies the live database `source` to `target` with the online backup API. `onProgress` is called
 * with the pages copied so far and the total.
 */
export async function backupSqlite(
  source: string,
  target: string,
  onProgress?: (done: number, total: number) => void,
): Promise<BackupReport> {
  if (!fs.existsSync(source)) throw new Error(`no database at ${source}`);
  const resolvedTarget = path.resolve(target);
  if (resolvedTarget === path.resolve(source)) throw new Error("the backup file cannot be the database itself");
  fs.mkdirSync(path.dirname(resolvedTarget), { recursive: true });
  const partial = staging(resolvedTarget);
  fs.rmSync(partial, { force: true });
  // created 0600 before SQLite writes into it
  fs.closeSync(fs.openSync(partial, "w", 0o600));
  const db = new SQLite(source, { fileMustExist: true });
  let pages = 0;
  try {
    db.pragma("busy_timeout = 5000");
    await db.backup(partial, {
      progress: ({ totalPages, remainingPages }) => {
        pages = totalPages;
        onProgress?.(totalPages - remainingPages, totalPages);
        // Every page in one step, inside one read transaction: a write by another connection
        // between steps would restart the copy (SQLite's rule), so a busy service could keep a
        // step-wise backup from ever finishing. In WAL mode a reader does not block the writers.
        return ALL_PAGES;
      },
    });
  } catch (err) {
    fs.rmSync(partial, { force: true });
    throw err;
  } finally {
    db.close();
  }
  const problems = checkSqlite(partial);
  if (problems.length > 0) {
    fs.rmSync(partial, { force: true });
    throw new Error(`the copy failed its integrity check: ${problems.join("; ")}`);
  }
  fs.renameSync(partial, resolvedTarget);
  const { tables, migration } = describeSqlite(resolvedTarget);
  return { file: resolvedTarget, bytes: fs.statSync(resolvedTarget).size, pages, tables, migration };
}

export interface RestoreReport {
  file: string;
  /** where the database that was there before now is (undefined when there was none) */
  previous: string | undefined;
  tables: TableCount[];
  migration: string | undefined;
}

/**
 * Puts the backup `source` in place of the database `target` (the service must be stopped). The
 * database that was there is kept as `<target>.before-restore-<time>` with its -wal file, so a
 * restore can be undone. The caller then migrates the restored database to the current schema.
 */
export async function restoreSqlite(source: string, target: string): Promise<RestoreReport> {
  const problems = checkSqlite(source);
  if (problems.length > 0) throw new Error(`${source} cannot be restored: ${problems.join("; ")}`);
  const dir = path.dirname(path.resolve(target));
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  let previous: string | undefined;
  if (fs.existsSync(target)) {
    // fold the -wal into the file first, so the kept copy is whole by itself
    const old = new SQLite(target, { fileMustExist: true });
    try {
      old.pragma("wal_checkpoint(TRUNCATE)");
    } finally {
      old.close();
    }
    previous = `${target}.before-restore-${new Date().toISOString().replace(/[:.]/g, "-")}`;
    fs.renameSync(target, previous);
    for (const suffix of ["-wal", "-shm", "-journal"]) fs.rmSync(target + suffix, { force: true });
  }
  const partial = staging(target);
  fs.rmSync(partial, { force: true });
  fs.closeSync(fs.openSync(partial, "w", 0o600));
  const src = new SQLite(source, { readonly: true, fileMustExist: true });
  try {
    await src.backup(partial);
  } catch (err) {
    fs.rmSync(partial, { force: true });
    if (previous) fs.renameSync(previous, target);
    throw err;
  } finally {
    src.close();
  }
  fs.renameSync(partial, target);
  const { tables, migration } = describeSqlite(target);
  return { file: path.resolve(target), previous, tables, migration };
}
