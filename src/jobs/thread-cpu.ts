import { readFileSync } from "node:fs";

/**
 * The calling thread's time on a CPU so far, in milliseconds: the first field of
 * /proc/thread-self/schedstat (nanoseconds; Linux). Undefined where that file does not exist.
 * A codec thread's unit reports it beside its wall time, so `bench:suite` can tell a unit that
 * coded slowly from one that waited for a core (issue #23 item 6). About 10 µs a call. The kernel
 * brings a running thread's count up to date at scheduler ticks and switches only, so a reading
 * can lag by up to a tick (1-10 ms): a difference of two readings can exceed the wall time between
 * them by that much.
 */
export function threadCpuMs(): number | undefined {
  if (schedstat === null) return undefined;
  try {
    return Number(readFileSync(schedstat, "latin1").split(" ", 1)[0]) / 1e6;
  } catch {
    schedstat = null;
    return undefined;
  }
}
let schedstat: string | null = process.platform === "linux" ? "/proc/thread-self/schedstat" : null;
