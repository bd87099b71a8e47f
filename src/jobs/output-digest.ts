import { createHash, type Hash } from "node:crypto";
import { jobKeys, type ObjectStore } from "./storage/types.js";
import type { JobSegmentRow } from "./tables.js";

/**
 * The SHA-256 of a job's whole output (its segments' outputs in index order), kept as the segments
 * finish instead of read once more at the job's end (issue #23 item 6: the re-read of the whole
 * output was most of the time between the last segment and the job being done).
 *
 * SHA-256 is sequential, so each job has one running hash and the index of the next segment it
 * takes. A segment this process coded is hashed (read back from the store: its bytes are in the
 * page cache) as soon as it and every segment before it are hashed; the segments coded by another
 * process are read when the job ends (`digest`), by whichever process finalizes it, from where its
 * running hash stopped (a fresh process, or one that never coded a segment of the job: from the
 * first). The digest is the same bytes' SHA-256 whatever the order segments finish in; each
 * segment's length is checked against what its row records.
 *
 * The running hashes live in this process only: at most `maxJobs` of them (the oldest one goes:
 * that job's end reads its whole output, as before). A hash that failed half-way (a read error) is
 * dropped, and the job's end starts over from the first segment.
 */

interface Running {
  gen: string | null;
  hash: Hash;
  /** the next segment index to hash */
  next: number;
  /** bytes hashed so far */
  bytes: number;
  /** segments coded here, not hashed yet: index → output bytes */
  coded: Map<number, number>;
  /** the hashing in progress (one at a time per job) */
  chain: Promise<void>;
  /** set when a read failed: the state is no longer the prefix's hash */
  broken: boolean;
}

export class OutputDigests {
  private readonly jobs = new Map<string, Running>();
  /** digests being taken (two segments that end at once both find the job complete) */
  private readonly taking = new Map<string, { gen: string | null; done: Promise<{ bytes: number; sha256: string }> }>();

  constructor(
    private readonly store: ObjectStore,
    private readonly maxJobs = 256,
    private readonly log: (line: string) => void = () => {},
  ) {}

  /** How many jobs have a running hash here (for tests and the log). */
  get size(): number {
    return this.jobs.size;
  }

  /** The index of the next segment the running hash of `jobId` / `gen` takes (0 when it has none). */
  position(jobId: string, gen: string | null): number {
    const r = this.jobs.get(jobId);
    return r && r.gen === gen && !r.broken ? r.next : 0;
  }

  /**
   * Segment `idx` of upload `gen` was coded here into `bytes` of output: hash it (in the background,
   * one job's segments one at a time) once every segment before it is hashed.
   */
  coded(jobId: string, gen: string | null, idx: number, bytes: number): void {
    const r = this.running(jobId, gen);
    if (idx < r.next) return;
    r.coded.set(idx, bytes);
    r.chain = r.chain.then(() => this.advance(jobId, r));
  }

  /**
   * The size and SHA-256 of the whole output of `segments` (every one done, in index order, of one
   * upload): the running hash carried on over the segments it has not taken yet. The running hash
   * is forgotten afterwards.
   */
  digest(jobId: string, segments: readonly JobSegmentRow[]): Promise<{ bytes: number; sha256: string }> {
    const gen = segments[0]?.gen ?? null;
    const taken = this.taking.get(jobId);
    if (taken && taken.gen === gen) return taken.done;
    const done = this.take(jobId, gen, segments).finally(() => {
      if (this.taking.get(jobId)?.done === done) this.taking.delete(jobId);
    });
    this.taking.set(jobId, { gen, done });
    return done;
  }

  private async take(
    jobId: string,
    gen: string | null,
    segments: readonly JobSegmentRow[],
  ): Promise<{ bytes: number; sha256: string }> {
    let r = this.jobs.get(jobId);
    if (r) await r.chain;
    if (!r || r.gen !== gen || r.broken || this.jobs.get(jobId) !== r) r = fresh(gen);
    else this.jobs.delete(jobId);
    for (const s of segments.slice(r.next)) {
      if (s.idx !== r.next) throw new Error(`job ${jobId}: segment ${r.next} missing from the output`);
      await this.hashSegment(jobId, r, s.gen, Number(s.out_bytes ?? 0));
    }
    const expected = segments.reduce((a, s) => a + Number(s.out_bytes ?? 0), 0);
    if (r.bytes !== expected) {
      throw new Error(`job ${jobId}: segment outputs hold ${r.bytes} bytes, the segments record ${expected}`);
    }
    return { bytes: r.bytes, sha256: r.hash.digest("hex") };
  }

  /** Forgets the running hash of `jobId` (the job failed, was cancelled or was sent again). */
  forget(jobId: string): void {
    this.jobs.delete(jobId);
  }

  private running(jobId: string, gen: string | null): Running {
    const r = this.jobs.get(jobId);
    if (r && r.gen === gen && !r.broken) return r;
    const made = fresh(gen);
    this.jobs.delete(jobId);
    this.jobs.set(jobId, made);
    // the oldest running hash goes: that job's end reads its whole output
    while (this.jobs.size > this.maxJobs) this.jobs.delete(this.jobs.keys().next().value as string);
    return made;
  }

  /** Hashes the segments coded here that follow the hashed prefix (runs on the job's chain). */
  private async advance(jobId: string, r: Running): Promise<void> {
    if (r.broken || this.jobs.get(jobId) !== r) return;
    try {
      for (let bytes = r.coded.get(r.next); bytes !== undefined; bytes = r.coded.get(r.next)) {
        r.coded.delete(r.next);
        await this.hashSegment(jobId, r, r.gen, bytes);
      }
    } catch (err) {
      // the job's end reads its output again from the first segment
      r.broken = true;
      this.jobs.delete(jobId);
      this.log(`job ${jobId}: the output's running SHA-256 stopped (${(err as Error).message}); read at the end`);
    }
  }

  /** Reads segment `r.next`'s output into the hash, checking its length. */
  private async hashSegment(jobId: string, r: Running, gen: string | null, expected: number): Promise<void> {
    const idx = r.next;
    let got = 0;
    for await (const c of (await this.store.get(jobKeys.segmentOut(jobId, idx, gen))) as AsyncIterable<Buffer>) {
      r.hash.update(c);
      got += c.length;
    }
    if (got !== expected) {
      r.broken = true;
      throw new Error(`job ${jobId}: segment ${idx + 1}'s output holds ${got} bytes, its row records ${expected}`);
    }
    r.bytes += got;
    r.next = idx + 1;
  }
}

const fresh = (gen: string | null): Running => ({
  gen,
  hash: createHash("sha256"),
  next: 0,
  bytes: 0,
  coded: new Map(),
  chain: Promise.resolve(),
  broken: false,
});
