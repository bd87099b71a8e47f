import { describe, expect, it } from "vitest";
import {
  BYTES_PER_GB,
  BYTES_PER_MB,
  centsOfUnits,
  FREE_CAP_BYTES,
  MAX_JOB_BYTES,
  priceJob,
  SUITE_PRICING,
  suitePricingRecord,
  usdOfUnits,
} from "../../src/jobs/pricing.js";

const GB = BYTES_PER_GB;
const MB = BYTES_PER_MB;
const sumTiers = (p: ReturnType<typeof priceJob>) => p.tiers.reduce((a, t) => a + BigInt(t.amount_units), 0n);
const tier = (p: ReturnType<typeof priceJob>, name: string) => p.tiers.find((t) => t.tier === name);

describe("suite pricing (GB = 10^9 bytes, amounts in USDC atomic units)", () => {
  it.each([
    // the worked examples of issue #10
    ["50 GB → free", 50n * GB, 0n, 0n, 0],
    ["150 GB → 2,500,000 units", 150n * GB, 50n * GB, 2_500_000n, 250],
    ["300 GB → 9,000,000 units", 300n * GB, 200n * GB, 9_000_000n, 900],
    ["100 GB + 1 byte → the minimum", 100n * GB + 1n, 1n * MB, 50_000n, 5],
  ])("%s", (_name, bytes, billable, units, cents) => {
    const p = priceJob({ bytes });
    expect(p.billable_bytes).toBe(billable);
    expect(p.amount_units).toBe(units);
    expect(p.amount_cents).toBe(cents);
    expect(sumTiers(p)).toBe(units);
  });

  it("300 GB: 100 GB free, 100 billable GB at 0.05, 100 at 0.04 (bulk)", () => {
    const p = priceJob({ bytes: 300n * GB });
    expect(p.free_bytes).toBe(FREE_CAP_BYTES);
    expect(p.tiers.map((t) => [t.tier, t.bytes, t.amount_units])).toEqual([
      ["free", 100e9, "0"],
      ["standard", 100e9, "5000000"],
      ["bulk", 100e9, "4000000"],
      ["minimum", 0, "0"],
    ]);
    expect(tier(p, "standard")?.usd_per_gb).toBe("0.05");
    expect(tier(p, "bulk")?.usd_per_gb).toBe("0.04");
    expect(p.amount_usd).toBe("9.00");
  });

  it("exactly 100 GB is free; 1 byte is free", () => {
    for (const bytes of [1n, FREE_CAP_BYTES]) {
      const p = priceJob({ bytes });
      expect(p.amount_units).toBe(0n);
      expect(p.amount_cents).toBe(0);
      expect(p.billable_bytes).toBe(0n);
      expect(p.free_bytes).toBe(bytes);
      expect(p.minimum_applied).toBe(false);
      expect(p.amount_usd).toBe("0.00");
    }
  });

  it("100 GB + 1 byte: 1 MB billable, topped up to the 0.05 USD minimum", () => {
    const p = priceJob({ bytes: FREE_CAP_BYTES + 1n });
    expect(p.minimum_applied).toBe(true);
    expect(tier(p, "standard")?.amount_units).toBe("50");
    expect(tier(p, "minimum")?.amount_units).toBe("49950");
    expect(p.amount_usd).toBe("0.05");
  });

  it("rounds billable bytes up to whole MB (10^6 bytes)", () => {
    expect(priceJob({ bytes: FREE_CAP_BYTES + MB }).billable_bytes).toBe(MB);
    expect(priceJob({ bytes: FREE_CAP_BYTES + MB + 1n }).billable_bytes).toBe(2n * MB);
    // 1,000 MB billable = exactly the minimum; 1,001 MB = 50,050 units
    expect(priceJob({ bytes: FREE_CAP_BYTES + 1000n * MB }).amount_units).toBe(50_000n);
    expect(priceJob({ bytes: FREE_CAP_BYTES + 1000n * MB }).minimum_applied).toBe(false);
    expect(priceJob({ bytes: FREE_CAP_BYTES + 1000n * MB + 1n }).amount_units).toBe(50_050n);
  });

  it("card charges round up to the cent", () => {
    const p = priceJob({ bytes: FREE_CAP_BYTES + 1001n * MB });
    expect(p.amount_units).toBe(50_050n);
    expect(p.amount_usd).toBe("0.05005");
    expect(p.amount_cents).toBe(6);
    expect(centsOfUnits(0n)).toBe(0);
    expect(centsOfUnits(1n)).toBe(1);
    expect(centsOfUnits(10_000n)).toBe(1);
    expect(centsOfUnits(10_001n)).toBe(2);
  });

  it("bulk starts after the first 100 billable GB (a 200 GB job)", () => {
    const at = priceJob({ bytes: 200n * GB });
    expect(at.amount_units).toBe(5_000_000n);
    expect(tier(at, "bulk")?.bytes).toBe(0);
    const past = priceJob({ bytes: 200n * GB + 1n });
    expect(tier(past, "standard")?.bytes).toBe(100e9);
    expect(tier(past, "bulk")?.bytes).toBe(1e6);
    expect(past.amount_units).toBe(5_000_040n);
  });

  it("an identity's remaining monthly free cap limits the free part (never raises it)", () => {
    const none = priceJob({ bytes: 50n * GB, freeRemainingBytes: 0n });
    expect(none.free_bytes).toBe(0n);
    expect(none.amount_units).toBe(2_500_000n);
    const some = priceJob({ bytes: 50n * GB, freeRemainingBytes: 20n * GB });
    expect(some.free_bytes).toBe(20n * GB);
    expect(some.amount_units).toBe(1_500_000n);
    expect(tier(some, "free")?.limit_bytes).toBe(20e9);
    // a remaining figure above the cap (or negative) is clamped
    expect(priceJob({ bytes: 300n * GB, freeRemainingBytes: 500n * GB }).free_bytes).toBe(FREE_CAP_BYTES);
    expect(priceJob({ bytes: 3n * GB, freeRemainingBytes: -5n }).free_bytes).toBe(0n);
    // bulk still counts per job: 250 GB with 30 GB free = 100 GB standard + 120 GB bulk
    const big = priceJob({ bytes: 250n * GB, freeRemainingBytes: 30n * GB });
    expect(big.amount_units).toBe(5_000_000n + 4_800_000n);
  });

  it("free volume belongs to the caller: the record and the rules say per identity per month, not per job", () => {
    const r = suitePricingRecord();
    expect(r.note).toContain("per join-work identity per calendar month");
    expect(r.note).not.toMatch(/per job, and per/);
    // a caller with nothing left (an anonymous IP whose day is used, or anonymous free work off) pays from the first MB
    const p = priceJob({ bytes: 1n * MB, freeRemainingBytes: 0n });
    expect([p.free_bytes, p.amount_units]).toEqual([0n, 50_000n]);
    expect(tier(p, "free")?.rule).toMatch(/belongs to the caller/);
  });

  it("accepts numbers and refuses bytes outside 1 … 10^15", () => {
    expect(priceJob({ bytes: 150e9 }).amount_units).toBe(2_500_000n);
    expect(priceJob({ bytes: MAX_JOB_BYTES }).amount_units).toBe(5_000_000n + (MAX_JOB_BYTES - 200n * GB) / 25_000n);
    for (const bytes of [0, -1, 1.5, Number.NaN]) expect(() => priceJob({ bytes })).toThrow(RangeError);
    expect(() => priceJob({ bytes: MAX_JOB_BYTES + 1n })).toThrow(RangeError);
  });

  it("formats exact USD decimals", () => {
    expect(usdOfUnits(0n)).toBe("0.00");
    expect(usdOfUnits(50_000n)).toBe("0.05");
    expect(usdOfUnits(2_500_000n)).toBe("2.50");
    expect(usdOfUnits(100_000n)).toBe("0.10");
    expect(usdOfUnits(1n)).toBe("0.000001");
    expect(usdOfUnits(123_456_789n)).toBe("123.456789");
  });

  it("the spec's record is derived from the same integers (and the payments matrix uses it)", () => {
    const r = suitePricingRecord();
    expect(r).toMatchObject({
      free_cap_gb: 100,
      usd_per_gb_after_free: 0.05,
      usd_per_gb_bulk: 0.04,
      min_paid_usd: 0.05,
      first_paid_egress_ref_usd: 0.09,
      model: "freemium_suite_v4_undercut",
      try_gate: "retired",
      cents_per_gb_after_free: 5,
      cents_per_gb_bulk: 4,
      min_paid_cents: 5,
      first_paid_egress_ref_cents_per_gb: 9,
    });
    expect(suitePricingRecord()).toEqual(r);
    expect(SUITE_PRICING).toEqual({
      freeCapGb: 100,
      centsPerGbAfterFree: 5,
      centsPerGbBulk: 4,
      minPaidCents: 5,
      firstPaidEgressRefCentsPerGb: 9,
    });
  });
});
