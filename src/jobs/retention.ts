import fs from "node:fs/promises";
import path from "node:path";
import { type Kysely, sql } from "kysely";
import type { DatabaseKind } from "../db/database.js";
import type { Database } from "../db/schema.js";
import { Problem } from "../http/problem.js";
import { errorMessage } from "./queue/types.js";
import { jobKeys, type ObjectStore } from "./storage/types.js";
import { jobStore } from "./store.js";
import type { JobRow, JobState } from "./tables.js";

/**
 * Job data expires (issue #21 item 3; docs/suite.md "Retention"). A sweep, run every
 * JOB_SWEEP_INTERVAL_SECONDS by the service:
 *
 * 1. **Ended jobs**: a job that ended (done, failed, cancelled) more than JOB_RETENTION_HOURS ago
 *    is marked expired (`jobs.expired_at`, one conditional update), then everything under
 *    `jobs/<id>/` in the object store (input, segment outputs, leftovers) is deleted and
 *    `purged_at` set. A deletion that fails (S3 unreachable) is tried again by the next sweep.
 * 2. **Abandoned uploads**: a job still waiting for its input (`awaiting_input`, `uploading`) whose
 *    last upload activity is older than JOB_ABANDONED_UPLOAD_HOURS is cancelled
 *    (`error_code` `upload_abandoned`) and expired the same way, its partial data deleted: the
 *    stored part of a PUT, a `.input.<upload>.growing` file, its tus spool file. Activity is the
 *    job row's `updated_at` (set when an upload starts, and by every tus request) and, on this
 *    machine, the modification time of its tus spool file and of its growing input file.
 * 3. **Orphan spool files**: tus spool entries older than the same limit whose job no longer takes
 *    input (or does not exist) are removed.
 *
 * An expired job answers 410 `job_expired` on every job route (`assertNotExpired`). One sweeper at
 * a time: on PostgreSQL a session advisory lock (`pg_try_advisory_lock`; it goes with the
 * connection when a process dies, so nothing stale is left to expire), within one process a flag.
 * Every step is idempotent, so a second sweeper would only repeat deletions.
 */

/** Where the tus uploads of a service spool (DATA_DIR/spool/tus): routes.ts writes, the sweep cleans. */
export const tusSpoolDir = (dataDir: string) => path.join(dataDir, "spool", "tus");

export const ENDED: JobState[] = ["done", "failed", "cancelled"];
export const UNFINISHED_UPLOAD: JobState[] = ["awaiting_input", "uploading"];
const HOUR_MS = 3600_000;
/** jobs handled per query (the sweep loops until none is left) */
const BATCH = 200;

export interface RetentionOptions {
  db: Kysely<Database>;
  kind: DatabaseKind;
  store: ObjectStore;
  /** the tus spool of this service (DATA_DIR/spool/tus); undefined: no spool here */
  spoolDir?: string | undefined;
  /** the local object store's root (DATA_DIR), to see growing input files' activity; undefined on S3 */
  localRoot?: string | undefined;
  retentionHours: number;
  abandonedUploadHours: number;
  /** the clock (tests control it) */
  now?: () => number;
  log?: (line: string) => void;
}

export type SweepResult =
  | { swept: true; expired: string[]; abandoned: string[]; spoolRemoved: string[]; failed: string[] }
  | { swept: false; reason: "busy" };

/**
 * 410 job_deleted for a job its owner deleted (DELETE /api/jobs/:id, issue #23), 410 job_expired
 * for one whose data the retention sweep deleted. Every job route calls it.
 */
export function assertNotExpired(job: JobRow): void {
  if (job.deleted_at) {
    throw new Problem(
      410,
      "job_deleted",
      `Job ${job.id} was deleted at ${job.deleted_at} by its owner: its input and output are gone. Buy a new job to run it again.`,
      { job_id: job.id, state: job.state, finished_at: job.finished_at, deleted_at: job.deleted_at },
    );
  }
  if (!job.expired_at) return;
  const abandoned = job.error_code === "upload_abandoned";
  throw new Problem(
    410,
    "job_expired",
    abandoned
      ? `Job ${job.id} was abandoned: its upload made no progress for too long, and what had arrived was deleted at ${job.expired_at}. Buy a new job.`
      : `The data of job ${job.id} (input and output) was deleted at ${job.expired_at}, after the retention period that follows the end of a job. Buy a new job to run it again.`,
    {
      job_id: job.id,
      state: job.state,
      finished_at: job.finished_at,
      expired_at: job.expired_at,
      output_sha256: job.output_sha256,
    },
  );
}

/**
 * Deletes everything of job `id` in the object store (input, segment outputs, leftovers) and its
 * tus spool files, then records `purged_at` (once). Throws when a deletion fails (S3 unreachable):
 * the sweep's `purgeLeft` tries an expired or deleted job again while `purged_at` is null. The
 * retention sweep and `DELETE /api/jobs/:id` (src/jobs/manage.ts) share it.
 */
