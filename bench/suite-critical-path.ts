/**
 * bench:suite's critical path (issue #23 item 6), from the worker's own log lines (src/jobs/execution.ts):
 *
 *   <ISO time> job <id> segment <i>/<n> started (attempt …)
 *   <ISO time> job <id> segment <i>/<n> done: … ; waited input <s> s, threads <s> s, writer <s> s; <u> units coded in <s> thread-s (<s> on a CPU)
 *
 * End to end = before the coding (upload start → first segment started: the first segment's bytes
 * landing, the queue handing it to the worker) + the coding (first segment started → last segment
 * done) + after the coding (last segment done → output downloaded: the job's digest, the client
 * seeing `done`, the download). Within the coding, the threads' busy time (sum of the units' time
 * on the threads) against threads × its span, and where the segments waited: for input, for the
 * threads (a unit's output, or room in the in-flight bytes), for the writer (segment-seconds: two
 * segments at once wait at the same time).
 */

export interface CriticalPath {
  segments: number;
  /** whether the worker logged its waits and units' time (from issue #23 on): else those are 0 */
  waits_logged: boolean;
  /** upload start → first segment started, seconds */
  before_coding_s: number;
  /** first segment started → last segment done */
  coding_s: number;
  /** last segment done → last byte downloaded */
  after_coding_s: number;
  /** upload start → last segment done */
  coding_end_s: number;
  /** the units' time on the threads, summed */
  threads_busy_s: number;
  /**
   * of which the threads were on a CPU (their schedstat): busy − on a CPU is the time a thread
   * was ready to code but waited for a core (other processes, or the worker's own main thread)
   */
  threads_on_cpu_s: number;
  /** units coded */
  units: number;
  /** threads × coding_s */
  threads_capacity_s: number;
  threads_busy_share: number;
  /**
   * the threads' busy time over threads × the whole end to end (upload start → output downloaded):
   * what share of the threads the job path kept coding. The end to end / (library on N threads at
   * once) is about this share × how fast a unit codes in the worker against the library's pass.
   */
  threads_busy_share_end_to_end: number;
  /** segment-seconds */
  waited: { input_s: number; threads_s: number; writer_s: number };
  /** segment starts after the last byte of the upload (as a share of all) */
  started_after_upload: number;
}

const START = /^(\S+Z) job (\S+) segment (\d+)\/\d+ started/;
/** the waits are absent from the lines of versions before issue #23 (then only the spans are known) */
const DONE =
  /^(\S+Z) job (\S+) segment (\d+)\/\d+ done: (?:.*waited input ([\d.]+) s, threads ([\d.]+) s, writer ([\d.]+) s; (\d+) units coded in ([\d.]+) thread-s(?: \(([\d.]+) on a CPU\))?)?/;

/**
 * `lines`: the worker's output; times in epoch milliseconds (the same clock as the log's ISO times):
 * upload start, upload end, download end.
 */
export function criticalPath(
  lines: string[],
  jobId: string,
  threads: number,
  at: { uploadStart: number; uploadEnd: number; downloadEnd: number },
): CriticalPath | undefined {
  const starts = new Map<string, number>();
  const dones = new Map<string, number>();
  const waited = { input_s: 0, threads_s: 0, writer_s: 0 };
  let busy = 0;
  let onCpu = 0;
  let units = 0;
  let logged = false;
  for (const line of lines) {
    const s = START.exec(line);
    if (s && s[2] === jobId) {
      // the first start of a segment (a retry starts it again)
      if (!starts.has(s[3] as string)) starts.set(s[3] as string, Date.parse(s[1] as string));
      continue;
    }
    const d = DONE.exec(line);
    if (d && d[2] === jobId) {
      dones.set(d[3] as string, Date.parse(d[1] as string));
      waited.input_s += Number(d[4] ?? 0);
      waited.threads_s += Number(d[5] ?? 0);
      waited.writer_s += Number(d[6] ?? 0);
      busy += Number(d[8] ?? 0);
      onCpu += Number(d[9] ?? d[8] ?? 0);
      units += Number(d[7] ?? 0);
      if (d[8] !== undefined) logged = true;
    }
  }
  if (starts.size === 0 || dones.size === 0) return undefined;
  const first = Math.min(...starts.values());
  const last = Math.max(...dones.values());
  const s = (ms: number) => Math.round(ms) / 1000;
  const coding = s(last - first);
  const capacity = threads * coding;
  const r3 = (x: number) => Math.round(x * 1000) / 1000;
  return {
    segments: dones.size,
    waits_logged: logged,
    before_coding_s: s(first - at.uploadStart),
    coding_s: coding,
    after_coding_s: s(at.downloadEnd - last),
    coding_end_s: s(last - at.uploadStart),
    threads_busy_s: r3(busy),
    threads_on_cpu_s: r3(onCpu),
    units,
    threads_capacity_s: r3(capacity),
    threads_busy_share: capacity > 0 ? r3(busy / capacity) : 0,
    threads_busy_share_end_to_end: r3(busy / (threads * ((at.downloadEnd - at.uploadStart) / 1000))),
    waited: { input_s: r3(waited.input_s), threads_s: r3(waited.threads_s), writer_s: r3(waited.writer_s) },
    started_after_upload: r3([...starts.values()].filter((t) => t > at.uploadEnd).length / starts.size),
  };
}
