import type { Kysely } from "kysely";

// Issue #26: scored olympiad events (src/olympiad/tasks, docs/olympiad-tasks.md).
//
// - `olympiad_tasks`: one task per event (the 40 events' ids): description, metric, the hidden
//   answer key (text as the operator gave it, its SHA-256 committed on chain `olympiad` when the
//   task is set), the public/private split's seed, the window, quota and size bounds. The scoring
//   lease (`scoring_lease_until`, `scoring_owner`) lets one scorer at a time work on an event,
//   whichever instance; `closed_at` / `record_seq` once the close appended the results.
// - `olympiad_task_files`: the task's public files, served with their SHA-256.
// - `olympiad_submissions`: every accepted prediction file with its SHA-256; `status` pending until
//   scored (a pending row survives a restart: the sweep scores it), the public and private scores
//   (the private one is served only after the close), `final` when the team selected it.
// - `olympiad_submission_counts`: accepted submissions per (event, entrant, UTC day), raised by a
//   conditional upsert in the submission's transaction, so the daily quota holds under concurrency.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("olympiad_tasks")
    .addColumn("event_id", "text", (c) => c.primaryKey())
    .addColumn("season_id", "text", (c) => c.notNull())
    .addColumn("quarter", "text", (c) => c.notNull())
    .addColumn("description", "text", (c) => c.notNull())
    .addColumn("metric", "text", (c) => c.notNull())
    .addColumn("k", "integer")
    .addColumn("id_column", "text", (c) => c.notNull())
    .addColumn("value_column", "text", (c) => c.notNull())
    .addColumn("key_format", "text", (c) => c.notNull())
    .addColumn("key_text", "text", (c) => c.notNull())
    .addColumn("key_sha256", "text", (c) => c.notNull())
    .addColumn("key_rows", "integer", (c) => c.notNull())
    .addColumn("public_bp", "integer", (c) => c.notNull())
    .addColumn("split_seed", "text", (c) => c.notNull())
    .addColumn("opens_at", "text", (c) => c.notNull())
    .addColumn("closes_at", "text", (c) => c.notNull())
    .addColumn("daily_quota", "integer", (c) => c.notNull())
    .addColumn("max_file_bytes", "integer", (c) => c.notNull())
    .addColumn("max_finals", "integer", (c) => c.notNull())
    .addColumn("commit_seq", "integer")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .addColumn("closed_at", "text")
    .addColumn("record_seq", "integer")
    .addColumn("close_error", "text")
    .addColumn("scoring_lease_until", "text")
    .addColumn("scoring_owner", "text")
    .execute();
  await db.schema
    .createTable("olympiad_task_files")
    .addColumn("event_id", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("media_type", "text", (c) => c.notNull())
    .addColumn("content", "text", (c) => c.notNull())
    .addColumn("sha256", "text", (c) => c.notNull())
    .addColumn("bytes", "integer", (c) => c.notNull())
    .addPrimaryKeyConstraint("olympiad_task_files_pk", ["event_id", "name"])
    .execute();
  await db.schema
    .createTable("olympiad_submissions")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("event_id", "text", (c) => c.notNull())
    .addColumn("entrant_id", "text", (c) => c.notNull())
    .addColumn("entrant_kind", "text", (c) => c.notNull())
    .addColumn("participant_id", "text", (c) => c.notNull())
    .addColumn("format", "text", (c) => c.notNull())
    .addColumn("content", "text", (c) => c.notNull())
    .addColumn("sha256", "text", (c) => c.notNull())
    .addColumn("bytes", "integer", (c) => c.notNull())
    .addColumn("rows", "integer", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("public_score", "text")
    .addColumn("private_score", "text")
    .addColumn("error", "text")
    .addColumn("final", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("scored_at", "text")
    .execute();
  await db.schema
    .createIndex("olympiad_submissions_status_idx")
    .on("olympiad_submissions")
    .columns(["status", "event_id"])
    .execute();
  await db.schema
    .createIndex("olympiad_submissions_entrant_idx")
    .on("olympiad_submissions")
    .columns(["event_id", "entrant_id", "created_at"])
    .execute();
  await db.schema
    .createTable("olympiad_submission_counts")
    .addColumn("event_id", "text", (c) => c.notNull())
    .addColumn("entrant_id", "text", (c) => c.notNull())
    .addColumn("day", "text", (c) => c.notNull())
    .addColumn("n", "integer", (c) => c.notNull())
    .addPrimaryKeyConstraint("olympiad_submission_counts_pk", ["event_id", "entrant_id", "day"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("olympiad_submission_counts").execute();
  await db.schema.dropIndex("olympiad_submissions_entrant_idx").execute();
  await db.schema.dropIndex("olympiad_submissions_status_idx").execute();
  await db.schema.dropTable("olympiad_submissions").execute();
  await db.schema.dropTable("olympiad_task_files").execute();
  await db.schema.dropTable("olympiad_tasks").execute();
}
