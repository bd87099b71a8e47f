import type { Kysely } from "kysely";
import { nowIso } from "../db/database.js";
import type { Database } from "../db/schema.js";
import { Problem } from "../http/problem.js";
import { jobEvents } from "./events.js";
import { SegmentExecution } from "./execution.js";
import { freeTurnTaken, nextWaiting, waitingCallers } from "./free-turns.js";
import { OutputDigests } from "./output-digest.js";
import { earlySegmentBytes, OutputExceedsQuote, planJob, type Range, refusal } from "./planning.js";
import {
  errorMessage,
  PermanentTaskError,
  type TaskContext,
  type TaskFailure,
  type TaskQueue,
  taskPriority,
} from "./queue/types.js";
import type { QuoteView } from "./quotes/schemas.js";
import type { EarlyCoding, JobScheduler } from "./service.js";
import { jobKeys, type ObjectStore } from "./storage/types.js";
import { jobStore } from "./store.js";
import type { JobRow, JobSegmentRow } from "./tables.js";
import { DEFAULT_CHUNK_BYTES } from "./units.js";

/**
 * Runs suite jobs (issue #10 items 5–6). `schedule(job)` plans a job whose input is complete into
 * segments (compress / roundtrip: every `segmentBytes` of input; decompress: whole stream records
 * up to about `segmentBytes`), writes their `job_segments` rows and enqueues one task per segment
 * (id `<job>:<upload>:<idx>`, so planning twice enqueues nothing new; `early` queues whole segments
 * while the input still arrives). A task codes its segment into `jobs/<job>/out/<idx>`
 * (execution.ts; the cutting into segments and units: planning.ts, units.ts). The job's output is the
 * concatenation of the segments' outputs: for compress and roundtrip one codec stream that
 * `labphi decompress` (decompressStream) restores. Every state change is a conditional update:
 * a redelivered task whose segment is done does nothing, the job is finalized once (`done`, with
 * the SHA-256 of the whole output), and a segment that fails its last attempt fails the job with
 * `error_code` / `error_detail`.
 * The queue's other tasks (e.g. `olympiad-score`) are dispatched by name to the routes given in
 * `RunnerOptions.tasks` (`handle`); an unknown name fails at once.
 */

export const SEGMENT_TASK = "segment";

export interface RunnerOptions {
  db: Kysely<Database>;
  store: ObjectStore;
  queue: TaskQueue;
  /** input bytes per segment (JOB_SEGMENT_BYTES) */
  segmentBytes: number;
  /** starts per segment (JOB_SEGMENT_ATTEMPTS) */
  attempts: number;
  /** piscina threads (JOB_WORKER_THREADS) */
  threads: number;
  /** segments at once in this process (JOB_WORKER_CONCURRENCY) */
  concurrency: number;
  /** first retry delay (default 1 s, doubling) */
  backoffMs?: number;
  /** input bytes per stream record (default min(4 MiB, segmentBytes)) */
  chunkBytes?: number;
  /** start the codec threads with the worker rather than with its first segment (runtime.ts `warm`) */
  warm?: boolean;
  /** progress and problems, one line each */
  log?: (line: string) => void;
  /** test hook: runs before each segment attempt; a throw fails that attempt */
  beforeSegment?: (jobId: string, idx: number, attempt: number) => void | Promise<void>;
  /** A fresh quote for a refused decompress job's declared output (the quote service's). */
  requote?: (job: JobRow, bytes: number) => Promise<QuoteView>;
  /**
   * Other tasks this process works from the same queue, by task name (e.g. `olympiad-score`, wired
   * in src/services.ts), so the runner imports none of their modules. `segment` is always the runner's.
   */
  tasks?: Readonly<Record<string, TaskRoute>>;
}

/** How the runner works one kind of task: `run` per attempt, `failed` once it failed for good. */
export interface TaskRoute {
  run(payload: unknown, ctx: TaskContext): Promise<void>;
  failed?(failure: TaskFailure): Promise<void> | void;
}

interface SegmentPayload {
  job: string;
  idx: number;
  /** the upload the segment was planned for (absent: planned before generations) */
  gen?: string | null;
}