export async function purgeJobData(
  deps: { db: Kysely<Database>; store: ObjectStore; spoolDir?: string | undefined },
  id: string,
  at: string,
): Promise<void> {
  await deps.store.deletePrefix(jobKeys.prefix(id));
  await removeSpoolFiles(deps.spoolDir, id);
  // the ranges of an input sent in parts: their bytes are gone with the input
  await jobStore.deleteInputPartsNotOf(deps.db, id, null);
  await deps.db
    .updateTable("jobs")
    .set({ purged_at: at })
    .where("id", "=", id)
    .where("purged_at", "is", null)
    .execute();
}

async function removeSpoolFiles(dir: string | undefined, id: string): Promise<void> {
  if (!dir) return;
  await fs.rm(path.join(dir, id), { force: true });
  await fs.rm(path.join(dir, `${id}.json`), { force: true });
}

/** PostgreSQL advisory lock key of the sweep (hashtext of a fixed name). */
const LOCK_NAME = "labphi:job-retention";

export class JobRetention {
  private readonly db: Kysely<Database>;
  private readonly now: () => number;
  private readonly log: (line: string) => void;
  private running: Promise<SweepResult> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly opts: RetentionOptions) {
    this.db = opts.db;
    this.now = opts.now ?? Date.now;
    this.log = opts.log ?? (() => {});
  }

  /** One sweep, unless another is under way (in this process, or anywhere on PostgreSQL). */
  sweep(): Promise<SweepResult> {
    if (this.running) return Promise.resolve({ swept: false, reason: "busy" });
    const run = this.locked().finally(() => {
      this.running = undefined;
    });
    this.running = run;
    return run;
  }

  /** Sweeps every `intervalMs` (first after `firstMs`), until `stop()`; timers do not hold the process. */
  start(intervalMs: number, firstMs = Math.min(60_000, intervalMs)): void {
    if (this.timer || this.stopped) return;
    const tick = (delay: number) => {
      this.timer = setTimeout(() => {
        this.sweep()
          .then((r) => {
            if (r.swept && r.expired.length + r.abandoned.length + r.spoolRemoved.length + r.failed.length > 0) {
              this.log(
                `job retention: ${r.expired.length} job(s) expired, ${r.abandoned.length} abandoned upload(s), ` +
                  `${r.spoolRemoved.length} spool file(s) removed, ${r.failed.length} deletion(s) to retry`,
              );
            }
          })
          .catch((err) => this.log(`job retention sweep failed: ${errorMessage(err)}`))
          .finally(() => {
            if (!this.stopped) tick(intervalMs);
          });
      }, delay);
      this.timer.unref();
    };
    tick(firstMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => {});
  }

  private async locked(): Promise<SweepResult> {
    if (this.opts.kind !== "postgres") return this.work();
    // A session lock on one connection of the pool, held while the sweep runs on the others.
    return this.db.connection().execute(async (conn) => {
      const got = await sql<{ locked: boolean }>`select pg_try_advisory_lock(hashtext(${LOCK_NAME})) as locked`.execute(
        conn,
      );
      if (!got.rows[0]?.locked) return { swept: false, reason: "busy" } as const;
      try {
        return await this.work();
      } finally {
        await sql`select pg_advisory_unlock(hashtext(${LOCK_NAME}))`.execute(conn);
      }
    });
  }

  private iso(ms: number): string {
    return new Date(ms).toISOString();
  }

  private async work(): Promise<SweepResult & { swept: true }> {
    const result = {
      swept: true as const,
      expired: [] as string[],
      abandoned: [] as string[],
      spoolRemoved: [] as string[],
      failed: [] as string[],
    };
    await this.expireEnded(result);
    await this.expireAbandoned(result);
    await this.purgeLeft(result);
    await this.sweepSpool(result);
    return result;
  }

  /** Ended more than JOB_RETENTION_HOURS ago: expired, then purged. */
  private async expireEnded(result: { expired: string[]; failed: string[] }): Promise<void> {
    const now = this.now();
    const cutoff = this.iso(now - this.opts.retentionHours * HOUR_MS);
    for (;;) {
      const rows = await this.db
        .selectFrom("jobs")
        .select(["id"])
        .where("expired_at", "is", null)
        .where("deleted_at", "is", null)
        .where("state", "in", ENDED)
        .where((eb) => eb(eb.fn.coalesce("finished_at", "updated_at"), "<", cutoff))
        .orderBy("finished_at")
        .limit(BATCH)
        .execute();
      if (rows.length === 0) return;
      for (const { id } of rows) {
        const won = await this.db
          .updateTable("jobs")
          .set({ expired_at: this.iso(now) })
          .where("id", "=", id)
          .where("expired_at", "is", null)
          .where("state", "in", ENDED)
          .executeTakeFirst();
        if (Number(won.numUpdatedRows) === 0) continue;
        result.expired.push(id);
        if (!(await this.purge(id))) result.failed.push(id);
      }
      if (rows.length < BATCH) return;
    }
  }

  /** An upload with no activity for JOB_ABANDONED_UPLOAD_HOURS: cancelled, expired, purged. */
  private async expireAbandoned(result: { abandoned: string[]; failed: string[] }): Promise<void> {
    const now = this.now();
    const limitMs = this.opts.abandonedUploadHours * HOUR_MS;
    const cutoff = this.iso(now - limitMs);
    let after = "";
    for (;;) {
      const rows = await this.db
        .selectFrom("jobs")
        .select(["id", "updated_at"])
        .where("expired_at", "is", null)
        .where("deleted_at", "is", null)
        .where("state", "in", UNFINISHED_UPLOAD)
        .where("updated_at", "<", cutoff)
        .where("id", ">", after)
        .orderBy("id")
        .limit(BATCH)
        .execute();
      if (rows.length === 0) return;
      for (const row of rows) {
        after = row.id;
        const active = await this.lastLocalActivity(row.id);
        if (active !== undefined && active >= now - limitMs) continue;
        const at = this.iso(now);
        // conditional on the activity read above: an upload that starts meanwhile wins
        const won = await this.db
          .updateTable("jobs")
          .set({
            state: "cancelled",
            error_code: "upload_abandoned",
            error_detail: `no upload activity since ${row.updated_at}; the job and its partial input expired`,
            finished_at: at,
            expired_at: at,
            updated_at: at,
          })
          .where("id", "=", row.id)
          .where("state", "in", UNFINISHED_UPLOAD)
          .where("expired_at", "is", null)
          .where("updated_at", "=", row.updated_at)
          .executeTakeFirst();
        if (Number(won.numUpdatedRows) === 0) continue;
        result.abandoned.push(row.id);
        if (!(await this.purge(row.id))) result.failed.push(row.id);
      }
      if (rows.length < BATCH) return;
    }
  }

  /** Expired or deleted jobs whose data is not deleted yet (an earlier deletion failed): again. */
  private async purgeLeft(result: { failed: string[] }): Promise<void> {
    const rows = await this.db
      .selectFrom("jobs")
      .select(["id"])
      .where((eb) => eb.or([eb("expired_at", "is not", null), eb("deleted_at", "is not", null)]))
      .where("purged_at", "is", null)
      .limit(BATCH)
      .execute();
    for (const { id } of rows) {
      if (result.failed.includes(id)) continue;
      if (!(await this.purge(id))) result.failed.push(id);
    }
  }

  /** Deletes a job's objects and its spool files; true when everything is gone. */
  private async purge(id: string): Promise<boolean> {
    try {
      await purgeJobData(this.opts, id, this.iso(this.now()));
      return true;
    } catch (err) {
      this.log(
        `job retention: the data of job ${id} could not be deleted (tried again next sweep): ${errorMessage(err)}`,
      );
      return false;
    }
  }

  private async removeSpool(id: string): Promise<void> {
    await removeSpoolFiles(this.opts.spoolDir, id);
  }

  /** The newest modification time (ms) of the job's tus spool file and growing input files here. */
  private async lastLocalActivity(id: string): Promise<number | undefined> {
    let newest: number | undefined;
    const seen = async (file: string) => {
      try {
        const st = await fs.stat(file);
        newest = Math.max(newest ?? 0, st.mtimeMs);
      } catch {
        // absent: no activity there
      }
    };
    if (this.opts.spoolDir) await seen(path.join(this.opts.spoolDir, id));
    if (this.opts.localRoot) {
      const dir = path.join(this.opts.localRoot, "jobs", id);
      let names: string[] = [];
      try {
        names = await fs.readdir(dir);
      } catch {
        names = [];
      }
      for (const n of names) if (n.endsWith(".growing") || n.endsWith(".tmp")) await seen(path.join(dir, n));
    }
    return newest;
  }

  /** Spool entries older than the abandoned-upload limit whose job takes no input any more (or is gone). */
  private async sweepSpool(result: { spoolRemoved: string[] }): Promise<void> {
    const dir = this.opts.spoolDir;
    if (!dir) return;
    let names: string[];
    try {
      names = await fs.readdir(dir);
    } catch {
      return;
    }
    const cutoff = this.now() - this.opts.abandonedUploadHours * HOUR_MS;
    const ids = new Set(names.map((n) => (n.endsWith(".json") ? n.slice(0, -5) : n)));
    for (const id of ids) {
      let mtime = 0;
      for (const n of [id, `${id}.json`]) {
        try {
          mtime = Math.max(mtime, (await fs.stat(path.join(dir, n))).mtimeMs);
        } catch {
          // absent
        }
      }
      if (mtime >= cutoff) continue;
      const job = await this.db
        .selectFrom("jobs")
        .select(["state", "expired_at"])
        .where("id", "=", id)
        .executeTakeFirst();
      if (job && UNFINISHED_UPLOAD.includes(job.state) && !job.expired_at) continue; // step 2 decides
      await this.removeSpool(id);
      result.spoolRemoved.push(id);
    }
  }
}
