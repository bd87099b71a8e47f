import { randomBytes } from "node:crypto";
import type { Kysely } from "kysely";
import type { Database } from "./schema.js";

export interface SettingsTables {
  settings: { key: string; value: string; updated_at: string };
}

/**
 * Reads a persisted setting, creating it with `make()` on first use.
 * Safe under concurrent first calls: the first insert wins, everyone reads it back.
 */
export async function persistentSetting(db: Kysely<Database>, key: string, make: () => string): Promise<string> {
  await db
    .insertInto("settings")
    .values({ key, value: make(), updated_at: new Date().toISOString() })
    .onConflict((oc) => oc.column("key").doNothing())
    .execute();
  const row = await db.selectFrom("settings").select("value").where("key", "=", key).executeTakeFirstOrThrow();
  return row.value;
}

export const randomSecret = () => randomBytes(32).toString("base64url");
