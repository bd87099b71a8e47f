import type { Kysely } from "kysely";

// Issue #21 item 3: paid work first, job data expires (docs/suite.md "Priority" and "Retention").
//
// - `queue_tasks.priority`: the table queue takes waiting tasks by ascending priority, then in the
//   order they became due (a paid job's segments 0, a free job's 10: `TASK_PRIORITY`). Tasks queued
//   before this migration get 0 (they keep their first-in-first-out order among themselves).
// - `jobs.expired_at`: when the retention sweep deleted the job's data (its input and outputs,
//   `JOB_RETENTION_HOURS` after it ended, or a partial upload abandoned for
//   `JOB_ABANDONED_UPLOAD_HOURS`). Set once by a conditional update; an expired job answers 410
//   `job_expired`, also after a restart.
// - `jobs.purged_at`: when its data was deleted (after `expired_at`; a deletion that failed, e.g.
//   S3 unreachable, leaves it null and the next sweep tries again).

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("queue_tasks")
    .addColumn("priority", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createIndex("queue_tasks_claim_idx")
    .on("queue_tasks")
    .columns(["queue", "state", "priority", "run_after"])
    .execute();
  await db.schema.alterTable("jobs").addColumn("expired_at", "text").execute();
  await db.schema.alterTable("jobs").addColumn("purged_at", "text").execute();
  // the sweep's questions: ended jobs not yet expired, by end time; unfinished uploads by last change
  await db.schema.createIndex("jobs_retention_idx").on("jobs").columns(["expired_at", "finished_at"]).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("jobs_retention_idx").execute();
  await db.schema.alterTable("jobs").dropColumn("purged_at").execute();
  await db.schema.alterTable("jobs").dropColumn("expired_at").execute();
  await db.schema.dropIndex("queue_tasks_claim_idx").execute();
  await db.schema.alterTable("queue_tasks").dropColumn("priority").execute();
}