/** The queue's id of a segment's task: once per job, upload and segment. */
export const taskId = (jobId: string, gen: string | null, idx: number) =>
  gen ? `${jobId}:${gen}:${idx}` : `${jobId}:${idx}`;

const ACTIVE: JobRow["state"][] = ["queued", "running"];
/** How often a worker looks for free jobs whose caller's turn is free but that nobody woke. */
const WAKE_INTERVAL_MS = 60_000;
/** states in which a job's segments may run: its input is complete, or arriving (coded early) */
const RUNNABLE: JobRow["state"][] = ["uploading", ...ACTIVE];

export class JobRunner implements JobScheduler {
  readonly queue: TaskQueue;
  private readonly db: Kysely<Database>;
  private readonly store: ObjectStore;
  private readonly log: (line: string) => void;
  private readonly execution: SegmentExecution;
  /** the output's SHA-256, kept as this process's segments finish in order (output-digest.ts) */
  private readonly digests: OutputDigests;
  private working = false;
  private wakeTimer: NodeJS.Timeout | undefined;
  /**
   * A fresh quote for a refused decompress job's declared output (same product, data class, level,
   * identity), from the quote service; a process without it (a `labphi worker`) refuses without one.
   */
  private readonly requote: RunnerOptions["requote"];
  /** The dispatch table: task name → route (the runner's segments, and the injected ones). */
  private readonly routes: ReadonlyMap<string, TaskRoute>;

  constructor(private readonly opts: RunnerOptions) {
    this.db = opts.db;
    this.store = opts.store;
    this.queue = opts.queue;
    this.requote = opts.requote;
    this.log = opts.log ?? (() => {});
    this.execution = new SegmentExecution({ ...opts, log: this.log });
    this.digests = new OutputDigests(this.store, 256, this.log);
    this.routes = new Map<string, TaskRoute>([
      ...Object.entries(opts.tasks ?? {}),
      [SEGMENT_TASK, { run: (payload, ctx) => this.handleSegment(payload, ctx), failed: (f) => this.segmentFailed(f) }],
    ]);
  }

  /** Starts this process's segment workers, then re-plans jobs left queued or running. */
  async start(): Promise<void> {
    await this.queue.start();
    await this.queue.work((name, payload, ctx) => this.handle(name, payload, ctx), {
      concurrency: this.opts.concurrency,
      onFailed: (f) => this.routes.get(f.name)?.failed?.(f),
    });
    this.working = true;
    // the codec threads load while the worker waits for its first segment
    if (this.opts.warm)
      void this.execution.warm().catch((err) => this.log(`codec threads not started yet: ${errorMessage(err)}`));
    void this.recover().catch((err) => this.log(`recovery failed: ${errorMessage(err)}`));
    this.wakeTimer = setInterval(() => {
      void this.wakeWaiting().catch((err) => this.log(`waiting free jobs not started: ${errorMessage(err)}`));
    }, WAKE_INTERVAL_MS);
    this.wakeTimer.unref();
  }

  /** Stops taking segments; running ones get `graceMs` to finish, then go back to the queue. */
  async stop(opts: { graceMs?: number; abandon?: boolean } = {}): Promise<void> {
    clearInterval(this.wakeTimer);
    await this.queue.stop(opts);
    this.working = false;
    await this.execution.destroy();
  }

  /** Jobs left queued or running (a crash between planning and enqueueing, a lost finalize): again. */
  async recover(): Promise<void> {
    const jobs = await jobStore.jobsIn(this.db, ACTIVE);
    for (const job of jobs) {
      try {
        await this.schedule(job);
      } catch (err) {
        // a refused job (output_exceeds_quote) is failed by schedule itself; the others go on
        if (!(err instanceof Problem)) throw err;
      }
    }
  }

  // ---------------------------------------------------------------- planning

