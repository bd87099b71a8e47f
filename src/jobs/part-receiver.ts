import { randomBytes } from "node:crypto";
import type { Readable } from "node:stream";
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.js";
import { Problem } from "../http/problem.js";
import { type ContentRange, inclusive, type LandedRange, mergeRanges, PARTS_UNSUPPORTED } from "./input-parts.js";
import type { EarlyCoding, JobService } from "./service.js";
import { toNumber } from "./service.js";
import { jobKeys, type ObjectStore, RangeBodyMismatch } from "./storage/types.js";
import { jobStore } from "./store.js";
import { INPUT_STATES, type JobRow } from "./tables.js";
import type { JobTransfers } from "./transfer.js";

/**
 * An input sent in parts (issue #23 item 6, docs/suite.md "Several upload streams"): each `PUT
 * …/input` with `Content-Range` is one part, recorded `writing` under this process's lease, written
 * at its offset into the one growing input file, then `landed` (a restart keeps landed parts).
 * Segments inside the landed ranges are queued at once; the part that completes the input hands it
 * to JobTransfers.complete, as a whole PUT does. Content-Range parsing and range merging:
 * input-parts.ts.
 */

/** Uploads in parts one process keeps a hash and an early coding for at once. */
const MAX_PARTS_UPLOADS = 64;

/** An input sent in parts (Content-Range): JOB_UPLOAD_* limits, the writing lease, the clock. */
export interface PartOptions {
  /** JOB_UPLOAD_MAX_PARTS: parts per upload */
  maxParts: number;
  /** JOB_UPLOAD_MAX_STREAMS: parts being received at once per job */
  maxStreams: number;
  /** JOB_UPLOAD_MIN_PART_BYTES: smallest part but the last */
  minPartBytes: number;
  /** a writing part's lease, renewed every third of it while it arrives (default 30 s) */
  leaseMs?: number;
  /** the clock of the leases (tests) */
  now?: () => number;
}

const DEFAULT_PARTS: PartOptions = { maxParts: 10_000, maxStreams: 16, minPartBytes: 1024 * 1024 };

/** What a part answered: the job, whether its input is now complete, and the ranges landed so far. */
export interface PartResult {
  job: JobRow;
  complete: boolean;
  /** [start, end) merged */
  landed: LandedRange[];
}

/** The hash and the early coding of an upload in parts, in this process. */
interface PartsUpload {
  hash: Promise<{ advance(n: number): void; digest(n: number): Promise<string>; drop(): void }>;
  early: EarlyCoding | undefined;
  /** set once a part found every range landed: the input's completion (one per process) */
  completing?: Promise<JobRow>;
}

