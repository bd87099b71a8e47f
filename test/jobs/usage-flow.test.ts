import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestApp, testApp } from "../support/app.js";

/** The usage ledger behind a join-work identity's monthly free cap, end to end through the job API. */
describe("an identity's free cap follows its jobs' recorded usage", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp("sqlite", { JOB_WORKER_IN_SERVICE: "false" });
  });
  afterAll(async () => t.close());

  const GB = 1_000_000_000;
  const left = async (token: string) => {
    const r = await t.app.inject({
      method: "POST",
      url: "/api/ppp-quote",
      headers: { "x-identity-token": token },
      payload: { product: "auto", dataClass: "text", op: "compress", bytes: 1_000_000 },
    });
    expect(r.statusCode, r.body).toBe(200);
    return r.json().free_cap_remaining_bytes as number;
  };

  it("a free job holds its quoted free bytes until its input lands, then the ledger counts the real input", async () => {
    const join = await t.app.inject({
      method: "POST",
      url: "/api/join-work",
      payload: { name: "usage tester", intent: "measure the free cap.", seed: "a".repeat(33) },
    });
    expect(join.statusCode, join.body).toBeLessThan(300);
    const token = join.json().token as string;
    expect(await left(token)).toBe(100 * GB);
    const job = await t.app.inject({
      method: "POST",
      url: "/api/x402-suite",
      headers: { "x-identity-token": token },
      payload: { product: "auto", dataClass: "text", op: "compress", bytes: 60 * GB },
    });
    expect(job.statusCode, job.body).toBe(200);
    expect(await left(token)).toBe(40 * GB);
    const input = Buffer.alloc(3_000_000, 7);
    const put = await t.app.inject({
      method: "PUT",
      url: `/api/jobs/${job.json().job_id}/input`,
      headers: { authorization: `Bearer ${job.json().job_token}`, "content-type": "application/octet-stream" },
      payload: input,
    });
    expect(put.statusCode, put.body).toBeLessThan(300);
    const events = await t.app.services.db.kysely.selectFrom("usage_events").selectAll().execute();
    expect(events).toHaveLength(1);
    expect(Number(events[0]?.value_bytes)).toBe(3_000_000);
    expect(await left(token)).toBe(100 * GB - 3_000_000);
  });
});
