import { once } from "node:events";
import { PassThrough } from "node:stream";
import v8 from "node:v8";
import vm from "node:vm";
import type { Kysely } from "kysely";
import { Piscina } from "piscina";
import type { Level } from "../codec/index.js";
import { nowIso } from "../db/database.js";
import type { Database } from "../db/schema.js";
import { bundleModule } from "../threads/bundle.mjs";
import { watchCancel } from "./cancel-watch.js";
import { JOB_MAX_RECORD_OUTPUT_BYTES, recordDeclared } from "./planning.js";
import { errorMessage, PermanentTaskError, type TaskContext } from "./queue/types.js";
import type { SegmentOp, UnitReply, UnitTask } from "./segment-job.js";
import { jobKeys, type ObjectStore } from "./storage/types.js";
import { jobStore } from "./store.js";
import type { JobRow, JobSegmentRow } from "./tables.js";
import { DEFAULT_CHUNK_BYTES, fixedUnits, InflightBytes, readUnits, recordUnits, UnitBuffers } from "./units.js";

/**
 * The execution of one segment of a suite job (runner.ts hands it the segment's task): the
 * segment is marked running, its input range is read from the object store, cut into units (a
 * `chunkBytes` chunk, or one record), coded on a piscina pool (about `threads × 2` units in flight
 * in all; input buffers transferred in, outputs moved back with the input's buffer, which the next
 * unit is read into: see `UnitBuffers`) and the outputs streamed in order into
 * `jobs/<job>/out/<idx>`; then the segment is marked done and counted, once.
 */

export interface ExecutionOptions {
  db: Kysely<Database>;
  store: ObjectStore;
  /** input bytes per segment (JOB_SEGMENT_BYTES) */
  segmentBytes: number;
  /** piscina threads (JOB_WORKER_THREADS) */
  threads: number;
  /** segments at once in this process (JOB_WORKER_CONCURRENCY) */
  concurrency: number;
  /** input bytes per stream record (default min(4 MiB, segmentBytes)) */
  chunkBytes?: number;
  /** progress and problems, one line each */
  log: (line: string) => void;
  /** test hook: runs before each segment attempt; a throw fails that attempt */
  beforeSegment?: (jobId: string, idx: number, attempt: number) => void | Promise<void>;
}

/**
 * A minor collection (scavenge) of this thread's heap, once `exposeGc` ran. A segment receives its
 * units' outputs from the threads (4 MiB per decoded record, about 1 MB per compressed unit of
 * text) and writes them; once written they are dead, but a thread whose JavaScript allocates
 * little collects rarely and V8 frees dead ArrayBuffers only at a collection (after about 64 MB of
 * them): measured, 1 GB decoded from a 4.5 KB stream peaked at 316 MB in the worker. A scavenge
 * every fourth unit frees them (about a millisecond each); with the codec threads' own scavenge
 * after each unit, a 2-thread compress job's worker peak went from 230-252 MB (3 runs) to 208-247
 * MB (7 runs).
 */
let minorGc: (() => void) | undefined;
let gcExposed = false;

/** `--expose-gc` for the codec threads started after this (they scavenge after each unit) and this thread. */
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

export class SegmentExecution {
  private readonly db: Kysely<Database>;
  private readonly store: ObjectStore;
  private readonly chunkBytes: number;
  /** units on the pool at once, per segment */
  private readonly inflight: number;
  private readonly buffers: UnitBuffers;
  /** the input bytes of the units in flight across this process's segments, bounded (units.ts) */
  readonly inflightBytes: InflightBytes;
  private readonly log: (line: string) => void;
  private piscina: Piscina | undefined;
  /** counts `destroy` calls: a pool being built across one is not kept */
  private epoch = 0;

  constructor(private readonly opts: ExecutionOptions) {
    this.db = opts.db;
    this.store = opts.store;
    this.log = opts.log;
    this.chunkBytes = opts.chunkBytes ?? Math.min(DEFAULT_CHUNK_BYTES, opts.segmentBytes);
    // threads × 2 units on the pool in all, shared by the segments at once: a second segment keeps
    // the threads busy while the first one's last units finish (and its output is written)
    this.inflight = Math.max(1, Math.ceil((Math.max(1, opts.threads) * 2) / Math.max(1, opts.concurrency)));
    // In all, threads + concurrency units at once (issue #23 item 6): one on each thread and one
    // ready per segment, so a thread never waits for a unit while the worker's memory grows by one
    // unit per thread (before: threads × 2 on the pool plus one being read per segment).
    const units = Math.max(1, opts.threads) + Math.max(1, opts.concurrency);
    this.inflightBytes = new InflightBytes(units * this.chunkBytes);
    this.buffers = new UnitBuffers(this.chunkBytes, units);
  }

  /**
   * Starts the codec threads now (a worker calls it when it starts taking segments): each thread
   * loads the codec before the first segment arrives, not while its bytes wait (issue #23 item 6).
   */
  async warm(): Promise<void> {
    await this.pool();
  }

