import { createHash } from "node:crypto";
import { once } from "node:events";
import { PassThrough } from "node:stream";
import v8 from "node:v8";
import vm from "node:vm";
import { type Kysely, sql } from "kysely";
import { Piscina } from "piscina";
import type { Level } from "../codec/index.js";
import { nowIso } from "../db/database.js";
import type { Database } from "../db/schema.js";
import { Problem } from "../http/problem.js";
import { bundleModule } from "../threads/bundle.mjs";
import { freeTurnTaken, nextWaiting, waitingCallers } from "./free-turns.js";
import {
  JOB_MAX_RECORD_OUTPUT_BYTES,
  OutputExceedsQuote,
  planFixedSegments,
  planRecordSegments,
  type Range,
  recordDeclared,
} from "./planning.js";
import {
  errorMessage,
  PermanentTaskError,
  type TaskContext,
  type TaskFailure,
  type TaskQueue,
  taskPriority,
} from "./queue/types.js";
import type { QuoteView } from "./quote-schemas.js";
import type { SegmentOp, UnitReply, UnitTask } from "./segment-job.js";
import type { EarlyCoding, JobScheduler } from "./service.js";
import { jobKeys, type ObjectStore } from "./storage/types.js";
import { jobStore } from "./store.js";
import type { JobRow, JobSegmentRow } from "./tables.js";
import { DEFAULT_CHUNK_BYTES, fixedUnits, readUnits, recordUnits, UnitBuffers } from "./units.js";

/**
 * Runs suite jobs (issue #10 items 5–6). `schedule(job)` plans a job whose input is complete into
 * segments (compress / roundtrip: every `segmentBytes` of input; decompress: whole stream records
 * up to about `segmentBytes`), writes their `job_segments` rows and enqueues one task per segment
 * (id `<job>:<upload>:<idx>`, so planning twice enqueues nothing new; `early` queues whole segments
 * while the input still arrives). A task reads its input range from
 * the object store, cuts it into units (a `chunkBytes` chunk, or one record), codes them on a
 * piscina pool (about `threads × 2` units in flight in all; input buffers transferred in, outputs moved
 * back with the input's buffer, which the next unit is read into: see `UnitBuffers`) and streams
 * the outputs in order into `jobs/<job>/out/<idx>`. The job's output is the
 * concatenation of the segments' outputs: for compress and roundtrip one codec stream that
 * `labphi decompress` (decompressStream) restores. Every state change is a conditional update:
 * a redelivered task whose segment is done does nothing, the job is finalized once (`done`, with
 * the SHA-256 of the whole output), and a segment that fails its last attempt fails the job with
 * `error_code` / `error_detail`.
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
  /** progress and problems, one line each */
  log?: (line: string) => void;
  /** test hook: runs before each segment attempt; a throw fails that attempt */
  beforeSegment?: (jobId: string, idx: number, attempt: number) => void | Promise<void>;
  /** A fresh quote for a refused decompress job's declared output (the quote service's). */
  requote?: (job: JobRow, bytes: number) => Promise<QuoteView>;
}

interface SegmentPayload {
  job: string;
  idx: number;
  /** the upload the segment was planned for (absent: planned before generations) */
  gen?: string | null;
}

/** The queue's id of a segment's task: once per job, upload and segment. */
const taskId = (jobId: string, gen: string | null, idx: number) => (gen ? `${jobId}:${gen}:${idx}` : `${jobId}:${idx}`);

const ACTIVE: JobRow["state"][] = ["queued", "running"];
/** How often a worker looks for free jobs whose caller's turn is free but that nobody woke. */
const WAKE_INTERVAL_MS = 60_000;
/** states in which a job's segments may run: its input is complete, or arriving (coded early) */
const RUNNABLE: JobRow["state"][] = ["uploading", ...ACTIVE];

/**
 * A minor collection (scavenge) of this thread's heap, once `exposeGc` ran. A decompress segment
 * receives 4 MiB outputs from the threads and writes them; once written they are dead, but a
 * thread whose JavaScript allocates little collects rarely and V8 frees dead ArrayBuffers only at a
 * collection (after about 64 MB of them): measured, 1 GB decoded from a 4.5 KB stream peaked at
 * 316 MB in the worker. A scavenge every few records frees them (about a millisecond each).
 */
let minorGc: (() => void) | undefined;
let gcExposed = false;

/** `--expose-gc` for the codec threads started after this (they scavenge after each decoded record) and this thread. */
function exposeGc(): void {
  if (gcExposed) return;
  gcExposed = true;
  try {
    v8.setFlagsFromString("--expose-gc");
    const gc = vm.runInNewContext("gc") as ((options?: { type: "minor" | "major" }) => void) | undefined;
    if (typeof gc === "function") minorGc = () => gc({ type: "minor" });
  } catch {
    // not available: collections stay V8's own
  }
}