  async schedule(job: JobRow): Promise<void> {
    const current = await jobStore.job(this.db, job.id);
    if (!current || !ACTIVE.includes(current.state)) return;
    // a free job waits while another free job of its caller has the turn (free-turns.ts)
    if (current.segments_total === 0 && (await freeTurnTaken(this.db, current))) {
      this.log(`job ${job.id}: waits for the free job of its caller that is running`);
      return;
    }
    const gen = current.upload_gen;
    let segments = await jobStore.segments(this.db, job.id);
    if (current.segments_total === 0) {
      let ranges: Range[];
      try {
        // segments coded while the input arrived were cut at their size: the rest follow it (any
        // of them: an input sent in parts queues its segments in the order their ranges land)
        const early = segments.find((s) => s.gen === gen);
        ranges = await planJob(this.store, current, early ? Number(early.in_length) : this.opts.segmentBytes);
      } catch (err) {
        if (err instanceof OutputExceedsQuote) return this.refuse(current, err);
        if (err instanceof PermanentTaskError) {
          await this.failJob(job.id, err.code, `planning the segments: ${err.message}`, 0);
          return;
        }
        throw err;
      }
      const at = nowIso();
      await this.db.transaction().execute(async (trx) => {
        // rows of an earlier upload (queued early, then that upload failed) make way
        await jobStore.deleteSegmentsNotOf(trx, job.id, gen);
        await jobStore.insertSegments(
          trx,
          ranges.map((r, idx) => pendingSegment(job.id, gen, idx, r, at)),
        );
        await jobStore.setSegmentsTotal(trx, job.id, ranges.length, at);
      });
      segments = await jobStore.segments(this.db, job.id);
      this.log(`job ${job.id}: ${current.op} planned in ${segments.length} segment(s)`);
    }
    const failed = segments.find((s) => s.state === "failed" && s.gen === gen);
    if (failed) {
      // a segment coded while the input arrived failed its last attempt
      await this.failJob(job.id, "segment_failed", `segment ${failed.idx + 1} failed: ${failed.error ?? "?"}`, 0);
      return;
    }
    for (const s of segments) {
      if (s.state === "done" || s.gen !== gen) continue;
      await this.enqueue(job.id, gen, s.idx, taskPriority(current.paid_by));
    }
    await this.maybeFinalize(job.id);
  }

  /** `priority`: paid jobs' segments before free ones (taskPriority of jobs.paid_by) */
  private async enqueue(jobId: string, gen: string | null, idx: number, priority: number): Promise<void> {
    await this.queue.enqueue(SEGMENT_TASK, { job: jobId, idx, gen } satisfies SegmentPayload, {
      id: taskId(jobId, gen, idx),
      attempts: this.opts.attempts,
      backoffMs: this.opts.backoffMs,
      priority,
    });
  }

  /**
   * Coding while the input arrives (compress and roundtrip, on a store that reads growing
   * objects): the receiver of upload `gen` calls `written(bytes)` as its bytes reach the store, and
   * each whole segment is planned and queued at once, so workers code it while the rest arrives
   * (segments of threads × 2 units, `earlySegmentBytes`: the threads start after the first few units);
   * `schedule` plans the rest when the input is complete. Undefined when this job cannot be coded early.
   */
  early(job: JobRow, gen: string): EarlyCoding | undefined {
    if (job.op === "decompress" || !this.store.readsGrowing) return undefined;
    const { segmentBytes, chunkBytes, threads } = this.opts;
    const size = earlySegmentBytes(segmentBytes, chunkBytes ?? Math.min(DEFAULT_CHUNK_BYTES, segmentBytes), threads);
    let planned = 0;
    /** segments queued out of order (an upload in parts) */
    const queued = new Set<number>();
    let chain = Promise.resolve();
    const plan = (idx: number) => {
      chain = chain
        .then(() => this.planEarly(job.id, gen, idx, size))
        .catch((err) => {
          // not fatal: `schedule` plans every segment once the input is complete
          this.log(`job ${job.id}: early segment ${idx + 1} not queued: ${errorMessage(err)}`);
        });
    };
    return {
      written: (bytes) => {
        while ((planned + 1) * size <= bytes) plan(planned++);
      },
      landed: (ranges) => {
        // each whole segment inside one landed range (the ranges are merged: none touch)
        for (const r of ranges) {
          for (let idx = Math.ceil(r.start / size); (idx + 1) * size <= r.end; idx++) {
            if (queued.has(idx)) continue;
            queued.add(idx);
            plan(idx);
          }
        }
      },
      settled: () => chain,
    };
  }

