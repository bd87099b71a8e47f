import type { Kysely } from "kysely";
import type { Executor } from "../db/executor.js";
import type { KeysetRequest } from "../db/paginate.js";
import type { Database } from "../db/schema.js";
import { Problem } from "../http/problem.js";
import { nextWaiting } from "./free-turns.js";
import { errorMessage, type TaskQueue } from "./queue/types.js";
import { assertNotExpired, ENDED, purgeJobData } from "./retention.js";
import { taskId } from "./runner.js";
import type { JobService, JobView } from "./service.js";
import type { ObjectStore } from "./storage/types.js";
import { jobStore } from "./store.js";
import type { JobRow, JobState } from "./tables.js";
import { periodBounds, periodOf, suiteCancelUsageId, toBigInt, type UsageLedger } from "./usage.js";

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
 * - **cancel** (docs/suite.md "Cancelling a job"): with the job token, while the job waits for or
 *   receives its input, is queued or runs (`CANCELLABLE`). One transaction: the job becomes
 *   `cancelled` by one conditional update (`error_code` `cancelled`, `finished_at` now) and its
 *   unused volume is given back (`returnUnused`); then its waiting segment tasks are removed from
 *   the queue and, for a free job, its caller's next waiting free job gets the turn. A running
 *   segment sees the state within CANCEL_POLL_MS and stops at its next unit (cancel-watch.ts),
 *   wherever it runs; an upload in progress stops taking bytes the same way. Idempotent: a
 *   cancelled job answers as it is; a done or failed job 409 `job_ended`; a deleted or expired one
 *   410. Cancel is not a refund: a paid job's payment stays (refunds are the refunds module's).
 */

/** The states a job can be deleted in. */
export const DELETABLE: JobState[] = ["awaiting_input", ...ENDED];

/** The states a job can be cancelled in. */
export const CANCELLABLE: JobState[] = ["awaiting_input", "uploading", "queued", "running"];

/** The `error_code` of a job its owner cancelled (the retention sweep's abandoned uploads: `upload_abandoned`). */
export const CANCELLED_CODE = "cancelled";

/**
 * The bytes a job counts for once cancelled: what its done segments (of its current upload) coded,
 * measured as its usage is: input bytes (compress, roundtrip), written bytes (decompress, whose
 * usage is its quoted output).
 */
export function codedBytes(job: Pick<JobRow, "op" | "upload_gen">, segments: readonly JobSegmentLike[]): bigint {
  let n = 0n;
  for (const s of segments) {
    if (s.state !== "done" || s.gen !== job.upload_gen) continue;
    n += toBigInt(job.op === "decompress" ? s.out_bytes : s.in_length);
  }
  return n;
}

type JobSegmentLike = {
  state: string;
  gen: string | null;
  in_length: number | string | bigint;
  out_bytes: number | string | bigint | null;
};

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
      /** the segment queue: a cancelled job's waiting tasks are removed from it */
      queue?: Pick<TaskQueue, "cancel"> | undefined;
      /** the usage ledger (the quote service's): a cancelled job's unused volume returns through it */
      usage?: UsageLedger | undefined;
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

  /**
   * Cancels an authorized job (see above) and returns its row after the cancel: `cancelled`, also
   * when it already was. 409 `job_ended` when it is done or failed; 410 when deleted or expired.
   */
  async cancel(job: JobRow): Promise<JobRow> {
    assertNotExpired(job);
    const at = new Date(this.now());
    const iso = at.toISOString();
    const won = await this.db.transaction().execute(async (trx) => {
      const moved = await jobStore.jobTransition(trx, job.id, CANCELLABLE, {
        state: "cancelled",
        error_code: CANCELLED_CODE,
        error_detail: `cancelled by its owner (POST /api/jobs/${job.id}/cancel) at ${iso}`,
        finished_at: iso,
        updated_at: iso,
      });
      if (moved) await this.returnUnused(trx, job.id, at);
      return moved;
    });
    const current = await this.jobs.get(job.id);
    assertNotExpired(current);
    if (current.state !== "cancelled") {
      throw new Problem(
        409,
        "job_ended",
        `Job ${job.id} is ${current.state}: it has ended and cannot be cancelled. Delete it (DELETE /api/jobs/${job.id}) to remove its data.`,
        { job_id: job.id, state: current.state },
      );
    }
    if (won) await this.afterCancel(current);
    return current;
  }

  /**
   * The volume a cancelled job did not use returns to its caller (in the cancel's transaction):
   * one ledger event `suite:<job>:cancel` of `coded − recorded` bytes, so the job's events sum to
   * the bytes its done segments coded (nothing when none ran). For an identity that gives its month
   * back what was recorded and not coded (a correction in the month the input was recorded), and
   * ends the free bytes its quote held before its input was complete; for an anonymous caller the
   * IP's day gets back the quote's free bytes beyond those coded (quotes/store.ts `anonFreeBytes`).
   */
  private async returnUnused(trx: Executor, jobId: string, at: Date): Promise<void> {
    if (!this.opts.usage) return;
    const job = await jobStore.job(trx, jobId);
    if (!job) return;
    const coded = codedBytes(job, await jobStore.segments(trx, jobId));
    const { total, period } = await this.opts.usage.jobTotal(jobId, "suite_bytes", trx);
    // a job recorded in an earlier month gives that month back, not this one
    const when = period && period !== periodOf(at) ? new Date(Date.parse(periodBounds(period).end) - 1) : at;
    await this.opts.usage.record(
      {
        id: suiteCancelUsageId(jobId),
        identityId: job.identity_id,
        meter: "suite_bytes",
        valueBytes: coded - total,
        jobId,
        quoteId: job.quote_id,
        at: when,
      },
      trx,
    );
  }

  /** After the cancel committed: its waiting segment tasks leave the queue; a free job's caller gets its turn back. */
  private async afterCancel(job: JobRow): Promise<void> {
    try {
      // (the queue removes only waiting tasks: running and finished ones stay as they are)
      const ids = (await jobStore.segments(this.db, job.id)).map((s) => taskId(job.id, s.gen, s.idx));
      const removed = (await this.opts.queue?.cancel(ids)) ?? 0;
      if (removed > 0) this.opts.log?.(`job ${job.id} cancelled: ${removed} waiting segment task(s) removed`);
    } catch (err) {
      // not lost: a task of a cancelled job does nothing when it runs (runner.ts `handle`)
      this.opts.log?.(`job ${job.id} cancelled; its waiting tasks not removed: ${errorMessage(err)}`);
    }
    if (job.paid_by !== "free" || !job.caller) return;
    try {
      const next = await nextWaiting(this.db, job.caller);
      if (next) await this.jobs.scheduler?.schedule(next);
    } catch (err) {
      // the runner's periodic pass plans it
      this.opts.log?.(`job ${job.id} cancelled; the caller's next free job not started yet: ${errorMessage(err)}`);
    }
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
