import type { Kysely } from "kysely";

// Suite jobs coded while their input arrives (issue #10 item 8, docs/suite.md "Coding while the
// input arrives"). Every upload of a job's input gets a fresh generation: `jobs.upload_gen` is the
// current one, `job_segments.gen` the one a segment was planned for. A segment's task, its output
// object and its row carry the generation, so work begun on an upload that then failed (and was
// sent again) never counts for the new bytes. Rows written before this migration have no
// generation (null) and keep their old object keys.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("jobs").addColumn("upload_gen", "text").execute();
  await db.schema.alterTable("job_segments").addColumn("gen", "text").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("job_segments").dropColumn("gen").execute();
  await db.schema.alterTable("jobs").dropColumn("upload_gen").execute();
}
