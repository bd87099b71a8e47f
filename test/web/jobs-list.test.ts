import { describe, expect, it } from "vitest";
import {
  actionsFor,
  KEPT_KEY,
  type KeyValueStore,
  lookupOutcome,
  MAX_KEPT,
  parseKept,
  readKept,
  withJob,
  withoutJob,
  writeKept,
} from "../../web/src/_jobs-list.js";

/** The pure logic of "Your jobs" on /jobs (web/src/_jobs-list.ts, issue #23 item 2). */

const memory = (): KeyValueStore & { data: Map<string, string> } => {
  const data = new Map<string, string>();
  return { data, getItem: (k) => data.get(k) ?? null, setItem: (k, v) => void data.set(k, v) };
};

describe("the jobs this browser keeps", () => {
  it("keeps jobs newest first, once each (kept again: moved to the front with its new token), at most MAX_KEPT", () => {
    let list = withJob([], { job_id: "job_a", job_token: "jt_1" }, 1);
    list = withJob(list, { job_id: "job_b", job_token: "jt_2" }, 2);
    list = withJob(list, { job_id: "job_a", job_token: "jt_3" }, 3);
    expect(list).toEqual([
      { job_id: "job_a", job_token: "jt_3", kept_at: 3 },
      { job_id: "job_b", job_token: "jt_2", kept_at: 2 },
    ]);
    expect(withoutJob(list, "job_a").map((j) => j.job_id)).toEqual(["job_b"]);
    for (let i = 0; i < MAX_KEPT + 5; i++) list = withJob(list, { job_id: `job_n${i}`, job_token: "jt" }, 10 + i);
    expect(list).toHaveLength(MAX_KEPT);
    expect(list[0]?.job_id).toBe(`job_n${MAX_KEPT + 4}`);
  });

  it("reads back what it wrote; leaves out anything malformed, never throws", () => {
    const store = memory();
    writeKept(store, withJob([], { job_id: "job_x", job_token: "jt_x" }, 5));
    expect(readKept(store)).toEqual([{ job_id: "job_x", job_token: "jt_x", kept_at: 5 }]);
    for (const raw of [null, "", "{", "{}", '"job_x"', "[1,null,{}]"]) expect(parseKept(raw)).toEqual([]);
    const mixed = JSON.stringify([
      { job_id: "job_ok", job_token: "jt_ok" },
      { job_id: "not-a-job", job_token: "jt" },
      { job_id: "job_ok", job_token: "jt_dup" },
      { job_id: "job_sp", job_token: "has space" },
      { job_id: "job_<x>", job_token: "jt" },
    ]);
    expect(parseKept(mixed)).toEqual([{ job_id: "job_ok", job_token: "jt_ok", kept_at: 0 }]);
    const refusing: KeyValueStore = {
      getItem: () => {
        throw new Error("SecurityError");
      },
      setItem: () => {
        throw new Error("QuotaExceededError");
      },
    };
    expect(readKept(refusing)).toEqual([]);
    expect(() => writeKept(refusing, [])).not.toThrow();
    expect(KEPT_KEY).toBe("labphi.jobs.kept");
  });

  it("offers cancel while the job waits, receives its input, is queued or runs; delete when waiting or ended; download when done", () => {
    expect(actionsFor("awaiting_input")).toEqual({ cancel: true, delete: true, download: false });
    expect(actionsFor("uploading")).toEqual({ cancel: true, delete: false, download: false });
    expect(actionsFor("queued")).toEqual({ cancel: true, delete: false, download: false });
    expect(actionsFor("running")).toEqual({ cancel: true, delete: false, download: false });
    expect(actionsFor("done")).toEqual({ cancel: false, delete: true, download: true });
    expect(actionsFor("failed")).toEqual({ cancel: false, delete: true, download: false });
    expect(actionsFor("cancelled")).toEqual({ cancel: false, delete: true, download: false });
    expect([200, 410, 404, 401, 500, 0].map(lookupOutcome)).toEqual([
      "shown",
      "gone",
      "gone",
      "refused",
      "error",
      "error",
    ]);
  });
});
