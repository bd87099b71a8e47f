import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import type { FastifyBaseLogger } from "fastify";
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.js";
import { safeError } from "../http/logger.js";
import { Problem } from "../http/problem.js";
import { type CancelWatch, watchCancel } from "./cancel-watch.js";
import { jobEvents } from "./events.js";
import type { ContentRange } from "./input-parts.js";
import { type PartOptions, PartReceiver, type PartResult } from "./part-receiver.js";
import { assertNotExpired } from "./retention.js";
import { type JobService, toNumber } from "./service.js";
import { jobKeys, type ObjectStore, ObjectTooLarge } from "./storage/types.js";
import { jobStore } from "./store.js";
import { INPUT_STATES, type JobRow } from "./tables.js";

/**
 * The rules of a job's bytes in and out (no HTTP here): the input arrives whole (raw PUT, or a
 * finished tus upload) into the object store, capped at the quoted bytes, then the job moves to
 * `queued` (one conditional update) and the scheduler hook runs; the output is the segment
 * outputs in index order, read as byte ranges straight from the store (nothing is assembled).
 * Each upload is a new generation (`jobs.upload_gen`): where the store can read an object while it
 * is written, whole segments are queued as their bytes arrive (the scheduler's `early`), and
 * whatever was begun for an earlier upload of the same job no longer counts.
 */

/** 409 job_cancelled: the job was cancelled while its input arrived (POST /api/jobs/:id/cancel). */
const cancelledInput = (jobId: string) =>
  new Problem(409, "job_cancelled", `Job ${jobId} was cancelled while its input arrived: it takes no more input.`, {
    job_id: jobId,
    state: "cancelled",
  });

/**
 * How often a followed output looks for newly done segments (ms) when nothing wakes it: a segment
 * done or the job's end in this process wakes it at once (events.ts); a worker in another process
 * is seen at the next poll.
 */
export const FOLLOW_POLL_MS = 100;
/**
 * The poll once every segment's output was sent and only the job's end is awaited (ms): the
 * finalize (the output's digest, now kept as segments finish) follows the last segment by a few
 * milliseconds, and the download ends only then (its Repr-Digest trailer).
 */
export const FOLLOW_END_POLL_MS = 10;

/** Resolves after `ms` (a timer that does not keep the process alive). */
const delay = (ms: number) =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, ms).unref();
  });

export interface OutputPart {
  key: string;
  bytes: number;
}

export class JobTransfers {
  /** Jobs whose input is being received by this process: one writer per job at a time. */
  private readonly receiving = new Set<string>();