export class PartReceiver {
  /** This process, as the writer of the parts it receives (job_input_parts.writer). */
  private readonly writerId = `w_${randomBytes(8).toString("hex")}`;
  /** Uploads in parts this process received parts of, by `job:gen` (at most MAX_PARTS_UPLOADS). */
  private readonly partsUploads = new Map<string, PartsUpload>();
  private readonly parts: Required<PartOptions>;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly jobs: JobService,
    private readonly storage: ObjectStore,
    private readonly transfers: Pick<JobTransfers, "assertAcceptsInput" | "assertFits" | "complete">,
    parts: PartOptions = DEFAULT_PARTS,
  ) {
    this.parts = { leaseMs: 30_000, now: Date.now, ...parts };
  }

  /**
   * One part of the job's input (`PUT …/input` with `Content-Range: bytes a-b/total`; docs/suite.md
   * "Several upload streams"; local store only, else 400 input_parts_unsupported). The first part
   * starts an upload in parts (a new generation, `total` fixed); later parts join it, from any
   * process. Each part is recorded `writing` (fenced by this process's lease), written at its
   * offset into the one growing input file, then `landed`: a restart keeps the landed parts. A
   * range overlapping a landed or writing part: 409 input_range_overlaps; another total: 409
   * input_total_changed; past the quote: 413 input_too_large. Each whole segment inside the landed
   * ranges is queued at once (out of order), and the input's SHA-256 follows the contiguous landed
   * prefix (the store's hasher thread). The part that completes the input queues the job, as a
   * whole PUT does.
   */
  async receive(jobId: string, range: ContentRange, body: Readable): Promise<PartResult> {
    const writes = this.storage.ranges;
    if (!writes) throw PARTS_UNSUPPORTED();
    const job = await this.jobs.get(jobId);
    this.transfers.assertAcceptsInput(job);
    this.transfers.assertFits(job, range.total);
    const length = range.end - range.start + 1;
    const { minPartBytes, leaseMs } = this.parts;
    if (range.end < range.total - 1 && length < minPartBytes) {
      throw new Problem(
        400,
        "input_part_too_small",
        `A part is at least ${minPartBytes} bytes, except the one that ends at the input's last byte; this one is ${length}.`,
        { min_part_bytes: minPartBytes, bytes: length },
      );
    }
    const claimed = await this.claimPart(job, range);
    if (typeof claimed !== "string") return this.completeLanded(job, claimed.complete, range.total, body);
    const gen = claimed;
    const key = jobKeys.input(jobId);
    const renew = setInterval(() => {
      const until = new Date(this.parts.now() + leaseMs).toISOString();
      void jobStore.renewInputPart(this.db, jobId, gen, range.start, this.writerId, until).catch(() => {});
    }, leaseMs / 3);
    renew.unref();
    try {
      await writes.write(key, gen, range.start, length, body);
    } catch (err) {
      await jobStore.deleteWritingPart(this.db, jobId, gen, range.start, this.writerId).catch(() => {});
      if (err instanceof RangeBodyMismatch) {
        throw new Problem(
          400,
          "input_range_mismatch",
          `The part's body does not match its Content-Range (${length} bytes): ${err.message}. Nothing of it counts; send it again.`,
          { bytes_expected: length },
        );
      }
      throw err;
    } finally {
      clearInterval(renew);
    }
    const landed = await this.landPart(jobId, gen, range.start);
    const upload = this.partsUpload(job, gen);
    const prefix = landed[0]?.start === 0 ? landed[0].end : 0;
    void upload.hash.then((h) => h.advance(prefix)).catch(() => {});
    upload.early?.landed?.(landed);
    const complete = landed.length === 1 && prefix === range.total;
    if (!complete) return { job: await this.jobs.get(jobId), complete: false, landed };
    upload.completing ??= this.completeParts(jobId, gen, range.total, upload);
    return { job: await upload.completing, complete: true, landed };
  }

  /** Records the part `writing` (starting an upload in parts, or joining the job's current one). */
  private async claimPart(job: JobRow, range: ContentRange): Promise<string | { complete: string }> {
    const jobId = job.id;
    const now = this.parts.now();
    const at = new Date(now).toISOString();
    const length = range.end - range.start + 1;
    const refused = await this.db
      .transaction()
      .execute(async (trx): Promise<"closed" | string | { complete: string }> => {
        // the write first: it also orders parts of one job arriving at once (the job's row is locked)
        if (!(await jobStore.touchJob(trx, jobId, INPUT_STATES, at))) return "closed" as const;
        const current = await jobStore.job(trx, jobId);
        if (!current) return "closed" as const;
        await jobStore.dropStaleParts(trx, jobId, at);
        let gen = current.state === "uploading" ? current.upload_gen : null;
        const parts = gen ? await jobStore.inputParts(trx, jobId, gen) : [];
        const first = parts[0];
        if (!first) {
          // a new upload in parts (none yet, or another kind of upload was under way: replaced)
          gen = randomBytes(6).toString("hex");
          await jobStore.jobTransition(trx, jobId, INPUT_STATES, {
            state: "uploading",
            upload_gen: gen,
            segments_total: 0,
            segments_done: 0,
          });
          await jobStore.deleteSegments(trx, jobId);
          await jobStore.deleteInputPartsNotOf(trx, jobId, gen);
        } else {
          const total = toNumber(first.total);
          if (total !== range.total) {
            throw new Problem(
              409,
              "input_total_changed",
              `This upload's parts declare an input of ${total} bytes; this part says ${range.total}. Send parts of the same total, or send the whole input in one PUT to start over.`,
              { bytes_total: total, total_sent: range.total },
            );
          }
          const landedAll = mergeRanges(parts.filter((p) => p.state === "landed"));
          if (landedAll.length === 1 && landedAll[0]?.start === 0 && landedAll[0].end === total) {
            // every range landed already and the completion did not finish (it failed, or the process
            // stopped): this request completes it
            return { complete: gen as string };
          }
          const overlaps = parts.find(
            (p) =>
              toNumber(p.part_offset) <= range.end && range.start < toNumber(p.part_offset) + toNumber(p.part_length),
          );
          if (overlaps) {
            const landed = parts.filter((p) => p.state === "landed");
            throw new Problem(
              409,
              "input_range_overlaps",
              `Bytes ${range.start}-${range.end} overlap a part that has ${overlaps.state === "landed" ? "landed" : "is being received"} (bytes ${toNumber(overlaps.part_offset)}-${toNumber(overlaps.part_offset) + toNumber(overlaps.part_length) - 1}); send only the ranges not landed.`,
              {
                landed: inclusive(mergeRanges(landed)),
                writing: inclusive(mergeRanges(parts.filter((p) => p.state === "writing"))),
                bytes_total: total,
              },
            );
          }
          if (parts.length >= this.parts.maxParts) {
            throw new Problem(
              409,
              "input_too_many_parts",
              `This upload has ${parts.length} parts, the most one upload may have (JOB_UPLOAD_MAX_PARTS); send larger parts.`,
              { max_parts: this.parts.maxParts },
            );
          }
          const writing = parts.filter((p) => p.state === "writing").length;
          if (writing >= this.parts.maxStreams) {
            throw new Problem(
              409,
              "input_streams_busy",
              `${writing} parts of this job are being received, the most at once (JOB_UPLOAD_MAX_STREAMS); send this one when one of them has landed.`,
              { max_streams: this.parts.maxStreams },
            );
          }
        }
        await jobStore.insertInputPart(trx, {
          job_id: jobId,
          gen: gen as string,
          part_offset: range.start,
          part_length: length,
          total: range.total,
          state: "writing",
          writer: this.writerId,
          lease_until: new Date(now + this.parts.leaseMs).toISOString(),
          created_at: at,
          updated_at: at,
        });
        return gen as string;
      });
    if (refused === "closed") {
      this.transfers.assertAcceptsInput(await this.jobs.get(jobId));
      throw new Problem(409, "job_input_closed", `Job ${jobId} takes no more input.`);
    }
    return refused;
  }

  /** Completes an upload in parts whose every range landed (a completion cut short before). */
  private async completeLanded(job: JobRow, gen: string, total: number, body: Readable): Promise<PartResult> {
    body.resume(); // its bytes are not needed: every range is in the file
    const upload = this.partsUpload(job, gen);
    upload.completing ??= this.completeParts(job.id, gen, total, upload);
    return { job: await upload.completing, complete: true, landed: [{ start: 0, end: total }] };
  }

  /** The part landed (409 input_part_lost when its lease ran out meanwhile); the upload's landed ranges. */
  private async landPart(jobId: string, gen: string, offset: number): Promise<LandedRange[]> {
    const at = new Date(this.parts.now()).toISOString();
    const { open, won, parts } = await this.db.transaction().execute(async (trx) => {
      // the job's row first: it orders the landings of one job's parts (PostgreSQL: a row lock held
      // to the commit; SQLite: the write lock), so of two last parts landing at once the second
      // sees the first's row and completes the input (read in one transaction each, neither saw the other)
      const open = await jobStore.touchJob(trx, jobId, INPUT_STATES, at);
      const won = open && (await jobStore.landInputPart(trx, jobId, gen, offset, this.writerId, at));
      return { open, won, parts: await jobStore.inputParts(trx, jobId, gen) };
    });
    // cancelled, expired or complete meanwhile: that answer (409 job_cancelled, 410, 409 job_input_closed)
    if (!open) this.transfers.assertAcceptsInput(await this.jobs.get(jobId));
    if (!won) {
      throw new Problem(
        409,
        "input_part_lost",
        `The part at byte ${offset} was not recorded as landed: its lease ran out while it arrived, or the input was sent again meanwhile. Send it again.`,
      );
    }
    return mergeRanges(parts.filter((p) => p.state === "landed"));
  }

  /** This process's hash and early coding of upload `gen` (made on its first part here). */
  private partsUpload(job: JobRow, gen: string): PartsUpload {
    const k = `${job.id}:${gen}`;
    let upload = this.partsUploads.get(k);
    if (upload) return upload;
    const writes = this.storage.ranges;
    if (!writes) throw PARTS_UNSUPPORTED();
    const hash = writes.hash(jobKeys.input(job.id), gen);
    hash.catch(() => {});
    upload = { hash, early: this.jobs.scheduler?.early?.(job, gen) };
    this.partsUploads.set(k, upload);
    // uploads abandoned here: the oldest goes (its hash is read again from the file if it resumes)
    while (this.partsUploads.size > MAX_PARTS_UPLOADS) {
      const [oldest, old] = this.partsUploads.entries().next().value as [string, PartsUpload];
      this.partsUploads.delete(oldest);
      void old.hash.then((h) => h.drop()).catch(() => {});
    }
    return upload;
  }

  /** Every range landed: the input's digest, the file in place, the job queued (as a whole PUT). */
  private async completeParts(jobId: string, gen: string, total: number, upload: PartsUpload): Promise<JobRow> {
    const writes = this.storage.ranges;
    if (!writes) throw PARTS_UNSUPPORTED();
    try {
      const sha256 = await (await upload.hash).digest(total);
      await upload.early?.settled();
      try {
        await writes.complete(jobKeys.input(jobId), gen);
      } catch (err) {
        // another process completed it (its last part landed there at the same time), or the input
        // was sent again meanwhile (a whole PUT removed this upload's file)
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
        const job = await this.jobs.get(jobId);
        if (job.upload_gen !== gen) {
          throw new Problem(
            409,
            "upload_in_progress",
            `Another upload of job ${jobId} began while this one was received; that one is the job's input.`,
          );
        }
        return job;
      }
      const job = await this.transfers.complete(jobId, gen, { bytes: total, sha256 });
      await jobStore.deleteInputPartsNotOf(this.db, jobId, null);
      return job;
    } finally {
      this.partsUploads.delete(`${jobId}:${gen}`);
    }
  }
}
