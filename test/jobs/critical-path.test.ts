import { describe, expect, it } from "vitest";
import { criticalPath } from "../../bench/suite-critical-path.js";
import { waitsLine } from "../../src/jobs/execution.js";
import { run } from "../../src/jobs/segment-job.js";
import { threadCpuMs } from "../../src/jobs/thread-cpu.js";

/**
 * bench:suite's critical path reads the worker's own segment lines (issue #23 item 6): the line
 * execution.ts writes must be the one the bench parses, the units' on-CPU time included.
 */
describe("critical path: the worker's segment lines as bench:suite reads them", () => {
  const at = (s: number) => new Date(Date.UTC(2026, 10, 27, 12, 0, s)).toISOString();
  const line = (s: number, idx: number, what: string) => `${at(s)} job job_a segment ${idx}/2 ${what}`;

  it("adds up the waits, the units' wall time and their time on a CPU", () => {
    const lines = [
      line(1, 1, "started (attempt 1 of 3)"),
      line(2, 2, "started (attempt 1 of 3)"),
      line(
        5,
        1,
        `done: 8388608 → 2000000 bytes in 4.0 s (attempt 1; 1/2 done); ${waitsLine({ input: 100, threads: 2500, writer: 50, units: 2, coding: 3000, cpu: 2400 })}`,
      ),
      line(
        7,
        2,
        `done: 8388608 → 2000000 bytes in 5.0 s (attempt 1; 2/2 done); ${waitsLine({ input: 200, threads: 1500, writer: 25, units: 2, coding: 4000, cpu: 3500 })}`,
      ),
      // another job's line is not counted
      `${at(8)} job job_b segment 1/1 done: 1 → 1 bytes in 0.1 s (attempt 1; 1/1 done); ${waitsLine({ input: 0, threads: 0, writer: 0, units: 9, coding: 9000, cpu: 9000 })}`,
    ];
    const p = criticalPath(lines, "job_a", 2, {
      uploadStart: Date.parse(at(0)),
      uploadEnd: Date.parse(at(3)),
      downloadEnd: Date.parse(at(8)),
    });
    expect(p).toMatchObject({
      segments: 2,
      waits_logged: true,
      units: 4,
      before_coding_s: 1,
      coding_s: 6,
      after_coding_s: 1,
      threads_busy_s: 7,
      threads_on_cpu_s: 5.9,
      threads_capacity_s: 12,
      waited: { input_s: 0.3, threads_s: 4, writer_s: 0.075 },
      started_after_upload: 0,
    });
  });

  it("reads a line without the on-CPU time (a worker before it) as all on a CPU", () => {
    const p = criticalPath(
      [
        line(1, 1, "started (attempt 1 of 3)"),
        line(
          3,
          1,
          "done: 1 → 1 bytes in 2.0 s (attempt 1; 1/1 done); waited input 0.000 s, threads 0.000 s, writer 0.000 s; 1 units coded in 1.500 thread-s",
        ),
      ],
      "job_a",
      1,
      { uploadStart: Date.parse(at(0)), uploadEnd: Date.parse(at(0)), downloadEnd: Date.parse(at(4)) },
    );
    expect(p).toMatchObject({ units: 1, threads_busy_s: 1.5, threads_on_cpu_s: 1.5 });
  });
});

describe.runIf(process.platform === "linux")("a unit's time on a CPU (Linux)", () => {
  it("is reported by the codec thread's unit beside its wall time, and never above it by more than a scheduler tick", async () => {
    const c0 = threadCpuMs();
    const reply = await run({
      op: "compress",
      level: "fast",
      input: new Uint8Array(Buffer.from("level=info msg=coded worker=7\n".repeat(20_000))),
    });
    const c1 = threadCpuMs();
    expect(typeof c0).toBe("number");
    expect(c1 as number).toBeGreaterThan(c0 as number);
    expect(typeof reply.cpu).toBe("number");
    expect(reply.cpu as number).toBeGreaterThan(0);
    // schedstat counts nanoseconds of this thread on a CPU: at most the wall time it spans, plus
    // one scheduler tick, since the kernel brings a running thread's count up to date at ticks
    // and switches only (the reading at the start can lag by a tick: 1.8 ms over the wall time in
    // one clean-clone run). A tick is at most 10 ms (CONFIG_HZ ≥ 100).
    expect(reply.cpu as number).toBeLessThanOrEqual((reply.ms as number) + 10);
  });
});