  private async planEarly(jobId: string, gen: string, idx: number, size: number): Promise<void> {
    const job = await jobStore.job(this.db, jobId);
    if (job?.state !== "uploading" || job.upload_gen !== gen) return; // sent again meanwhile
    if (await freeTurnTaken(this.db, job)) return; // the caller's other free job runs first
    const range = { offset: idx * size, length: size };
    if ((await jobStore.insertSegments(this.db, [pendingSegment(jobId, gen, idx, range, nowIso())])) === 0) return;
    await this.enqueue(jobId, gen, idx, taskPriority(job.paid_by));
  }

  /**
   * A decompress job whose records declare more output than its quote: a fresh quote for the
   * declared bytes (same request and identity, when a quote service is wired), the job failed with
   * `output_exceeds_quote` (nothing was planned or decoded), its input deleted, and 409 for the
   * upload that completed it (PUT, or the tus PATCH) with the declared size and the fresh quote.
   */
  private async refuse(job: JobRow, err: OutputExceedsQuote): Promise<never> {
    let quote: QuoteView | null = null;
    let why = "";
    try {
      quote = (await this.requote?.(job, err.declared)) ?? null;
    } catch (e) {
      // e.g. more than the 10^15 bytes a job may be quoted for
      why = ` (no quote: ${errorMessage(e)})`;
    }
    const { next, problem } = refusal(job, err, quote, why);
    await this.failJob(job.id, err.code, `${err.message}; ${next}`, 0);
    await this.store.deletePrefix(jobKeys.input(job.id)).catch((e) => {
      this.log(`job ${job.id}: its refused input was not deleted: ${errorMessage(e)}`);
    });
    throw problem;
  }

  // ---------------------------------------------------------------- one segment

  /** Runs one task by its name (the dispatch table); an unknown name fails it at once. */
  async handle(name: string, payload: unknown, ctx: TaskContext): Promise<void> {
    const route = this.routes.get(name);
    if (!route) throw new PermanentTaskError(`unknown task ${name}`, "bug");
    await route.run(payload, ctx);
  }

  private async handleSegment(payload: unknown, ctx: TaskContext): Promise<void> {
    const { job: jobId, idx } = payload as SegmentPayload;
    const gen = (payload as SegmentPayload).gen ?? null;
    const job = await jobStore.job(this.db, jobId);
    // a job failed, cancelled or done meanwhile, or sent again since this task was queued: nothing to do
    if (!job || !RUNNABLE.includes(job.state) || job.upload_gen !== gen) return;
    const seg = await jobStore.segment(this.db, jobId, idx);
    if (!seg || seg.gen !== gen) {
      if (job.state === "uploading") return; // a new upload began meanwhile
      throw new PermanentTaskError(`job ${jobId} has no segment ${idx}`, "bug");
    }
    if (seg.state === "done") {
      await this.maybeFinalize(jobId);
      return;
    }
    const out = await this.execution.run(job, seg, ctx);
    if (out) {
      this.digests.coded(jobId, gen, idx, out.bytes);
      jobEvents.changed(jobId);
    }
    await this.maybeFinalize(jobId);
  }

  // ---------------------------------------------------------------- job end

