import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../src/db/database.js";
import { periodBounds, periodOf, suiteUsageId, UsageLedger } from "../../src/jobs/usage.js";
import { ENGINES, freshDatabase } from "../support/databases.js";

describe("usage periods", () => {
  it("are UTC calendar months", () => {
    expect(periodOf(new Date("2026-03-31T23:59:59.999Z"))).toBe("2026-03");
    expect(periodOf(new Date("2026-04-01T00:00:00.000Z"))).toBe("2026-04");
    expect(periodBounds("2026-12")).toEqual({ start: "2026-12-01T00:00:00.000Z", end: "2027-01-01T00:00:00.000Z" });
    expect(() => periodBounds("2026-1")).toThrow(RangeError);
    expect(suiteUsageId("job_1")).toBe("suite:job_1:input");
  });
});

describe.each(ENGINES)("usage ledger (%s)", (engine) => {
  let db: Db;
  let ledger: UsageLedger;
  const march = new Date("2026-03-15T10:00:00Z");

  beforeAll(async () => {
    db = (await freshDatabase(engine)).db;
    ledger = new UsageLedger(db.kysely, () => march);
  });
  afterAll(() => db.close());

  it("appends an event once per idempotency key and sums per identity and month", async () => {
    const e = {
      id: "suite:job_1:input",
      identityId: "idn_a",
      meter: "suite_bytes" as const,
      valueBytes: 7_000_000_000,
    };
    expect((await ledger.record({ ...e, jobId: "job_1", quoteId: "qt_1" })).recorded).toBe(true);
    const dup = await ledger.record({ ...e, valueBytes: 1 });
    expect(dup.recorded).toBe(false);
    expect(Number(dup.event.value_bytes)).toBe(7_000_000_000);
    expect(dup.event).toMatchObject({ period: "2026-03", job_id: "job_1", quote_id: "qt_1", identity_id: "idn_a" });
    await ledger.record({ ...e, id: "suite:job_2:input", valueBytes: 3_000_000_000 });
    await ledger.record({ ...e, id: "suite:job_3:input", valueBytes: 5, at: new Date("2026-02-28T23:59:59Z") });
    await ledger.record({ ...e, id: "suite:job_4:input", identityId: "idn_b", valueBytes: 11 });
    await ledger.record({ ...e, id: "suite:job_5:input", identityId: null, valueBytes: 13 });
    expect(await ledger.monthTotal("idn_a")).toBe(10_000_000_000n);
    expect(await ledger.monthTotal("idn_a", "2026-02")).toBe(5n);
    expect(await ledger.monthTotal("idn_a", "2026-04")).toBe(0n);
    expect(await ledger.monthTotal("idn_b", "2026-03")).toBe(11n);
    expect(await ledger.monthTotal("idn_none", "2026-03")).toBe(0n);
  });

  it("holds values beyond 2^32 and negative corrections exactly", async () => {
    await ledger.record({ id: "big", identityId: "idn_c", meter: "suite_bytes", valueBytes: 10n ** 15n });
    await ledger.record({ id: "big:fix", identityId: "idn_c", meter: "suite_bytes", valueBytes: -1n });
    expect(await ledger.monthTotal("idn_c")).toBe(10n ** 15n - 1n);
  });

  it("works inside the caller's transaction: a repeat does not abort it, a rollback drops the event", async () => {
    await db.kysely.transaction().execute(async (trx) => {
      expect(
        (await ledger.record({ id: "tx:1", identityId: "idn_d", meter: "suite_bytes", valueBytes: 4 }, trx)).recorded,
      ).toBe(true);
      expect(
        (await ledger.record({ id: "tx:1", identityId: "idn_d", meter: "suite_bytes", valueBytes: 4 }, trx)).recorded,
      ).toBe(false);
      // the transaction is still usable after the conflict
      expect(await ledger.monthTotal("idn_d", "2026-03", "suite_bytes", trx)).toBe(4n);
    });
    await expect(
      db.kysely.transaction().execute(async (trx) => {
        await ledger.record({ id: "tx:2", identityId: "idn_d", meter: "suite_bytes", valueBytes: 100 }, trx);
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect(await ledger.monthTotal("idn_d")).toBe(4n);
  });

  it("refuses malformed events", async () => {
    await expect(ledger.record({ id: "", identityId: null, meter: "suite_bytes", valueBytes: 1 })).rejects.toThrow(
      RangeError,
    );
    await expect(ledger.record({ id: "x", identityId: null, meter: "bogus" as never, valueBytes: 1 })).rejects.toThrow(
      RangeError,
    );
    await expect(ledger.record({ id: "y", identityId: null, meter: "suite_bytes", valueBytes: 1.5 })).rejects.toThrow(
      RangeError,
    );
  });
});
