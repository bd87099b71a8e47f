import { createHash } from "node:crypto";
import { once } from "node:events";
import { PassThrough } from "node:stream";
import { type Kysely, sql } from "kysely";
import { Piscina } from "piscina";
import type { Level } from "../codec/index.js";
import { nowIso } from "../db/database.js";
import type { Database } from "../db/schema.js";
import { bundleModule } from "../threads/bundle.mjs";
import { errorMessage, PermanentTaskError, type TaskContext, type TaskFailure, type TaskQueue } from "./queue/types.js";
import type { SegmentOp, UnitReply, UnitTask } from "./segment-job.js";
import type { EarlyCoding, JobScheduler } from "./service.js";
import { jobKeys, type ObjectStore, type PositionalReader } from "./storage/types.js";
import { jobStore } from "./store.js";
import type { JobRow, JobSegmentRow } from "./tables.js";

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

export const DEFAULT_CHUNK_BYTES = 4 * 1024 * 1024;
/** the largest stream record read (decompressStream's maxContainerBytes default) */
export const MAX_RECORD_BYTES = 64 * 1024 * 1024;
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
}

interface SegmentPayload {
  job: string;
  idx: number;
  /** the upload the segment was planned for (absent: planned before generations) */
  gen?: string | null;
}

/** The queue's id of a segment's task: once per job, upload and segment. */
const taskId = (jobId: string, gen: string | null, idx: number) => (gen ? `${jobId}:${gen}:${idx}` : `${jobId}:${idx}`);

interface Range {
  offset: number;
  length: number;
}

const ACTIVE: JobRow["state"][] = ["queued", "running"];
/** states in which a job's segments may run: its input is complete, or arriving (coded early) */
const RUNNABLE: JobRow["state"][] = ["uploading", ...ACTIVE];

class InputCorrupt extends PermanentTaskError {
  constructor(message: string) {
    super(message, "input_corrupt");
  }
}

/**
 * Buffers of `size` bytes for input units, used again once a unit comes back from its thread
 * (the thread hands the buffer back with the output): a segment allocates its unit buffers once
 * instead of one per unit, and at most `keep` wait here unused.
 */
export class UnitBuffers {
  private readonly free: ArrayBuffer[] = [];

  constructor(
    readonly size: number,
    private readonly keep: number,
  ) {}

  take(): ArrayBuffer {
    return this.free.pop() ?? new ArrayBuffer(this.size);
  }

  /** a buffer back (ignored unless it is one of ours: the right size, not detached) */
  give(buffer: ArrayBufferLike): void {
    if (buffer instanceof ArrayBuffer && buffer.byteLength === this.size && this.free.length < this.keep) {
      this.free.push(buffer);
    }
  }

  get spare(): number {
    return this.free.length;
  }
}

/** `buffers.size`-byte units (the last one shorter): each a view from offset 0 of its own buffer. */
async function* fixedUnits(input: AsyncIterable<Buffer>, buffers: UnitBuffers): AsyncGenerator<Uint8Array> {
  const size = buffers.size;
  let cur = new Uint8Array(buffers.take());
  let fill = 0;
  for await (const chunk of input) {
    let i = 0;
    while (i < chunk.length) {
      const n = Math.min(size - fill, chunk.length - i);
      cur.set(chunk.subarray(i, i + n), fill);
      fill += n;
      i += n;
      if (fill === size) {
        yield cur;
        cur = new Uint8Array(buffers.take());
        fill = 0;
      }
    }
  }
  if (fill > 0) yield cur.subarray(0, fill);
  else buffers.give(cur.buffer);
}

/** `buffers.size`-byte units of [start, start + length) read straight into their buffers. */
async function* readUnits(
  reader: PositionalReader,
  start: number,
  length: number,
  buffers: UnitBuffers,
): AsyncGenerator<Uint8Array> {
  try {
    for (let done = 0; done < length; ) {
      const want = Math.min(buffers.size, length - done);
      const buffer = buffers.take();
      const n = await reader.read(new Uint8Array(buffer, 0, want), start + done);
      if (n < want) {
        buffers.give(buffer);
        throw new Error(`the input ends at ${start + done + n} bytes, inside this segment`);
      }
      done += n;
      yield new Uint8Array(buffer, 0, n);
    }
  } finally {
    await reader.close();
  }
}