  /** Inputs sent in parts (Content-Range). */
  private readonly partReceiver: PartReceiver;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly jobs: JobService,
    readonly storage: ObjectStore,
    private readonly log: FastifyBaseLogger,
    parts?: PartOptions,
  ) {
    this.partReceiver = new PartReceiver(db, jobs, storage, this, parts);
  }

  /** 410 when the job expired (its data was deleted); 409 unless the job still takes input. */
  assertAcceptsInput(job: JobRow): void {
    assertNotExpired(job);
    if (job.state === "cancelled") {
      throw new Problem(
        409,
        "job_cancelled",
        `Job ${job.id} was cancelled${job.finished_at ? ` at ${job.finished_at}` : ""}: it takes no more input. Buy a new job to run it.`,
        { job_id: job.id, state: job.state },
      );
    }
    if (!INPUT_STATES.includes(job.state)) {
      throw new Problem(
        409,
        "job_input_closed",
        `Job ${job.id} is ${job.state}: its input is complete and cannot be sent again.`,
        { state: job.state },
      );
    }
  }

  /**
   * Calls `onCancel` once job `jobId` is cancelled or deleted, wherever that was asked (its state is
   * read every CANCEL_POLL_MS, cancel-watch.ts); returns the function that stops watching. A tus
   * PATCH in progress uses it to stop taking bytes.
   */
  watchInput(jobId: string, onCancel: () => void): () => void {
    const w = watchCancel(this.db, jobId);
    w.signal.addEventListener("abort", () => {
      if (w.cancelled) onCancel();
    });
    return () => w.stop();
  }

  /** 413 when `bytes` (a declared length) is more than the job's quote. */
  assertFits(job: JobRow, bytes: number): void {
    const quoted = toNumber(job.bytes_quoted);
    if (bytes > quoted) {
      throw new Problem(
        413,
        "input_too_large",
        `This input is ${bytes} bytes; the job's quote covers ${quoted}. Request a new quote for the larger size.`,
        { bytes_quoted: quoted, bytes_sent: bytes },
      );
    }
  }

  /** A resumable upload has started: awaiting_input → uploading (no change from uploading). */
  async markUploading(jobId: string): Promise<void> {
    await jobStore.jobTransition(this.db, jobId, ["awaiting_input"], { state: "uploading" });
  }

  /**
   * Upload activity (every tus request): `updated_at` = now while the job takes input and has not
   * expired, so the retention sweep does not take a slow upload for an abandoned one (on any
   * instance). One conditional update: when it changes nothing the job expired or closed meanwhile
   * (410 / 409).
   */
  async touchInput(job: JobRow): Promise<void> {
    const touched = await jobStore.touchJob(this.db, job.id, INPUT_STATES, new Date().toISOString());
    if (!touched) this.assertAcceptsInput(await this.jobs.get(job.id));
  }

  /**
   * Streams the job's whole input from `body` into the store. More than the quoted bytes: the part
   * that fit is kept (bytes_in records it, the job stays `uploading`, nothing is queued) and 413.
   * Success: bytes_in, input_sha256, state `queued`, then the scheduler hook. Returns the job.
   */
  async receive(jobId: string, body: Readable): Promise<JobRow> {
    if (this.receiving.has(jobId)) {
      body.destroy();
      throw new Problem(
        409,
        "upload_in_progress",
        `Another upload of job ${jobId} is being received; wait for it to finish or fail.`,
      );
    }
    this.receiving.add(jobId);
    let watch: CancelWatch | undefined;
    try {
      const job = await this.jobs.get(jobId);
      this.assertAcceptsInput(job);
      const gen = randomBytes(6).toString("hex");
      const started = await this.db.transaction().execute(async (trx) => {
        const moved = await jobStore.jobTransition(trx, jobId, INPUT_STATES, {
          state: "uploading",
          upload_gen: gen,
          segments_total: 0,
          segments_done: 0,
        });
        // segments begun on an earlier upload of this input no longer count
        if (moved) await jobStore.deleteSegments(trx, jobId);
        return moved;
      });
      if (!started) this.assertAcceptsInput(await this.jobs.get(jobId));
      const quoted = toNumber(job.bytes_quoted);
      // a cancel of the job (any instance) stops taking bytes: the body fails with 409 job_cancelled
      const w = watchCancel(this.db, jobId);
      watch = w;
      w.signal.addEventListener("abort", () => {
        if (w.cancelled) body.destroy(cancelledInput(jobId));
      });
      const early = this.storage.readsGrowing ? this.jobs.scheduler?.early?.(job, gen) : undefined;
      let put: { bytes: number; sha256: string };
      try {
        put = await this.storage.put(jobKeys.input(jobId), body, {
          maxBytes: quoted,
          ...(early ? { growing: { tag: gen, written: early.written } } : {}),
        });
      } catch (err) {
        await early?.settled();
        if (!(err instanceof ObjectTooLarge)) throw err;
        await jobStore.jobTransition(this.db, jobId, ["uploading"], { bytes_in: err.kept, input_sha256: null });
        throw new Problem(
          413,
          "input_too_large",
          `More than the ${quoted} quoted bytes arrived: the first ${err.kept} bytes are stored; send the input again within the quote, or request a new quote.`,
          { bytes_quoted: quoted, bytes_kept: err.kept },
        );
      }
      await early?.settled();
      return await this.complete(jobId, gen, put);
    } finally {
      watch?.stop();
      this.receiving.delete(jobId);
    }
  }

  /** One part of the job's input (`PUT …/input` with `Content-Range`): part-receiver.ts. */
  receivePart(jobId: string, range: ContentRange, body: Readable): Promise<PartResult> {
    return this.partReceiver.receive(jobId, range, body);
  }

  /** The input of upload `gen` is complete: queued, usage recorded, the scheduler told (also part-receiver.ts). */
  async complete(jobId: string, gen: string, put: { bytes: number; sha256: string }): Promise<JobRow> {
    if (put.bytes === 0) {
      await jobStore.jobTransition(this.db, jobId, ["uploading"], { bytes_in: 0, input_sha256: null });
      throw new Problem(400, "input_empty", "The input is empty: send the bytes to compress.");
    }
    // The input is complete: queue the job and record its usage (what the free cap reads) at once.
    const won = await this.db.transaction().execute(async (trx) => {
      // The write first: on SQLite a transaction that reads and then writes fails at once ("database
      // is locked", no busy wait) when another process (a worker finishing a segment) wrote in
      // between; seen once as a 500 at the end of a 256 MB PUT under load. Only while this upload
      // is the job's current one: another upload of this job began meanwhile (another process):
      // its bytes are the input.
      const moved = await jobStore.jobTransition(
        trx,
        jobId,
        INPUT_STATES,
        { state: "queued", bytes_in: put.bytes, input_sha256: put.sha256 },
        gen,
      );
      const current = moved ? await jobStore.job(trx, jobId) : undefined;
      if (!current) return undefined;
      // decompress: the usage is the output the job may write (its quote: the decompressed size,
      // issue #21), not the size of the stream, or a few KB would spend a GB of the free cap
      const used = current.op === "decompress" ? toNumber(current.bytes_quoted) : put.bytes;
      await this.jobs.recordUsage(jobId, used, trx);
      return current;
    });
    // The answer is the job as this upload queued it: a read after the commit could already see
    // `running` (segments of parts that landed first are coded at once; a worker may claim one the
    // moment the job is queued).
    const job = won ?? (await this.jobs.get(jobId));
    if (!won) this.assertAcceptsInput(job);
    if (!won && job.upload_gen !== gen) {
      throw new Problem(
        409,
        "upload_in_progress",
        `Another upload of job ${jobId} began while this one was received; that one is the job's input.`,
      );
    }
    try {
      await this.jobs.scheduler?.schedule(job);
    } catch (err) {
      // A refusal of this input (409 output_exceeds_quote: the scheduler failed the job) is the answer.
      if (err instanceof Problem) throw err;
      // The input is safe and the job is queued; the runner's sweep picks up queued jobs.
      this.log.error({ job_id: jobId, err: safeError(err as Error) }, "suite job scheduler failed");
    }
    return job;
  }

  /** The output's parts (segment outputs in index order) and total size: 409 unless the job is done. */
  async output(job: JobRow): Promise<{ parts: OutputPart[]; total: number }> {
    assertNotExpired(job);
    if (job.state !== "done") {
      throw new Problem(409, "job_not_done", `Job ${job.id} is ${job.state}; its output exists once it is done.`, {
        state: job.state,
      });
    }
    const segments = await jobStore.segments(this.db, job.id);
    const complete =
      segments.length === job.segments_total &&
      segments.every((s, i) => s.idx === i && s.state === "done" && s.out_bytes !== null);
    if (!complete) {
      this.log.error({ job_id: job.id }, "suite job is done but its segment outputs are incomplete");
      throw new Problem(500, "job_output_missing", `The output of job ${job.id} is incomplete; it has been logged.`);
    }
    const parts = segments.map((s) => ({
      key: jobKeys.segmentOut(job.id, s.idx, s.gen),
      bytes: toNumber(s.out_bytes),
    }));
    return { parts, total: parts.reduce((n, p) => n + p.bytes, 0) };
  }

  /**
   * The output while the job still runs (`GET /api/jobs/:id/output?follow=1`, issue #23 item 6):
   * each segment's output as soon as it and every segment before it are done, in index order, so
   * the download overlaps the coding; the stream ends when the job is done. A job that fails, is
   * cancelled, deleted or expires meanwhile, or whose input is sent again, ends the stream with an
   * error (the client sees a cut response; the job's state says why). The job and its segments are
   * read again on a change in this process (jobEvents) or every `pollMs` while nothing new is done
   * (`endPollMs` once every segment was sent and only the job's end is awaited).
   */
  follow(jobId: string, opts: { pollMs?: number; endPollMs?: number; signal?: AbortSignal } = {}): Readable {
    const { db, storage, jobs } = this;
    const pollMs = opts.pollMs ?? FOLLOW_POLL_MS;
    const endPollMs = opts.endPollMs ?? FOLLOW_END_POLL_MS;
    return Readable.from(
      (async function* () {
        let idx = 0;
        let gen: string | null = null;
        for (;;) {
          // registered before the job is read: a segment done (or the job's end) meanwhile wakes the wait below
          const woken = jobEvents.subscribe(jobId, pollMs, opts.signal);
          try {
            const job = await jobs.get(jobId);
            assertNotExpired(job);
            if (job.state === "failed" || job.state === "cancelled") {
              const code = job.state === "failed" ? "job_failed" : "job_cancelled";
              throw new Problem(409, code, `Job ${jobId} ${job.state} while its output was followed.`);
            }
            if (gen && job.upload_gen !== gen) {
              throw new Problem(
                409,
                "job_input_replaced",
                `Job ${jobId}'s input was sent again while its output was followed.`,
              );
            }
            gen = job.upload_gen;
            const segments = await jobStore.segments(db, jobId);
            const before = idx;
            for (
              let s = segments[idx];
              s && s.idx === idx && s.state === "done" && s.out_bytes !== null;
              s = segments[idx]
            ) {
              yield* await storage.get(jobKeys.segmentOut(jobId, idx, s.gen));
              idx++;
            }
            if (job.state === "done" && idx >= job.segments_total) return;
            if (idx === before) {
              // every segment sent: only the job's end (a few ms after the last segment) is awaited
              const allSent = job.segments_total > 0 && idx >= job.segments_total;
              if (allSent) await Promise.race([woken.done, delay(endPollMs)]);
              else await woken.done;
              opts.signal?.throwIfAborted();
            }
          } finally {
            woken.cancel();
          }
        }
      })(),
      { objectMode: false },
    );
  }

  /** The bytes [start, end] (inclusive) of the concatenated parts, read range by range from the store. */
  openOutput(parts: OutputPart[], start: number, end: number): Readable {
    const storage = this.storage;
    return Readable.from(
      (async function* () {
        let offset = 0;
        for (const part of parts) {
          const first = Math.max(start, offset);
          const last = Math.min(end, offset + part.bytes - 1);
          if (first <= last) {
            const whole = first === offset && last === offset + part.bytes - 1;
            const stream = await storage.get(
              part.key,
              whole ? undefined : { start: first - offset, end: last - offset },
            );
            yield* stream;
          }
          offset += part.bytes;
          if (offset > end) break;
        }
      })(),
      { objectMode: false },
    );
  }
}
