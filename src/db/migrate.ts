import { type Migration, type MigrationProvider, Migrator } from "kysely";
import type { Db } from "./database.js";
import { migrations } from "./migrations/index.js";

const provider: MigrationProvider = {
  getMigrations: async () => migrations as Record<string, Migration>,
};

/** Applies every pending migration; throws with the failing migration's name. */
export async function migrateToLatest(db: Db): Promise<string[]> {
  // biome-ignore lint/suspicious/noExplicitAny: the migrator works on any schema
  const migrator = new Migrator({ db: db.kysely as any, provider, allowUnorderedMigrations: true });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === "Error");
  if (error) {
    const name = failed?.migrationName ?? "unknown";
    throw new Error(`migration ${name} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  return (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}
