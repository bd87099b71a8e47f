import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { type Db, openDatabase } from "../../src/db/database.js";
import { migrateToLatest } from "../../src/db/migrate.js";
import { migrations } from "../../src/db/migrations/index.js";
import { createPostgresDatabase } from "../support/databases.js";

/**
 * docs/deploy.md "Upgrades": several instances (services and workers) starting at once on one
 * PostgreSQL database each run `migrateToLatest`; the migrations run once, by one of them (Kysely's
 * migrator holds a PostgreSQL advisory lock, `pg_advisory_lock`, for the whole run: the others wait,
 * then find nothing pending), and every instance starts.
 */
describe("migrations on PostgreSQL from several instances at once", () => {
  const dbs: Db[] = [];
  const dirs: string[] = [];
  afterAll(async () => {
    for (const db of dbs) await db.close();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("four instances migrate one empty database at the same moment: each migration applied exactly once", async () => {
    const databaseUrl = await createPostgresDatabase();
    for (let i = 0; i < 4; i++) {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-migrate-"));
      dirs.push(dataDir);
      dbs.push(openDatabase({ dataDir, databaseUrl, statementTimeoutSeconds: 30 }));
    }
    const applied = await Promise.all(dbs.map((db) => migrateToLatest(db)));
    const all = Object.keys(migrations).sort();
    // one instance applied them all; the others found nothing left (none failed on a duplicate)
    expect(applied.flat().sort()).toEqual(all);
    expect(applied.filter((names) => names.length > 0)).toHaveLength(1);
    const rows = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(
      (dbs[0] as Db).kysely,
    );
    expect(rows.rows.map((r) => r.name)).toEqual(all);
    // and the statement timeout each instance lifted for its migrations is back on its connections
    for (const db of dbs) {
      const t = await sql<{ statement_timeout: string }>`show statement_timeout`.execute(db.kysely);
      expect(t.rows[0]?.statement_timeout).toBe("30s");
    }
  });
});
