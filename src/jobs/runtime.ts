import type { Config } from "../config.js";
import type { Db } from "../db/database.js";
import { openTaskQueue } from "./queue/index.js";
import { JobRetention, tusSpoolDir } from "./retention.js";
import { JobRunner, type RunnerOptions } from "./runner.js";
import { type ClosableObjectStore, createObjectStore } from "./storage/index.js";

/**
 * The suite-job runtime: the object store, the segment queue and the runner over them. Built by
 * `buildServices` (src/services.ts) for the web service and, alone, by `labphi worker`, which needs
 * nothing else: a worker process loads only this part of the module graph (no payment rails, no
 * HTTP), which keeps its memory down (docs/suite.md, "Where the worker's memory goes").
 */

export interface WorkerOptions {
  /** run segments in this process (the web app follows JOB_WORKER_IN_SERVICE; `labphi worker` always) */
  start: boolean;
  concurrency?: number;
  threads?: number;
  /**
   * Start the codec threads with the worker, before its first segment (a served process and
   * `labphi worker` do; tests and one-off tools leave the threads to the first segment).
   */
  warm?: boolean;
  /** one line per segment event */
  say?: (line: string) => void;
}

export interface JobRuntime {
  storage: ClosableObjectStore;
  runner: JobRunner;
  /** The retention sweep (job data expires), when this process runs it (`sweep: true`). */
  retention: JobRetention | undefined;
  /** Stops the runner (running segments finish within `graceMs` or go back to the queue), then the store. */
  close(opts?: { graceMs?: number }): Promise<void>;
}

export async function buildJobRuntime(options: {
  config: Config;
  db: Db;
  worker: WorkerOptions;
  /** progress lines when `worker.say` is not given */
  info: (line: string) => void;
  /** queue warnings */
  warn: (line: string) => void;
  /**
   * Run the retention sweep here every JOB_SWEEP_INTERVAL_SECONDS (the web service does: it also
   * cleans its own tus spool; on PostgreSQL one sweeper works at a time, whatever runs it).
   */
  sweep?: boolean;
  /**
   * A fresh quote for a refused decompress job's declared output (the quote service's); a process
   * without it (a `labphi worker`) refuses without one.
   */
  requote?: RunnerOptions["requote"];
  /** Other tasks the runner works by name (e.g. the olympiad's `olympiad-score`, src/services.ts). */
  tasks?: RunnerOptions["tasks"];
}): Promise<JobRuntime> {
  const { config, db, worker } = options;
  const storage = createObjectStore(config);
  const runner = new JobRunner({
    db: db.kysely,
    store: storage,
    queue: openTaskQueue(config, db, options.warn),
    segmentBytes: config.jobRunner.segmentBytes,
    attempts: config.jobRunner.segmentAttempts,
    threads: worker.threads ?? config.jobRunner.workerThreads,
    concurrency: worker.concurrency ?? config.jobRunner.workerConcurrency,
    log: worker.say ?? options.info,
    warm: worker.warm ?? false,
    ...(options.requote ? { requote: options.requote } : {}),
    ...(options.tasks ? { tasks: options.tasks } : {}),
  });
  if (worker.start) await runner.start();
  const retention = options.sweep
    ? new JobRetention({
        db: db.kysely,
        kind: db.kind,
        store: storage,
        spoolDir: tusSpoolDir(config.dataDir),
        localRoot: storage.kind === "local" ? config.dataDir : undefined,
        retentionHours: config.jobData.retentionHours,
        abandonedUploadHours: config.jobData.abandonedUploadHours,
        log: options.info,
      })
    : undefined;
  retention?.start(config.jobData.sweepIntervalSeconds * 1000);
  let closed: Promise<void> | undefined;
  return {
    storage,
    runner,
    retention,
    close(opts = {}) {
      closed ??= (async () => {
        await retention?.stop();
        await runner.stop({ graceMs: opts.graceMs ?? 5_000 });
        await storage.close();
      })();
      return closed;
    },
  };
}
