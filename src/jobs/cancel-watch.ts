import type { Kysely } from "kysely";
import type { Database } from "../db/schema.js";
import { errorMessage } from "./queue/types.js";
import { jobStore } from "./store.js";
import type { JobState } from "./tables.js";

/**
 * How work in progress learns that its job was cancelled (`POST /api/jobs/:id/cancel`, issue #23
 * item 2; docs/suite.md "Cancelling a job"). The job's row is the source of truth: the segment
 * that runs may be in another process or on another machine (BullMQ workers), and the upload may
 * be received by another instance than the one that answered the cancel. So a watcher reads the
 * job's state every `intervalMs` (default 250 ms) and aborts its signal once the job is
 * cancelled or deleted (or gone); a running segment checks that signal before each unit and stops
 * there (runner execution.ts), an upload in progress stops taking bytes (transfer.ts, tus.ts).
 * The cost: one indexed read by primary key per watched task per interval.
 */

/** The reason a watcher aborts with: the job was cancelled (or deleted) while this work ran. */
export class JobCancelled extends Error {
  constructor(
    readonly jobId: string,
    readonly state: JobState | "gone",
  ) {
    super(`job ${jobId} was cancelled while this work ran (state ${state})`);
    this.name = "JobCancelled";
  }
}

/** Default period of the state read: 4 reads a second, so work stops well within a second. */
export const CANCEL_POLL_MS = 250;

export interface CancelWatch {
  /** aborted by the parent signal's reason, or by a JobCancelled once the job is cancelled */
  readonly signal: AbortSignal;
  /** true once the job was seen cancelled (or deleted) */
  readonly cancelled: boolean;
  /** stops polling */
  stop(): void;
}

/**
 * Watches job `jobId` until `stop()`: `signal` aborts when `parent` does, or with a
 * `JobCancelled` once the job is `cancelled`, deleted or gone. A failed read is logged and tried
 * again at the next tick (a database hiccup never cancels work).
 */
export function watchCancel(
  db: Kysely<Database>,
  jobId: string,
  opts: { parent?: AbortSignal; intervalMs?: number; log?: (line: string) => void } = {},
): CancelWatch {
  const controller = new AbortController();
  let cancelled = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const onParent = () => controller.abort(opts.parent?.reason);
  if (opts.parent?.aborted) onParent();
  else opts.parent?.addEventListener("abort", onParent, { once: true });
  const tick = async () => {
    if (stopped || controller.signal.aborted) return;
    try {
      const job = await jobStore.job(db, jobId);
      if (!job || job.state === "cancelled" || job.deleted_at) {
        cancelled = true;
        controller.abort(new JobCancelled(jobId, job ? job.state : "gone"));
        return;
      }
    } catch (err) {
      opts.log?.(`job ${jobId}: its state could not be read (cancel watch, tried again): ${errorMessage(err)}`);
    }
    if (!stopped && !controller.signal.aborted) {
      timer = setTimeout(() => void tick(), opts.intervalMs ?? CANCEL_POLL_MS);
      timer.unref();
    }
  };
  timer = setTimeout(() => void tick(), opts.intervalMs ?? CANCEL_POLL_MS);
  timer.unref();
  return {
    signal: controller.signal,
    get cancelled() {
      return cancelled;
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
      opts.parent?.removeEventListener("abort", onParent);
    },
  };
}
