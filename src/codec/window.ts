import type { Level } from "./chambers/types.js";
import { POOL_SIZE } from "./entropy/cm-pool.js";

/**
 * Independent chunks in flight at once: enough to keep every context-mixing worker busy. Chunks
 * of other chambers decode quickly on the caller's thread, so a window this size costs nothing.
 */
export const CHUNK_WINDOW = Math.max(2, POOL_SIZE);

/** inputs of this size and more are cut into independent chunks at fast and balanced */
export const PARALLEL_MIN_BYTES = 8 * 1024 * 1024;
/**
 * their chunk size: fixed (not derived from the core count), so the same input gives the same
 * container on every machine; 4 MiB keeps zstd -19's 8 MiB window mostly in use
 */
export const PARALLEL_CHUNK_BYTES = 4 * 1024 * 1024;

/**
 * The chunk size compress() uses when the caller gives none: PARALLEL_CHUNK_BYTES for inputs of
 * PARALLEL_MIN_BYTES or more at fast and balanced (the chunks are coded at once: zstd on its worker
 * threads, brotli and xz on the libuv pool), none otherwise (max keeps one model over the whole
 * input; its context-mixing segments already run on two threads).
 */
export function autoChunkSize(level: Level, length: number, bare: boolean): number | undefined {
  return level !== "max" && !bare && length >= PARALLEL_MIN_BYTES ? PARALLEL_CHUNK_BYTES : undefined;
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