  /** Stops the codec threads (started again by the next segment). */
  async destroy(): Promise<void> {
    this.epoch++;
    const pool = this.piscina;
    this.piscina = undefined;
    await pool?.destroy();
  }

  /**
   * One attempt at segment `seg` (not done) of `job` (its state runnable, its upload the segment's).
   * Its output's size when this attempt marked it done; undefined when it stopped (cancelled) or
   * another attempt marked it done first.
   */
  async run(job: JobRow, seg: JobSegmentRow, ctx: TaskContext): Promise<{ bytes: number } | undefined> {
    const { id: jobId } = job;
    const { idx, gen } = seg;
    const at = nowIso();
    await jobStore.jobTransition(this.db, jobId, ["queued"], { state: "running", started_at: at });
    await jobStore.raiseJobAttempts(this.db, jobId, ctx.attempt);
    await jobStore.segmentTransition(this.db, jobId, idx, ["pending", "running"], {
      state: "running",
      attempts: ctx.attempt,
      worker: ctx.workerId,
      updated_at: at,
    });
    const t0 = Date.now();
    this.log(
      `job ${jobId} segment ${idx + 1}/${job.segments_total} started (attempt ${ctx.attempt} of ${ctx.maxAttempts})`,
    );
    // a cancel of the job (POST /api/jobs/:id/cancel) stops the segment at its next unit (cancel-watch.ts)
    const watch = watchCancel(this.db, jobId, { parent: ctx.signal, log: this.log });
    try {
      await this.opts.beforeSegment?.(jobId, idx, ctx.attempt);
      watch.signal.throwIfAborted();
      const out = await this.codeSegment(job, seg, watch.signal);
      const total = await this.segmentDone(jobId, idx, gen, out);
      if (total !== undefined) {
        this.log(
          `job ${jobId} segment ${idx + 1}/${job.segments_total} done: ${Number(seg.in_length)} → ${out.bytes} bytes ` +
            `in ${((Date.now() - t0) / 1000).toFixed(1)} s (attempt ${ctx.attempt}; ${total}/${job.segments_total} done); ` +
            waitsLine(out.waits),
        );
        return { bytes: out.bytes };
      }
      return undefined;
    } catch (err) {
      if (watch.cancelled) {
        // the job was cancelled: this attempt ends without failing the job or being retried
        this.log(`job ${jobId} segment ${idx + 1}: stopped, the job was cancelled`);
        await jobStore
          .segmentTransition(this.db, jobId, idx, "not done", { error: "cancelled", updated_at: nowIso() })
          .catch(() => {});
        return undefined;
      }
      this.log(
        `job ${jobId} segment ${idx + 1}: attempt ${ctx.attempt} of ${ctx.maxAttempts} failed: ${errorMessage(err)}`,
      );
      await jobStore
        .segmentTransition(this.db, jobId, idx, "not done", { error: errorMessage(err), updated_at: nowIso() })
        .catch(() => {});
      throw err;
    } finally {
      watch.stop();
    }
  }

  /** Marks the segment done and counts it, once (one transaction); the new count, or undefined if already done. */
  private async segmentDone(jobId: string, idx: number, gen: string | null, out: { bytes: number; sha256: string }) {
    return this.db.transaction().execute(async (trx) => {
      const at = nowIso();
      const won = await jobStore.segmentTransition(
        trx,
        jobId,
        idx,
        "not done",
        { state: "done", out_bytes: out.bytes, out_sha256: out.sha256, error: null, updated_at: at },
        gen,
      );
      if (!won) return undefined;
      await jobStore.countSegmentDone(trx, jobId, at);
      return (await jobStore.segmentsDone(trx, jobId)) ?? 0;
    });
  }

