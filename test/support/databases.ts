import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { inject } from "vitest";
import { type Db, openDatabase } from "../../src/db/database.js";
import { migrateToLatest } from "../../src/db/migrate.js";

export type Engine = "sqlite" | "postgres";
export const ENGINES: Engine[] = ["sqlite", "postgres"];

const dataDirs = new WeakMap<Db, string>();

/** The temporary DATA_DIR of a database from `freshDatabase` (apps built on it keep their secrets.json there). */
export function dataDirOf(db: Db): string | undefined {
  return dataDirs.get(db);
}

/**
 * A fresh, empty, migrated database on the given engine, with its own temporary DATA_DIR
 * (removed when the database is closed).
 */
export async function freshDatabase(engine: Engine): Promise<{ db: Db; dataDir: string; databaseUrl?: string }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-test-"));
  const owned = (db: Db): Db => {
    const close = db.close;
    db.close = async () => {
      await close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    };
    dataDirs.set(db, dataDir);
    return db;
  };
  if (engine === "sqlite") {
    const db = owned(openDatabase({ dataDir }));
    await migrateToLatest(db);
    return { db, dataDir };
  }
  const databaseUrl = await createPostgresDatabase();
  const db = owned(openDatabase({ dataDir, databaseUrl }));
  await migrateToLatest(db);
  return { db, dataDir, databaseUrl };
}

/** Creates an empty database on the test PostgreSQL server and returns its URL. */
export async function createPostgresDatabase(): Promise<string> {
  const admin = inject("pgAdminUrl");
  const name = `t_${randomBytes(6).toString("hex")}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(`create database ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return url.toString();
}