export class JobRunner implements JobScheduler {
  readonly queue: TaskQueue;
  private readonly db: Kysely<Database>;
  private readonly store: ObjectStore;
  private readonly chunkBytes: number;
  /** units on the pool at once, per segment */
  private readonly inflight: number;
  private readonly buffers: UnitBuffers;
  private readonly log: (line: string) => void;
  private piscina: Piscina | undefined;
  private working = false;
  private wakeTimer: NodeJS.Timeout | undefined;
  /**
   * A fresh quote for a refused decompress job's declared output (same product, data class, level,
   * identity), from the quote service; a process without it (a `labphi worker`) refuses without one.
   */
  private readonly requote: RunnerOptions["requote"];

  constructor(private readonly opts: RunnerOptions) {
    this.db = opts.db;
    this.store = opts.store;
    this.queue = opts.queue;
    this.requote = opts.requote;
    this.chunkBytes = opts.chunkBytes ?? Math.min(DEFAULT_CHUNK_BYTES, opts.segmentBytes);
    // threads × 2 units on the pool in all, shared by the segments at once: a second segment keeps
    // the threads busy while the first one's last units finish (and its output is written)
    this.inflight = Math.max(1, Math.ceil((Math.max(1, opts.threads) * 2) / Math.max(1, opts.concurrency)));
    // a segment holds at most inflight + 1 unit buffers (those on the pool, the one being filled)
    this.buffers = new UnitBuffers(this.chunkBytes, (this.inflight + 1) * Math.max(1, opts.concurrency));
    this.log = opts.log ?? (() => {});
  }

  /** Starts this process's segment workers, then re-plans jobs left queued or running. */
  async start(): Promise<void> {
    await this.queue.start();
    await this.queue.work((name, payload, ctx) => this.handle(name, payload, ctx), {
      concurrency: this.opts.concurrency,
      onFailed: (f) => this.segmentFailed(f),
    });
    this.working = true;
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
    const pool = this.piscina;
    this.piscina = undefined;
    await pool?.destroy();
  }

