import { createHash } from "node:crypto";
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
import { JOB_MAX_RECORD_OUTPUT_BYTES, recordDeclared } from "./planning.js";
import { errorMessage, PermanentTaskError, type TaskContext } from "./queue/types.js";
import type { SegmentOp, UnitReply, UnitTask } from "./segment-job.js";
import { jobKeys, type ObjectStore } from "./storage/types.js";
import { jobStore } from "./store.js";
import type { JobRow, JobSegmentRow } from "./tables.js";
import { DEFAULT_CHUNK_BYTES, fixedUnits, readUnits, recordUnits, UnitBuffers } from "./units.js";

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

export class SegmentExecution {
  private readonly db: Kysely<Database>;
  private readonly store: ObjectStore;
  private readonly chunkBytes: number;
  /** units on the pool at once, per segment */
  private readonly inflight: number;
  private readonly buffers: UnitBuffers;
  private readonly log: (line: string) => void;
  private piscina: Piscina | undefined;

  constructor(private readonly opts: ExecutionOptions) {
    this.db = opts.db;
    this.store = opts.store;
    this.log = opts.log;
    this.chunkBytes = opts.chunkBytes ?? Math.min(DEFAULT_CHUNK_BYTES, opts.segmentBytes);
    // threads × 2 units on the pool in all, shared by the segments at once: a second segment keeps
    // the threads busy while the first one's last units finish (and its output is written)
    this.inflight = Math.max(1, Math.ceil((Math.max(1, opts.threads) * 2) / Math.max(1, opts.concurrency)));
    // a segment holds at most inflight + 1 unit buffers (those on the pool, the one being filled)
    this.buffers = new UnitBuffers(this.chunkBytes, (this.inflight + 1) * Math.max(1, opts.concurrency));
  }

  /** Stops the codec threads (started again by the next segment). */
  async destroy(): Promise<void> {
    const pool = this.piscina;
    this.piscina = undefined;
    await pool?.destroy();
  }

  /** One attempt at segment `seg` (not done) of `job` (its state runnable, its upload the segment's). */
  async run(job: JobRow, seg: JobSegmentRow, ctx: TaskContext): Promise<void> {
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
      await jobStore
        .segmentTransition(this.db, jobId, idx, "not done", { error: errorMessage(err), updated_at: nowIso() })
        .catch(() => {});
      throw err;
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
}

/** The size and SHA-256 of a job's output (its segments' outputs in order), checked against what the segments record. */
export async function outputDigest(
  store: ObjectStore,
  jobId: string,
  segments: JobSegmentRow[],
): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash("sha256");
  let bytes = 0;
  for (const s of segments) {
    for await (const c of (await store.get(jobKeys.segmentOut(jobId, s.idx, s.gen))) as AsyncIterable<Buffer>) {
      hash.update(c);
      bytes += c.length;
    }
  }
  const expected = segments.reduce((a, s) => a + Number(s.out_bytes ?? 0), 0);
  if (bytes !== expected) {
    throw new Error(`job ${jobId}: segment outputs hold ${bytes} bytes, the segments record ${expected}`);
  }
  return { bytes, sha256: hash.digest("hex") };
}
