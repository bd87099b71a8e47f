import { LEVELS, type Level } from "../codec/index.js";

/**
 * What each codec level costs in time, for the estimate of a suite quote. Measured on this
 * service's reference machine with the codec library, one job at a time in one process:
 *
 *   npx tsx bench/suite-levels.ts --mb 1
 *
 * (6 deterministic generated samples of 1 MB each: int32 random walk, int32 sine, float64 random
 * walk, English-like text, CSV rows, incompressible noise; figures are total input MB (10^6 B) over
 * total wall seconds, so the slowest data weighs most; the machine was shared: indicative.) Paste
 * the table the command prints here when the codec changes.
 */

export interface LevelThroughput {
  /** input MB (10^6 bytes) compressed per second */
  compress_mb_s: number;
  /** original MB (10^6 bytes) restored per second */
  decompress_mb_s: number;
  /** compressed / original bytes over the samples */
  ratio: number;
}

// measured 2026-11-24: Node v20.20.2, Intel(R) Xeon(R) Processor (2 cores), 6 samples × 1 MB
export const LEVEL_THROUGHPUT: Record<Level, LevelThroughput> = {
  fast: { compress_mb_s: 6.19, decompress_mb_s: 76.04, ratio: 0.339 },
  balanced: { compress_mb_s: 0.28, decompress_mb_s: 95.11, ratio: 0.275 },
  max: { compress_mb_s: 0.86, decompress_mb_s: 1.13, ratio: 0.25 },
};

export const SUITE_LEVELS = LEVELS;
/** The level of a suite job when the request names none. */
export const DEFAULT_SUITE_LEVEL: Level = "fast";

export type SuiteOp = "compress" | "decompress" | "roundtrip";

const LEVEL_TRAITS: Record<Level, string> = {
  fast: "one chamber tried per segment; quickest",
  balanced: "typed transforms with fast backends; slow to compress, fast to decompress",
  max: "strongest models (context mixing on text, CSV and JSON); text-like data decompresses about as slowly as it compresses",
};

/**
 * Estimated seconds of codec work for `bytes` at a level, for one worker thread (a job's segments
 * may run on several workers, so this is an upper bound for a machine with more). Compress reads
 * `bytes` of input; decompress writes `bytes` of output (for decompress the quoted bytes are the
 * decompressed size, issue #21); roundtrip compresses then decompresses the result. Upload and
 * download time are not included.
 */
export function estimateSeconds(bytes: number, op: SuiteOp, level: Level): number {
  const t = LEVEL_THROUGHPUT[level];
  const mb = bytes / 1e6;
  const compress = mb / t.compress_mb_s;
  // decompress speeds are in MB of output per second
  const decompress = mb / t.decompress_mb_s;
  const s = op === "compress" ? compress : op === "decompress" ? decompress : compress + decompress;
  return Math.max(1, Math.ceil(s));
}

/** One sentence on the level's speed for a quote. */
export function levelNote(level: Level): string {
  const t = LEVEL_THROUGHPUT[level];
  return `level ${level}: ${LEVEL_TRAITS[level]}; about ${t.compress_mb_s} MB/s to compress and ${t.decompress_mb_s} MB/s to decompress per worker thread (MB = 10^6 bytes, measured on the reference machine); the price does not depend on the level`;
}

/** Estimated seconds at every level, so a client can compare. */
export function estimatesByLevel(bytes: number, op: SuiteOp): Record<Level, number> {
  return Object.fromEntries(LEVELS.map((l) => [l, estimateSeconds(bytes, op, l)])) as Record<Level, number>;
}
