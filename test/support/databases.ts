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

/** A fresh, empty, migrated database on the given engine. */
export async function freshDatabase(engine: Engine): Promise<{ db: Db; dataDir: string; databaseUrl?: string }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-test-"));
  if (engine === "sqlite") {
    const db = openDatabase({ dataDir });
    await migrateToLatest(db);
    return { db, dataDir };
  }
  const databaseUrl = await createPostgresDatabase();
  const db = openDatabase({ dataDir, databaseUrl });
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