/** Reads stream records (uvarint length + framed container), calling `record(headerLen, length)`. */
class RecordScanner {
  private header: number[] = [];
  private value = 0;
  private shift = 0;
  /** payload bytes of the current record still to come */
  remaining = 0;

  constructor(private readonly onHeader: (header: number[], length: number) => void) {}

  get inRecord(): boolean {
    return this.remaining > 0 || this.header.length > 0;
  }

  /** consumes header bytes from chunk[i..]; returns the new index (stops at the payload) */
  readHeader(chunk: Uint8Array, i: number): number {
    while (i < chunk.length && this.remaining === 0) {
      const b = chunk[i++] as number;
      this.header.push(b);
      this.value += (b & 0x7f) * 2 ** this.shift;
      this.shift += 7;
      if (b & 0x80) {
        if (this.header.length >= 8) throw new InputCorrupt("not a codec stream: a record length runs past 8 bytes");
        continue;
      }
      const len = this.value;
      if (len < 2) throw new InputCorrupt("not a codec stream: a record of length < 2");
      if (len > MAX_RECORD_BYTES) {
        throw new InputCorrupt(`not a codec stream: a record of ${len} bytes (more than ${MAX_RECORD_BYTES})`);
      }
      const header = this.header;
      this.header = [];
      this.value = 0;
      this.shift = 0;
      this.remaining = len;
      this.onHeader(header, len);
    }
    return i;
  }
}

/** Whole records (header included), each owning its buffer. */
async function* recordUnits(input: AsyncIterable<Buffer>): AsyncGenerator<Uint8Array> {
  let cur: Uint8Array | null = null;
  let fill = 0;
  const scanner = new RecordScanner((header, len) => {
    cur = new Uint8Array(header.length + len);
    cur.set(header);
    fill = header.length;
  });
  for await (const chunk of input) {
    let i = 0;
    while (i < chunk.length) {
      if (scanner.remaining === 0) {
        i = scanner.readHeader(chunk, i);
        continue;
      }
      const rec = cur as unknown as Uint8Array;
      const n = Math.min(scanner.remaining, chunk.length - i);
      rec.set(chunk.subarray(i, i + n), fill);
      fill += n;
      i += n;
      scanner.remaining -= n;
      if (scanner.remaining === 0) {
        yield rec;
        cur = null;
      }
    }
  }
  if (scanner.inRecord) throw new InputCorrupt("the input ends inside a stream record (truncated)");
}

/** Decompress planning: segments of whole records, cut once a segment reaches `segmentBytes`. */
export async function planRecordSegments(input: AsyncIterable<Buffer>, segmentBytes: number): Promise<Range[]> {
  const ranges: Range[] = [];
  let offset = 0;
  let start = 0;
  const scanner = new RecordScanner(() => {});
  for await (const chunk of input) {
    let i = 0;
    while (i < chunk.length) {
      if (scanner.remaining === 0) {
        const j = scanner.readHeader(chunk, i);
        offset += j - i;
        i = j;
        continue;
      }
      const n = Math.min(scanner.remaining, chunk.length - i);
      scanner.remaining -= n;
      offset += n;
      i += n;
      if (scanner.remaining === 0 && offset - start >= segmentBytes) {
        ranges.push({ offset: start, length: offset - start });
        start = offset;
      }
    }
  }
  if (scanner.inRecord) throw new InputCorrupt("the input ends inside a stream record (truncated)");
  if (offset > start) ranges.push({ offset: start, length: offset - start });
  return ranges;
}

