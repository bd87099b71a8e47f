import type { Kysely } from "kysely";

// Issue #23 item 2: a caller lists its jobs, and deletes one.
//
// - `jobs.deleted_at`: when the job's owner deleted it (`DELETE /api/jobs/:id` with the job token).
//   Set once by a conditional update (only while the job is awaiting its input or has ended, and not
//   yet deleted); its input and output are then removed from the object store (`purged_at`, as the
//   retention sweep does, which also retries a deletion that failed). A deleted job answers 410
//   `job_deleted` on every job route, also after a restart.
// - `jobs_identity_created_idx` on (identity_id, created_at, id): `GET /api/jobs` reads one
//   identity's jobs newest first from a keyset cursor (created_at desc, id desc) as an index range.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("jobs").addColumn("deleted_at", "text").execute();
  await db.schema
    .createIndex("jobs_identity_created_idx")
    .on("jobs")
    .columns(["identity_id", "created_at", "id"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("jobs_identity_created_idx").execute();
  await db.schema.alterTable("jobs").dropColumn("deleted_at").execute();
}
