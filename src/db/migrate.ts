import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from "kysely";
import type { Db } from "./database.js";
import { migrations } from "./migrations/index.js";
import type { Database } from "./schema.js";

const provider: MigrationProvider = {
  getMigrations: async () => migrations as Record<string, Migration>,
};

/**
 * Applies every pending migration; throws with the failing migration's name. On PostgreSQL they run
 * on one connection without the statement timeout (a migration of a large table may take longer
 * than any request should), which is restored afterwards.
 */
export async function migrateToLatest(db: Db): Promise<string[]> {
  if (db.kind !== "postgres") return migrateOn(db.kysely);
  return db.kysely.connection().execute(async (conn) => {
    await sql`set statement_timeout = 0`.execute(conn);
    try {
      return await migrateOn(conn);
    } finally {
      await sql`reset statement_timeout`.execute(conn);
    }
  });
}

async function migrateOn(kysely: Kysely<Database>): Promise<string[]> {
  // biome-ignore lint/suspicious/noExplicitAny: the migrator works on any schema
  const migrator = new Migrator({ db: kysely as any, provider, allowUnorderedMigrations: true });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === "Error");
  if (error) {
    const name = failed?.migrationName ?? "unknown";
    throw new Error(`migration ${name} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  return (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}