  /** The codec threads: one unit at a time each (the codec's work runs in the calling thread). */
  private async pool(): Promise<Piscina> {
    if (this.piscina) return this.piscina;
    const epoch = this.epoch;
    // the threads import the codec bundled into one JavaScript file (less memory than tsx per thread)
    const module = await bundleModule(new URL("./segment-job.ts", import.meta.url));
    // stopped meanwhile (a warm-up still bundling when the runner stopped): no threads after the stop
    if (epoch !== this.epoch) throw new Error("the codec threads were stopped");
    exposeGc();
    this.piscina ??= new Piscina({
      filename: new URL("./segment-worker.mjs", import.meta.url).href,
      // no run-time and wait-time histograms per task (nothing reads them)
      recordTiming: false,
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
  ): Promise<{ bytes: number; sha256: string; waits: SegmentWaits }> {
    const waits: SegmentWaits = { input: 0, threads: 0, writer: 0, units: 0, coding: 0, cpu: 0 };
    const start = Number(seg.in_offset);
    const length = Number(seg.in_length);
    const op = job.op as SegmentOp;
    // while the input arrives, its bytes so far (a segment is queued once its bytes are there)
    const growing = job.state === "uploading" && seg.gen ? { growing: seg.gen } : {};
    const key = jobKeys.input(job.id);
    // fixed units straight from the file where the store reads at positions (no chunks to copy)
    const reader = length > 0 && op !== "decompress" ? await this.store.openReader?.(key, growing) : undefined;
    const input = length > 0 && !reader ? await this.store.get(key, { start, end: start + length - 1 }, growing) : null;
    // each written piece is read as it was written (object mode on the readable side): in byte
    // mode the store's reader got the buffered pieces joined into a new buffer, a copy of the whole
    // output (78 ms of the worker's main thread per 57 MB in a CPU profile, and that much garbage)
    const out = new PassThrough({ readableObjectMode: true, readableHighWaterMark: 4 });
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
        for await (const piece of this.coded(units, op, job.level as Level, signal, waits)) {
          written += piece.length;
          if (written > cap) {
            throw new PermanentTaskError(
              `the segment's output passes the job's quote of ${cap} bytes: the records decode to more than they declare`,
              "codec_corrupt",
            );
          }
          if (!out.write(piece)) {
            const w = performance.now();
            await once(out, "drain", { signal });
            waits.writer += performance.now() - w;
          }
        }
      }
      out.end();
    } catch (err) {
      input?.destroy();
      await reader?.close().catch(() => {});
      out.destroy(err as Error);
      throw err;
    }
    const w = performance.now();
    const stored = await put;
    waits.writer += performance.now() - w;
    return { ...stored, waits };
  }

  /**
   * The units' outputs in order: each unit is sent to the pool once the in-flight bytes allow
   * (InflightBytes: shared by the segments at once), at most `inflight` of this segment at once.
   * `waits` adds up where the segment waited (milliseconds): for its next unit's input, for the
   * threads (a unit's output, or room in the in-flight bytes), and (in codeSegment) for the writer.
   */
  private async *coded(
    units: AsyncIterable<Uint8Array>,
    op: SegmentOp,
    level: Level,
    signal: AbortSignal,
    waits: SegmentWaits,
  ): AsyncGenerator<Uint8Array> {
    const pool = await this.pool();
    const window: Promise<UnitReply>[] = [];
    /** decompress: the output each record in the window declares (read here, not by the codec) */
    const declared: number[] = [];
    let n = 0;
    const budget = this.inflightBytes;
    /** bytes this segment holds in the in-flight count */
    let held = 0;
    const take = async (): Promise<Uint8Array[]> => {
      const w = performance.now();
      const reply = await (window.shift() as Promise<UnitReply>);
      waits.threads += performance.now() - w;
      budget.release(this.chunkBytes);
      held -= this.chunkBytes;
      n++;
      waits.units++;
      waits.coding += reply.ms ?? 0;
      waits.cpu += reply.cpu ?? reply.ms ?? 0;
      // the outputs of the units before were written: free them (see minorGc); a decompress
      // record's output is up to 4 MiB, a compress unit's about a quarter of its 4 MiB input
      if (n % 4 === 0) minorGc?.();
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
    const it = units[Symbol.asyncIterator]();
    try {
      for (;;) {
        // room for one more unit in the process's in-flight bytes: this segment's own outputs
        // first (it may hold the room others wait for), else another segment's
        while (!budget.tryAcquire(this.chunkBytes)) {
          if (window.length > 0) yield* await take();
          else {
            const w = performance.now();
            await budget.released(signal);
            waits.threads += performance.now() - w;
          }
        }
        held += this.chunkBytes;
        const r0 = performance.now();
        const next = await it.next();
        waits.input += performance.now() - r0;
        if (next.done) {
          budget.release(this.chunkBytes);
          held -= this.chunkBytes;
          break;
        }
        const unit = next.value;
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
      // what this segment still holds (the unread unit's room, units of a failed segment)
      budget.release(held);
      held = 0;
      window.length = 0;
      declared.length = 0;
      await it.return?.();
    }
  }
}

/** Where a segment waited (milliseconds), and its units' coding time on the threads. */
export interface SegmentWaits {
  /** for its next unit's input (read from the store, or arriving) */
  input: number;
  /** for the threads: a unit's output, or room in the in-flight bytes */
  threads: number;
  /** for the writer (the output object) */
  writer: number;
  units: number;
  /** the units' coding time in the threads */
  coding: number;
  /** of which on a CPU (the rest: the thread was ready and waited for a core); = coding where unknown */
  cpu: number;
}

/** The part of a segment's log line that `bench:suite` reads for its critical path. */
export function waitsLine(w: SegmentWaits): string {
  const s = (ms: number) => (ms / 1000).toFixed(3);
  return `waited input ${s(w.input)} s, threads ${s(w.threads)} s, writer ${s(w.writer)} s; ${w.units} units coded in ${s(w.coding)} thread-s (${s(w.cpu)} on a CPU)`;
}
