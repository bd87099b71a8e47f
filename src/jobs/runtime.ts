import type { Config } from "../config.js";
import type { Db } from "../db/database.js";
import { openTaskQueue } from "./queue/index.js";
import { JobRunner } from "./runner.js";
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
  /** one line per segment event */
  say?: (line: string) => void;
}

export interface JobRuntime {
  storage: ClosableObjectStore;
  runner: JobRunner;
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
  });
  if (worker.start) await runner.start();
  let closed: Promise<void> | undefined;
  return {
    storage,
    runner,
    close(opts = {}) {
      closed ??= (async () => {
        await runner.stop({ graceMs: opts.graceMs ?? 5_000 });
        await storage.close();
      })();
      return closed;
    },
  };
}