  /** Jobs left queued or running (a crash between planning and enqueueing, a lost finalize): again. */
  async recover(): Promise<void> {
    const jobs = await this.db.selectFrom("jobs").selectAll().where("state", "in", ACTIVE).execute();
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
        // segments coded while the input arrived were cut at their size: the rest follow it
        const early = segments.find((s) => s.gen === gen && s.idx === 0);
        ranges = await this.plan(current, early ? Number(early.in_length) : this.opts.segmentBytes);
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
        await trx
          .deleteFrom("job_segments")
          .where("job_id", "=", job.id)
          .where((eb) =>
            gen === null ? eb("gen", "is not", null) : eb.or([eb("gen", "is", null), eb("gen", "!=", gen)]),
          )
          .execute();
        if (ranges.length > 0) {
          await trx
            .insertInto("job_segments")
            .values(
              ranges.map((r, idx) => ({
                job_id: job.id,
                idx,
                state: "pending" as const,
                in_offset: r.offset,
                in_length: r.length,
                out_bytes: null,
                out_sha256: null,
                attempts: 0,
                worker: null,
                error: null,
                updated_at: at,
                gen,
              })),
            )
            .onConflict((oc) => oc.columns(["job_id", "idx"]).doNothing())
            .execute();
        }
        await trx
          .updateTable("jobs")
          .set({ segments_total: ranges.length, updated_at: at })
          .where("id", "=", job.id)
          .where("segments_total", "=", 0)
          .execute();
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
   * each whole segment is planned and queued at once, so workers code it while the rest arrives;
   * `schedule` plans the rest when the input is complete. Undefined when this job cannot be coded early.
   */
  early(job: JobRow, gen: string): EarlyCoding | undefined {
    if (job.op === "decompress" || !this.store.readsGrowing) return undefined;
    const size = this.opts.segmentBytes;
    let planned = 0;
    let chain = Promise.resolve();
    return {
      written: (bytes) => {
        while ((planned + 1) * size <= bytes) {
          const idx = planned++;
          chain = chain
            .then(() => this.planEarly(job.id, gen, idx, size))
            .catch((err) => {
              // not fatal: `schedule` plans every segment once the input is complete
              this.log(`job ${job.id}: early segment ${idx + 1} not queued: ${errorMessage(err)}`);
            });
        }
      },
      settled: () => chain,
    };
  }

  private async planEarly(jobId: string, gen: string, idx: number, size: number): Promise<void> {
    const job = await jobStore.job(this.db, jobId);
    if (job?.state !== "uploading" || job.upload_gen !== gen) return; // sent again meanwhile
    if (await freeTurnTaken(this.db, job)) return; // the caller's other free job runs first
    const inserted = await this.db
      .insertInto("job_segments")
      .values({
        job_id: jobId,
        idx,
        state: "pending",
        in_offset: idx * size,
        in_length: size,
        out_bytes: null,
        out_sha256: null,
        attempts: 0,
        worker: null,
        error: null,
        updated_at: nowIso(),
        gen,
      })
      .onConflict((oc) => oc.columns(["job_id", "idx"]).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) return;
    await this.enqueue(jobId, gen, idx, taskPriority(job.paid_by));
  }

  private async plan(job: JobRow, segmentBytes: number): Promise<Range[]> {
    const key = jobKeys.input(job.id);
    const size = await this.store.size(key);
    if (size === undefined) throw new PermanentTaskError(`the job's input (${key}) is missing`, "input_missing");
    if (job.op !== "decompress") return planFixedSegments(size, segmentBytes);
    if (size === 0) return [];
    // every record's declared output is read before anything is decoded: the quote bounds the sum
    const { ranges, declared } = await planRecordSegments(
      (await this.store.get(key)) as AsyncIterable<Buffer>,
      segmentBytes,
    );
    const quoted = Number(job.bytes_quoted);
    if (declared > quoted) throw new OutputExceedsQuote(declared, quoted);
    return ranges;
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
    const next = quote
      ? `quote ${quote.quote_id} covers ${err.declared} bytes (${quote.free ? "free" : `${quote.amount_usd} USD`}; buy it with POST /api/x402-suite { quote_id, … })`
      : `ask for a quote of ${err.declared} bytes (POST /api/ppp-quote)${why}`;
    await this.failJob(job.id, err.code, `${err.message}; ${next}`, 0);
    await this.store.deletePrefix(jobKeys.input(job.id)).catch((e) => {
      this.log(`job ${job.id}: its refused input was not deleted: ${errorMessage(e)}`);
    });
    throw new Problem(
      409,
      "output_exceeds_quote",
      `The input's stream records declare ${err.declared} bytes of output, more than the ${err.quoted} bytes this job was quoted for (for decompress, the quoted bytes are the decompressed size). Nothing was decoded and the job is failed; ${next}.`,
      { declared_bytes: err.declared, bytes_quoted: err.quoted, job_id: job.id, quote },
    );
  }

  // ---------------------------------------------------------------- one segment

  async handle(name: string, payload: unknown, ctx: TaskContext): Promise<void> {
    if (name !== SEGMENT_TASK) throw new PermanentTaskError(`unknown task ${name}`, "bug");
    const { job: jobId, idx } = payload as SegmentPayload;
    const gen = (payload as SegmentPayload).gen ?? null;
    const job = await jobStore.job(this.db, jobId);
    // a job failed, cancelled or done meanwhile, or sent again since this task was queued: nothing to do
    if (!job || !RUNNABLE.includes(job.state) || job.upload_gen !== gen) return;
    const seg = await this.db
      .selectFrom("job_segments")
      .selectAll()
      .where("job_id", "=", jobId)
      .where("idx", "=", idx)
      .executeTakeFirst();
    if (!seg || seg.gen !== gen) {
      if (job.state === "uploading") return; // a new upload began meanwhile
      throw new PermanentTaskError(`job ${jobId} has no segment ${idx}`, "bug");
    }
    if (seg.state === "done") {
      await this.maybeFinalize(jobId);
      return;
    }
    const at = nowIso();
    await jobStore.jobTransition(this.db, jobId, ["queued"], { state: "running", started_at: at });
    await this.db
      .updateTable("jobs")
      .set({ attempts: sql<number>`case when attempts < ${ctx.attempt} then ${ctx.attempt} else attempts end` })
      .where("id", "=", jobId)
      .execute();
    await this.db
      .updateTable("job_segments")
      .set({ state: "running", attempts: ctx.attempt, worker: ctx.workerId, updated_at: at })
      .where("job_id", "=", jobId)
      .where("idx", "=", idx)
      .where("state", "in", ["pending", "running"])
      .execute();
    const t0 = Date.now();
    this.log(
      `job ${jobId} segment ${idx + 1}/${job.segments_total} started (attempt ${ctx.attempt} of ${ctx.maxAttempts})`,
    );
    try {
      await this.opts.beforeSegment?.(jobId, idx, ctx.attempt);
      const out = await this.codeSegment(job, seg, ctx.signal);
      const total = await this.segmentDone(jobId, idx, gen, out);
      if (total !== undefined) {
        this.log(
          `job ${jobId} segment ${idx + 1}/${job.segments_total} done: ${Number(seg.in_length)} → ${out.bytes} bytes ` +
            `in ${((Date.now() - t0) / 1000).toFixed(1)} s (attempt ${ctx.attempt}; ${total}/${job.segments_total} done)`,
        );
      }
    } catch (err) {
      this.log(
        `job ${jobId} segment ${idx + 1}: attempt ${ctx.attempt} of ${ctx.maxAttempts} failed: ${errorMessage(err)}`,
      );
      await this.db
        .updateTable("job_segments")
        .set({ error: errorMessage(err), updated_at: nowIso() })
        .where("job_id", "=", jobId)
        .where("idx", "=", idx)
        .where("state", "!=", "done")
        .execute()
        .catch(() => {});
      throw err;
    }
    await this.maybeFinalize(jobId);
  }

  /** Marks the segment done and counts it, once (one transaction); the new count, or undefined if already done. */
  private async segmentDone(jobId: string, idx: number, gen: string | null, out: { bytes: number; sha256: string }) {
    return this.db.transaction().execute(async (trx) => {
      const r = await trx
        .updateTable("job_segments")
        .set({ state: "done", out_bytes: out.bytes, out_sha256: out.sha256, error: null, updated_at: nowIso() })
        .where("job_id", "=", jobId)
        .where("idx", "=", idx)
        .where("state", "!=", "done")
        .where((eb) => (gen === null ? eb("gen", "is", null) : eb("gen", "=", gen)))
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) return undefined;
      await trx
        .updateTable("jobs")
        .set({ segments_done: sql<number>`segments_done + 1`, updated_at: nowIso() })
        .where("id", "=", jobId)
        .execute();
      const j = await trx.selectFrom("jobs").select("segments_done").where("id", "=", jobId).executeTakeFirst();
      return j?.segments_done ?? 0;
    });
  }

