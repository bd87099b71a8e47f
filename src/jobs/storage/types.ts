import type { Readable } from "node:stream";

/**
 * Where job data lives: files under DATA_DIR (default) or an S3-compatible bucket (S3_* settings).
 * Keys are plain paths: `jobs/<job_id>/input`, `jobs/<job_id>/out/<segment index>`.
 */
export interface ObjectStore {
  readonly kind: "local" | "s3";
  /**
   * Streams `body` into `key`, counting bytes and hashing them (SHA-256, hex). With `maxBytes`,
   * more bytes than that reject with ObjectTooLarge after keeping what fit (nothing is buffered whole).
   */
  put(key: string, body: Readable, opts?: { maxBytes?: number }): Promise<{ bytes: number; sha256: string }>;
  /** Reads `key`, or the inclusive byte range [start, end] of it. */
  get(key: string, range?: { start: number; end: number }): Promise<Readable>;
  /** Size in bytes, or undefined when the object does not exist. */
  size(key: string): Promise<number | undefined>;
  /** Deletes every object whose key starts with `prefix`. */
  deletePrefix(prefix: string): Promise<void>;
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
  segmentOut: (jobId: string, idx: number) => `jobs/${jobId}/out/${String(idx).padStart(6, "0")}`,
  prefix: (jobId: string) => `jobs/${jobId}/`,
};