  /** All segments done: the job is done, once (conditional), with the hash of the whole output. */
  async maybeFinalize(jobId: string): Promise<void> {
    const job = await jobStore.job(this.db, jobId);
    if (!job || !ACTIVE.includes(job.state) || job.segments_done < job.segments_total) return;
    const segments = await jobStore.segments(this.db, jobId);
    if (segments.length !== job.segments_total || segments.some((s) => s.state !== "done")) return;
    const recorded = segments.reduce((a, s) => a + Number(s.out_bytes ?? 0), 0);
    if (job.op === "decompress" && recorded > Number(job.bytes_quoted)) {
      // each segment stays within the quote and each record within its declared size: a bug or
      // a changed input got here; the job never delivers more than was quoted
      await this.failJob(
        jobId,
        "codec_corrupt",
        `the segments decoded ${recorded} bytes, more than the ${Number(job.bytes_quoted)} quoted`,
        0,
      );
      return;
    }
    // the running hash of the segments coded here in order, carried on over the rest (output-digest.ts)
    const { bytes, sha256 } = await this.digests.digest(jobId, segments);
    const at = nowIso();
    const won = await jobStore.jobTransition(this.db, jobId, ACTIVE, {
      state: "done",
      bytes_out: bytes,
      output_sha256: sha256,
      started_at: job.started_at ?? at,
      finished_at: at,
    });
    if (won) {
      jobEvents.changed(jobId);
      this.log(
        `job ${jobId} done: ${job.op} ${Number(job.bytes_in)} → ${bytes} bytes in ${segments.length} segment(s)`,
      );
      await this.wakeNext(job);
    }
  }

  /** A free job ended: the next waiting free job of its caller gets the turn (free-turns.ts). */
  private async wakeNext(job: Pick<JobRow, "id" | "paid_by" | "caller">): Promise<void> {
    if (job.paid_by !== "free" || !job.caller) return;
    try {
      const next = await nextWaiting(this.db, job.caller);
      if (next) await this.schedule(next);
    } catch (err) {
      // not lost: the periodic pass (wakeWaiting) plans it
      this.log(`job ${job.id}: the next free job of its caller not started yet: ${errorMessage(err)}`);
    }
  }

  /** Plans every free job left waiting although its caller's turn is free (a lost wake-up). */
  async wakeWaiting(): Promise<void> {
    for (const caller of await waitingCallers(this.db)) {
      const next = await nextWaiting(this.db, caller);
      if (next) await this.schedule(next);
    }
  }

  /** The queue's final failure of a segment: the segment and its job fail (once). */
  private async segmentFailed(f: TaskFailure): Promise<void> {
    const { job: jobId, idx } = f.payload as SegmentPayload;
    const gen = (f.payload as SegmentPayload).gen ?? null;
    const job = await jobStore.job(this.db, jobId);
    // the task of an upload that was sent again: its failure is not the new upload's
    if (!job || job.upload_gen !== gen) return;
    await jobStore.segmentTransition(
      this.db,
      jobId,
      idx,
      "not done",
      { state: "failed", error: f.reason, attempts: f.attempts, updated_at: nowIso() },
      gen,
    );
    // while the input still arrives the job is failed when it is complete (`schedule`)
    if (job.state === "uploading") return;
    const detail = `segment ${idx + 1} failed after ${f.attempts} attempt(s): ${f.reason}`;
    await this.failJob(jobId, f.code && f.code !== "permanent" ? f.code : "segment_failed", detail, f.attempts);
  }

  private async failJob(jobId: string, code: string, detail: string, attempts: number): Promise<void> {
    const at = nowIso();
    const won = await jobStore.jobTransition(this.db, jobId, ACTIVE, {
      state: "failed",
      error_code: code,
      error_detail: detail.slice(0, 2000),
      finished_at: at,
    });
    this.digests.forget(jobId);
    if (won) {
      jobEvents.changed(jobId);
      this.log(`job ${jobId} failed (${code}): ${detail}`);
      const ended = await jobStore.job(this.db, jobId);
      if (ended) await this.wakeNext(ended);
    }
    if (attempts > 0) await jobStore.raiseJobAttempts(this.db, jobId, attempts);
  }

  get isWorking(): boolean {
    return this.working;
  }
}

/** A new segment row, pending. */
function pendingSegment(jobId: string, gen: string | null, idx: number, r: Range, at: string): JobSegmentRow {
  return {
    job_id: jobId,
    idx,
    state: "pending",
    in_offset: r.offset,
    in_length: r.length,
    out_bytes: null,
    out_sha256: null,
    attempts: 0,
    worker: null,
    error: null,
    updated_at: at,
    gen,
  };
}