/** Compress / roundtrip planning: every `segmentBytes`. */
export function planFixedSegments(size: number, segmentBytes: number): Range[] {
  const ranges: Range[] = [];
  for (let offset = 0; offset < size; offset += segmentBytes) {
    ranges.push({ offset, length: Math.min(segmentBytes, size - offset) });
  }
  return ranges;
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

  constructor(private readonly opts: RunnerOptions) {
    this.db = opts.db;
    this.store = opts.store;
    this.queue = opts.queue;
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
  }

  /** Stops taking segments; running ones get `graceMs` to finish, then go back to the queue. */
  async stop(opts: { graceMs?: number; abandon?: boolean } = {}): Promise<void> {
    await this.queue.stop(opts);
    this.working = false;
    const pool = this.piscina;
    this.piscina = undefined;
    await pool?.destroy();
  }

  /** Jobs left queued or running (a crash between planning and enqueueing, a lost finalize): again. */
  async recover(): Promise<void> {
    const jobs = await this.db.selectFrom("jobs").selectAll().where("state", "in", ACTIVE).execute();
    for (const job of jobs) await this.schedule(job);
  }

  // ---------------------------------------------------------------- planning

  async schedule(job: JobRow): Promise<void> {
    const current = await jobStore.job(this.db, job.id);
    if (!current || !ACTIVE.includes(current.state)) return;
    const gen = current.upload_gen;
    let segments = await jobStore.segments(this.db, job.id);
    if (current.segments_total === 0) {
      let ranges: Range[];
      try {
        // segments coded while the input arrived were cut at their size: the rest follow it
        const early = segments.find((s) => s.gen === gen && s.idx === 0);
        ranges = await this.plan(current, early ? Number(early.in_length) : this.opts.segmentBytes);
      } catch (err) {
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
      await this.enqueue(job.id, gen, s.idx);
    }
    await this.maybeFinalize(job.id);
  }

  private async enqueue(jobId: string, gen: string | null, idx: number): Promise<void> {
    await this.queue.enqueue(SEGMENT_TASK, { job: jobId, idx, gen } satisfies SegmentPayload, {
      id: taskId(jobId, gen, idx),
      attempts: this.opts.attempts,
      backoffMs: this.opts.backoffMs,
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
    await this.enqueue(jobId, gen, idx);
  }

  private async plan(job: JobRow, segmentBytes: number): Promise<Range[]> {
    const key = jobKeys.input(job.id);
    const size = await this.store.size(key);
    if (size === undefined) throw new PermanentTaskError(`the job's input (${key}) is missing`, "input_missing");
    if (job.op !== "decompress") return planFixedSegments(size, segmentBytes);
    if (size === 0) return [];
    return planRecordSegments((await this.store.get(key)) as AsyncIterable<Buffer>, segmentBytes);
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
    const put = this.store.put(jobKeys.segmentOut(job.id, seg.idx, seg.gen), out);
    put.catch(() => {});
    try {
      if (reader || input) {
        const units = reader
          ? readUnits(reader, start, length, this.buffers)
          : op === "decompress"
            ? recordUnits(input as AsyncIterable<Buffer>)
            : fixedUnits(input as AsyncIterable<Buffer>, this.buffers);
        for await (const piece of this.coded(units, op, job.level as Level, signal)) {
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
    let n = 0;
    const take = async (): Promise<Uint8Array[]> => {
      const reply = await (window.shift() as Promise<UnitReply>);
      n++;
      const back = reply.input.buffer;
      // the input's buffer is filled again only when no output is a view of it
      if (!("out" in reply && reply.out.some((p) => p.buffer === back))) this.buffers.give(back);
      if ("out" in reply) return reply.out;
      const { code, message } = reply.error;
      const where = op === "decompress" ? `record ${n} of the segment` : `chunk ${n} of the segment`;
      if (code === "roundtrip_mismatch") throw new PermanentTaskError(`${where}: ${message}`, "roundtrip_mismatch");
      if (op === "decompress" && code.startsWith("codec_")) throw new InputCorrupt(`${where}: ${message} (${code})`);
      throw new Error(`${where}: ${message} (${code})`);
    };
    try {
      for await (const unit of units) {
        signal.throwIfAborted();
        const task: UnitTask = { op, level, input: unit };
        const p = pool.run(task, { transferList: [unit.buffer as ArrayBuffer], signal }) as Promise<UnitReply>;
        p.catch(() => {});
        window.push(p);
        if (window.length >= this.inflight) yield* await take();
      }
      while (window.length > 0) yield* await take();
    } finally {
      window.length = 0;
    }
  }

  // ---------------------------------------------------------------- job end

  /** All segments done: the job is done, once (conditional), with the hash of the whole output. */
  async maybeFinalize(jobId: string): Promise<void> {
    const job = await jobStore.job(this.db, jobId);
    if (!job || !ACTIVE.includes(job.state) || job.segments_done < job.segments_total) return;
    const segments = await jobStore.segments(this.db, jobId);
    if (segments.length !== job.segments_total || segments.some((s) => s.state !== "done")) return;
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
    if (won)
      this.log(
        `job ${jobId} done: ${job.op} ${Number(job.bytes_in)} → ${bytes} bytes in ${segments.length} segment(s)`,
      );
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
    if (won) this.log(`job ${jobId} failed (${code}): ${detail}`);
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