  /** The codec threads: one unit at a time each (the codec's work runs in the calling thread). */
  private async pool(): Promise<Piscina> {
    if (this.piscina) return this.piscina;
    // the threads import the codec bundled into one JavaScript file (less memory than tsx per thread)
    const module = await bundleModule(new URL("./segment-job.ts", import.meta.url));
    exposeGc();
    this.piscina ??= new Piscina({
      filename: new URL("./segment-worker.mjs", import.meta.url).href,
      minThreads: this.opts.threads,
      maxThreads: this.opts.threads,
      idleTimeout: 60_000,
      workerData: { module },
    });
    return this.piscina;
  }

  /** Codes one segment into its output object: units on the pool, at most threads × 2 in flight. */
  private async codeSegment(
    job: JobRow,
    seg: JobSegmentRow,
    signal: AbortSignal,
  ): Promise<{ bytes: number; sha256: string }> {
    const start = Number(seg.in_offset);
    const length = Number(seg.in_length);
    const op = job.op as SegmentOp;
    // while the input arrives, its bytes so far (a segment is queued once its bytes are there)
    const growing = job.state === "uploading" && seg.gen ? { growing: seg.gen } : {};
    const key = jobKeys.input(job.id);
    // fixed units straight from the file where the store reads at positions (no chunks to copy)
    const reader = length > 0 && op !== "decompress" ? await this.store.openReader?.(key, growing) : undefined;
    const input = length > 0 && !reader ? await this.store.get(key, { start, end: start + length - 1 }, growing) : null;
    const out = new PassThrough();
    // destroyed with the segment's error before the store attached to it (a first record that
    // fails at once): the error is the put's rejection and this task's, never an uncaught event
    out.on("error", () => {});
    const put = this.store.put(jobKeys.segmentOut(job.id, seg.idx, seg.gen), out);
    put.catch(() => {});
    try {
      if (reader || input) {
        const units = reader
          ? readUnits(reader, start, length, this.buffers)
          : op === "decompress"
            ? recordUnits(input as AsyncIterable<Buffer>)
            : fixedUnits(input as AsyncIterable<Buffer>, this.buffers);
        // decompress: the writer never passes the quote, whatever the records claim (each record is
        // also held to its declared size in `coded`, and the planner held their sum to the quote)
        const cap = op === "decompress" ? Number(job.bytes_quoted) : Number.POSITIVE_INFINITY;
        let written = 0;
        for await (const piece of this.coded(units, op, job.level as Level, signal)) {
          written += piece.length;
          if (written > cap) {
            throw new PermanentTaskError(
              `the segment's output passes the job's quote of ${cap} bytes: the records decode to more than they declare`,
              "codec_corrupt",
            );
          }
          if (!out.write(piece)) await once(out, "drain", { signal });
        }
      }
      out.end();
    } catch (err) {
      input?.destroy();
      await reader?.close().catch(() => {});
      out.destroy(err as Error);
      throw err;
    }
    return put;
  }

