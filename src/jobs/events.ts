/**
 * In-process wake-ups for a job's followers (issue #23 item 6): when a segment of job X is done, or
 * X ends, here, whoever waits on X in this process (a followed download, `GET
 * /api/jobs/:id/output?follow=1`) looks at once instead of at its next poll. Across processes (a
 * `labphi worker` beside the service) nothing arrives here: the waiter's poll is the fallback, so
 * a wait is always bounded by its `ms`.
 */
export class JobEvents {
  private readonly waiters = new Map<string, Set<() => void>>();

  /** Something of job `jobId` changed in this process (a segment done, the job's end). */
  changed(jobId: string): void {
    const set = this.waiters.get(jobId);
    if (!set) return;
    this.waiters.delete(jobId);
    for (const wake of set) wake();
  }

  /** Resolves on the next `changed(jobId)`, after `ms`, or when `signal` aborts (never rejects). */
  wait(jobId: string, ms: number, signal?: AbortSignal): Promise<void> {
    return this.subscribe(jobId, ms, signal).done;
  }

  /**
   * `wait`, registered now and awaited later: a change between this call and the await (while the
   * waiter reads the job's state) is not missed. `cancel` drops the waiter (it resolves).
   */
  subscribe(jobId: string, ms: number, signal?: AbortSignal): { done: Promise<void>; cancel: () => void } {
    let cancel = () => {};
    const done = new Promise<void>((resolve) => {
      let set = this.waiters.get(jobId);
      if (!set) {
        set = new Set();
        this.waiters.set(jobId, set);
      }
      const waiters = set;
      const finish = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", finish);
        waiters.delete(finish);
        if (waiters.size === 0 && this.waiters.get(jobId) === waiters) this.waiters.delete(jobId);
        resolve();
      };
      cancel = finish;
      const timer = setTimeout(finish, ms);
      signal?.addEventListener("abort", finish, { once: true });
      if (signal?.aborted) finish();
      else waiters.add(finish);
    });
    return { done, cancel };
  }

  /** Waiters in this process (for tests). */
  get waiting(): number {
    let n = 0;
    for (const set of this.waiters.values()) n += set.size;
    return n;
  }
}

/** This process's job events: the runner and the transfers of one process share it. */
export const jobEvents = new JobEvents();
