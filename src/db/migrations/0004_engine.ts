import type { Kysely } from "kysely";

// Codec engine state: barrel state per direction, per-chamber counts, dataset prints (fingerprints,
// never data) and the freemium identities that own them. Portable subset only: TEXT ids, INTEGER /
// BIGINT counters, TEXT ISO timestamps.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("identities")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("intent", "text", (c) => c.notNull())
    // salted SHA-256 of the seed phrase (the seed itself is never stored)
    .addColumn("seed_salt", "text", (c) => c.notNull())
    .addColumn("seed_sha256", "text", (c) => c.notNull())
    // keyed hash (HMAC-SHA256) of the current token; the token itself is never stored
    .addColumn("token_hash", "text", (c) => c.notNull().unique())
    .addColumn("expires_at", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("engine_barrels")
    .addColumn("direction", "text", (c) => c.primaryKey())
    .addColumn("barrel", "text", (c) => c.notNull())
    .addColumn("chamber", "text", (c) => c.notNull())
    .addColumn("fires", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("rotates", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("engine_barrel_counts")
    .addColumn("direction", "text", (c) => c.notNull())
    .addColumn("chamber", "text", (c) => c.notNull())
    .addColumn("count", "bigint", (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint("engine_barrel_counts_pk", ["direction", "chamber"])
    .execute();

  await db.schema
    .createTable("engine_prints")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("identity_id", "text", (c) => c.notNull())
    .addColumn("dataset_print_id", "text", (c) => c.notNull())
    .addColumn("bytes", "bigint", (c) => c.notNull())
    .addColumn("compressed_bytes", "bigint", (c) => c.notNull())
    .addColumn("data_class", "text", (c) => c.notNull())
    .addColumn("path", "text", (c) => c.notNull())
    .addColumn("label", "text", (c) => c.notNull())
    .addColumn("level", "text", (c) => c.notNull())
    .addColumn("at", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("engine_prints_identity_idx")
    .on("engine_prints")
    .columns(["identity_id", "at", "id"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("engine_prints").execute();
  await db.schema.dropTable("engine_barrel_counts").execute();
  await db.schema.dropTable("engine_barrels").execute();
  await db.schema.dropTable("identities").execute();
}
