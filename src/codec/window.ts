import type { Level } from "./chambers/types.js";
import { POOL_SIZE } from "./entropy/cm-pool.js";

/**
 * Independent chunks in flight at once: enough to keep every context-mixing worker busy. Chunks
 * of other chambers decode quickly on the caller's thread, so a window this size costs nothing.
 */
export const CHUNK_WINDOW = Math.max(2, POOL_SIZE);

/**
 * The window compress() codes its automatic chunks with. At fast, twice the worker count (at
 * least 4): zstd's worker pool takes queued chunks as its workers free up, so a worker that
 * finishes a chunk finds the next one waiting instead of idling until the caller has collected
 * the oldest result (chunks are collected in order). Fast's chunks cost only their input views
 * and zstd's output while queued. At balanced and max, CHUNK_WINDOW (brotli and xz hold large
 * dictionaries per chunk in flight).
 */
export function chunkWindow(level: Level): number {
  return level === "fast" ? Math.max(4, 2 * POOL_SIZE) : CHUNK_WINDOW;
}

/** inputs of this size and more are cut into independent chunks at fast and balanced */
export const PARALLEL_MIN_BYTES = 8 * 1024 * 1024;
/**
 * their chunk size at balanced: fixed (not derived from the core count), so the same input gives
 * the same container on every machine; 4 MiB keeps zstd -19's 8 MiB window mostly in use
 */
export const PARALLEL_CHUNK_BYTES = 4 * 1024 * 1024;
/**
 * and at fast: zstd -3/-4's window is 2 MiB, so 2 MiB chunks lose almost nothing (+2.4 KB, 0.08 %,
 * on the bench's 8 MiB speed-up input against 4 MiB chunks) and give the workers four chunks of
 * an 8 MiB input instead of two: a worker slowed by other work on its core leaves the others
 * more of the queue instead of holding the whole result back
 */
export const FAST_CHUNK_BYTES = 2 * 1024 * 1024;

/**
 * The chunk size compress() uses when the caller gives none: for inputs of PARALLEL_MIN_BYTES or
 * more, FAST_CHUNK_BYTES at fast and PARALLEL_CHUNK_BYTES at balanced (the chunks are coded at
 * once: zstd on its worker threads, brotli and xz on the libuv pool), none otherwise (max keeps
 * one model over the whole input, and codes text of PARALLEL_MIN_BYTES and more as two
 * context-mixing segments on two threads: chambers/text).
 */
export function autoChunkSize(level: Level, length: number, bare: boolean): number | undefined {
  if (level === "max" || bare || length < PARALLEL_MIN_BYTES) return undefined;
  return level === "fast" ? FAST_CHUNK_BYTES : PARALLEL_CHUNK_BYTES;
}

/**
 * Async jobs with at most `size` in flight, handed back in the order they were added. A job that
 * fails is reported when its turn comes (earlier results first), never as an unhandled rejection.
 */
export class OrderedWindow<T> {
  private readonly jobs: Promise<T>[] = [];
  constructor(private readonly size: number = CHUNK_WINDOW) {}

  /** add a started job; returns the results that had to be awaited to stay within the window */
  async add(job: Promise<T>): Promise<T[]> {
    job.catch(() => {}); // awaited in turn below
    this.jobs.push(job);
    const done: T[] = [];
    while (this.jobs.length >= this.size) done.push(await this.jobs.shift()!);
    return done;
  }

  /** every remaining result, in order */
  async drain(): Promise<T[]> {
    const done: T[] = [];
    while (this.jobs.length) done.push(await this.jobs.shift()!);
    return done;
  }
}

/** fn over items with at most `size` calls in flight; results in item order */
export async function mapOrdered<A, T>(
  items: readonly A[],
  fn: (item: A, index: number) => Promise<T>,
  size: number = CHUNK_WINDOW,
): Promise<T[]> {
  const w = new OrderedWindow<T>(size);
  const out: T[] = [];
  for (let i = 0; i < items.length; i++) out.push(...(await w.add(fn(items[i]!, i))));
  out.push(...(await w.drain()));
  return out;
}

/**
 * The chunks of `input` compress() codes independently. At fast each chunk is a copy with its own
 * buffer: zstd codes chunks on worker threads, and posting a view to a worker clones the view's
 * whole underlying buffer (measured: a 10-byte view of 64 MiB reached the worker as 64 MiB in
 * 100 ms), so four 2 MiB views of an 8 MiB input cost four 8 MiB copies out and four in; one 2 MiB
 * copy each costs 8 MiB once. Views elsewhere (balanced's brotli and xz run on the libuv pool
 * without a copy; max's context mixing copies what it posts).
 */
export function cutChunks(input: Uint8Array, chunkSize: number, level: Level): Uint8Array[] {
  const parts: Uint8Array[] = [];
  for (let off = 0; off < input.length; off += chunkSize) {
    const end = Math.min(input.length, off + chunkSize);
    parts.push(level === "fast" ? input.slice(off, end) : input.subarray(off, end));
  }
  return parts;
}