  private async *coded(
    units: AsyncIterable<Uint8Array>,
    op: SegmentOp,
    level: Level,
    signal: AbortSignal,
  ): AsyncGenerator<Uint8Array> {
    const pool = await this.pool();
    const window: Promise<UnitReply>[] = [];
    /** decompress: the output each record in the window declares (read here, not by the codec) */
    const declared: number[] = [];
    let n = 0;
    const take = async (): Promise<Uint8Array[]> => {
      const reply = await (window.shift() as Promise<UnitReply>);
      n++;
      // decompress: the outputs of the records before were written; free them (see minorGc)
      if (op === "decompress" && n % 4 === 0) minorGc?.();
      const back = reply.input.buffer;
      // the input's buffer is filled again only when no output is a view of it
      if (!("out" in reply && reply.out.some((p) => p.buffer === back))) this.buffers.give(back);
      const expected = declared.shift();
      if ("out" in reply) {
        const got = reply.out.reduce((a, p) => a + p.length, 0);
        if (expected !== undefined && got !== expected) {
          throw new PermanentTaskError(
            `record ${n} of the segment: decoded ${got} bytes, its header declares ${expected}`,
            "codec_corrupt",
          );
        }
        return reply.out;
      }
      const { code, message } = reply.error;
      const where = op === "decompress" ? `record ${n} of the segment` : `chunk ${n} of the segment`;
      if (code === "roundtrip_mismatch") throw new PermanentTaskError(`${where}: ${message}`, "roundtrip_mismatch");
      // a record the codec refuses (damaged, or decoding to another size than it declares): the
      // codec's code (codec_corrupt, codec_checksum_mismatch, …); no retry can fix it
      if (op === "decompress" && code.startsWith("codec_")) {
        throw new PermanentTaskError(`${where}: ${message} (${code})`, code);
      }
      throw new Error(`${where}: ${message} (${code})`);
    };
    try {
      for await (const unit of units) {
        signal.throwIfAborted();
        let task: UnitTask = { op, level, input: unit };
        if (op === "decompress") {
          declared.push(recordDeclared(unit));
          task = { ...task, maxOutputBytes: JOB_MAX_RECORD_OUTPUT_BYTES };
        }
        const p = pool.run(task, { transferList: [unit.buffer as ArrayBuffer], signal }) as Promise<UnitReply>;
        p.catch(() => {});
        window.push(p);
        if (window.length >= this.inflight) yield* await take();
      }
      while (window.length > 0) yield* await take();
    } finally {
      window.length = 0;
      declared.length = 0;
    }
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
    const hash = createHash("sha256");
    let bytes = 0;
    for (const s of segments) {
      for await (const c of (await this.store.get(jobKeys.segmentOut(jobId, s.idx, s.gen))) as AsyncIterable<Buffer>) {
        hash.update(c);
        bytes += c.length;
      }
    }
    const expected = segments.reduce((a, s) => a + Number(s.out_bytes ?? 0), 0);
    if (bytes !== expected) {
      throw new Error(`job ${jobId}: segment outputs hold ${bytes} bytes, the segments record ${expected}`);
    }
    const at = nowIso();
    const won = await jobStore.jobTransition(this.db, jobId, ACTIVE, {
      state: "done",
      bytes_out: bytes,
      output_sha256: hash.digest("hex"),
      started_at: job.started_at ?? at,
      finished_at: at,
    });
    if (won) {
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
    await this.db
      .updateTable("job_segments")
      .set({ state: "failed", error: f.reason, attempts: f.attempts, updated_at: nowIso() })
      .where("job_id", "=", jobId)
      .where("idx", "=", idx)
      .where("state", "!=", "done")
      .where((eb) => (gen === null ? eb("gen", "is", null) : eb("gen", "=", gen)))
      .execute();
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
    if (won) {
      this.log(`job ${jobId} failed (${code}): ${detail}`);
      const ended = await jobStore.job(this.db, jobId);
      if (ended) await this.wakeNext(ended);
    }
    if (attempts > 0) {
      await this.db
        .updateTable("jobs")
        .set({ attempts: sql<number>`case when attempts < ${attempts} then ${attempts} else attempts end` })
        .where("id", "=", jobId)
        .execute();
    }
  }

  get isWorking(): boolean {
    return this.working;
  }
}
