import type { Readable } from "node:stream";

/**
 * Where job data lives: files under DATA_DIR (default) or an S3-compatible bucket (S3_* settings).
 * Keys are plain paths: `jobs/<job_id>/input`, `jobs/<job_id>/out/<segment index>`.
 */
export interface ObjectStore {
  readonly kind: "local" | "s3";
  /**
   * Whether an object can be read while it is being written (`put` with `growing`, `get` with
   * `growing`): true for files on one machine; an S3 object exists only once its upload completes.
   */
  readonly readsGrowing: boolean;
  /**
   * Streams `body` into `key`, counting bytes and hashing them (SHA-256, hex). With `maxBytes`,
   * more bytes than that reject with ObjectTooLarge after keeping what fit (nothing is buffered whole).
   * With `growing` (only when `readsGrowing`): the bytes written so far can be read under that tag
   * before the object is complete, and `written` is told each new length once those bytes can be read.
   */
  put(key: string, body: Readable, opts?: PutOptions): Promise<{ bytes: number; sha256: string }>;
  /**
   * Reads `key`, or the inclusive byte range [start, end] of it. With `growing`: the object being
   * written under that tag, or the complete object once that write has finished.
   */
  get(key: string, range?: { start: number; end: number }, opts?: { growing?: string }): Promise<Readable>;
  /**
   * Reads at positions straight into the caller's buffers (no intermediate chunks): where the
   * store has random access (files). `get` is the way for stores without it.
   */
  openReader?(key: string, opts?: { growing?: string }): Promise<PositionalReader>;
  /** Size in bytes, or undefined when the object does not exist. */
  size(key: string): Promise<number | undefined>;
  /** Deletes every object whose key starts with `prefix`. */
  deletePrefix(prefix: string): Promise<void>;
  /**
   * Where the store can hand out links (S3, presigned): a GET URL, needing no credentials, for the
   * concatenation of `parts` in order, valid `expiresInSeconds` from `now`. One part: that object.
   * Several: one object `combined` holding them all, written on the first call (the parts streamed
   * through this process once, checked against `sha256` when given) and reused while it exists
   * with the expected size. Absent where the store has no URLs (files under DATA_DIR).
   */
  linkTo?(parts: readonly StoredPart[], opts: LinkOptions): Promise<string>;
  /**
   * Where an object can be written in ranges by several writers at once (files on one machine:
   * an input sent in parts with Content-Range, docs/suite.md "Several upload streams"). Absent on
   * S3 (its object exists only once one upload completes): such inputs are refused there.
   */
  readonly ranges?: RangeWrites;
}

/** Writes of a growing object (`key` under `tag`, readable with `get(…, { growing: tag })`) at offsets. */
export interface RangeWrites {
  /**
   * Writes `body` at `offset` of the growing object (created when missing; other writers may
   * write other ranges meanwhile). Exactly `length` bytes: a body that ends before, or goes on past
   * them, rejects with RangeBodyMismatch (the bytes written stay; the range is sent again).
   */
  write(key: string, tag: string, offset: number, length: number, body: Readable): Promise<void>;
  /** The growing object's SHA-256 from its first byte, computed as `advance` reports a longer landed prefix. */
  hash(
    key: string,
    tag: string,
  ): Promise<{ advance(n: number): void; digest(n: number): Promise<string>; drop(): void }>;
  /** The growing object, complete: renamed into place (a reader of the growing name keeps its bytes). */
  complete(key: string, tag: string): Promise<void>;
}

/** A range's body ended before its length, or went on past it. */
export class RangeBodyMismatch extends Error {
  constructor(
    readonly expected: number,
    readonly got: number,
  ) {
    super(
      got < expected ? `the body ended after ${got} of ${expected} bytes` : `the body is longer than ${expected} bytes`,
    );
    this.name = "RangeBodyMismatch";
  }
}

/** An object and its size in bytes (a part of a job's output). */
export interface StoredPart {
  key: string;
  bytes: number;
}

export interface LinkOptions {
  /** the key that holds the parts joined, when there are several */
  combined: string;
  expiresInSeconds: number;
  /** SHA-256 (hex) the joined bytes must have: a combined object that differs is deleted, and rejects */
  sha256?: string | null;
  /** the signing time (default: now); the URL expires `expiresInSeconds` after it */
  now?: Date;
}

export interface PositionalReader {
  /** fills `into` from `position` on; fewer bytes only at the end of the object */
  read(into: Uint8Array, position: number): Promise<number>;
  close(): Promise<void>;
}

export interface PutOptions {
  maxBytes?: number;
  growing?: { tag: string; written: (bytes: number) => void };
}

export class ObjectTooLarge extends Error {
  constructor(
    readonly limit: number,
    readonly kept: number,
  ) {
    super(`more than ${limit} bytes`);
    this.name = "ObjectTooLarge";
  }
}

export const jobKeys = {
  input: (jobId: string) => `jobs/${jobId}/input`,
  /** a segment's output; `gen`: the upload it was coded from (jobs.upload_gen) */
  segmentOut: (jobId: string, idx: number, gen?: string | null) =>
    `jobs/${jobId}/out/${gen ? `${gen}-` : ""}${String(idx).padStart(6, "0")}`,
  /** the whole output as one object (several segments joined), written for a link to it (`linkTo`) */
  output: (jobId: string) => `jobs/${jobId}/output`,
  prefix: (jobId: string) => `jobs/${jobId}/`,
};
