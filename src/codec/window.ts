import { POOL_SIZE } from "./entropy/cm-pool.js";

/**
 * Independent chunks in flight at once: enough to keep every context-mixing worker busy. Chunks
 * of other chambers decode quickly on the caller's thread, so a window this size costs nothing.
 */
export const CHUNK_WINDOW = Math.max(2, POOL_SIZE);

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
