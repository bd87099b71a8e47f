import type { Kysely } from "kysely";

// Issue #23 item 6: several upload streams for one job (docs/suite.md "Several upload streams").
//
// - `job_input_parts`: one row per part of a job's input sent as `PUT /api/jobs/:id/input` with
//   `Content-Range: bytes a-b/total`, for the upload (`gen`, = jobs.upload_gen) it belongs to.
//   `writing` while its bytes are being written (held by `writer` until `lease_until`, renewed
//   while the part arrives), `landed` once every byte is in the input file: a restart keeps the
//   landed parts (their bytes are in the file) and drops the writing rows whose lease ran out (a
//   dead process's; the client sends those ranges again). `total` is the whole input's size that
//   every part of the upload declared.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("job_input_parts")
    .addColumn("job_id", "text", (c) => c.notNull())
    .addColumn("gen", "text", (c) => c.notNull())
    .addColumn("part_offset", "bigint", (c) => c.notNull())
    .addColumn("part_length", "bigint", (c) => c.notNull())
    .addColumn("total", "bigint", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("writer", "text")
    .addColumn("lease_until", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("job_input_parts_pk", ["job_id", "gen", "part_offset"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("job_input_parts").execute();
}
