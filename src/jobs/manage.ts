import type { Kysely } from "kysely";
import type { KeysetRequest } from "../db/paginate.js";
import type { Database } from "../db/schema.js";
import { Problem } from "../http/problem.js";
import { assertNotExpired, ENDED, purgeJobData } from "./retention.js";
import type { JobService, JobView } from "./service.js";
import type { ObjectStore } from "./storage/types.js";
import { jobStore } from "./store.js";
import type { JobRow, JobState } from "./tables.js";

/**
 * What a job's owner does with its jobs beside running them (issue #23 item 2; docs/suite.md
 * "Listing and deleting jobs"):
 *
 * - **list**: a join-work identity's jobs, newest first (created_at desc, id desc), in keyset
 *   pages (src/db/paginate.ts: default 20, at most 100, an opaque cursor), optionally of one state.
 *   Deleted jobs are not listed; expired ones are (their data is gone, their record is not).
 * - **delete**: with the job token. Allowed while the job waits for its input (`awaiting_input`)
 *   or once it has ended (done, failed, cancelled). A job that is receiving its input, queued or
 *   running is refused with 409 `job_running` (cancel it first, or wait for its end): a worker or
 *   an upload would otherwise write into a job whose data was just deleted. The job is marked
 *   deleted by one conditional update (`deleted_at`; every later state change of the job is
 *   refused by the store, so an upload starting at the same moment cannot revive it), then its
 *   input, outputs and tus spool files are deleted as the retention sweep deletes an expired
 *   job's (`purgeJobData`). A deletion that fails (S3 unreachable) is logged and retried by the
 *   next sweep; the job answers 410 `job_deleted` at once either way.
 */

/** The states a job can be deleted in. */
export const DELETABLE: JobState[] = ["awaiting_input", ...ENDED];

export interface JobListPage {
  items: JobView[];
  limit: number;
  next_cursor: string | null;
}

export class JobManager {
  private readonly now: () => number;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly jobs: JobService,
    private readonly opts: {
      store: ObjectStore;
      /** the tus spool of this service (DATA_DIR/spool/tus) */
      spoolDir?: string | undefined;
      now?: () => number;
      log?: (line: string) => void;
    },
  ) {
    this.now = opts.now ?? Date.now;
  }

  async list(identityId: string, page: KeysetRequest & { state?: JobState | undefined }): Promise<JobListPage> {
    const rows = await jobStore.jobsOfIdentity(this.db, identityId, page);
    return { items: rows.items.map((row) => this.jobs.view(row)), limit: rows.limit, next_cursor: rows.next_cursor };
  }

  /** Deletes an authorized job's data and marks it deleted (see above); 409 / 410 otherwise. */
  async delete(job: JobRow): Promise<void> {
    assertNotExpired(job);
    const at = new Date(this.now()).toISOString();
    if (!DELETABLE.includes(job.state) || !(await jobStore.markJobDeleted(this.db, job.id, DELETABLE, at))) {
      // changed meanwhile: deleted (410) or started (409)
      const current = await this.jobs.get(job.id);
      assertNotExpired(current);
      throw new Problem(
        409,
        "job_running",
        `Job ${job.id} is ${current.state}: a job is deleted while it waits for its input or once it has ended. Cancel it, or wait for its end.`,
        { job_id: job.id, state: current.state },
      );
    }
    try {
      await purgeJobData({ db: this.db, store: this.opts.store, spoolDir: this.opts.spoolDir }, job.id, at);
    } catch (err) {
      this.opts.log?.(
        `job ${job.id} is deleted but its data could not be removed yet (the retention sweep retries): ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }
}
