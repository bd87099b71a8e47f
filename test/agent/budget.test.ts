import { describe, expect, it } from "vitest";
import { Budget, BudgetError, parseUsd, usd } from "../../src/agent/budget.js";

describe("agent budget: exact decimal USD, checked before signing", () => {
  it("parses decimal USD strings exactly into atomic units", () => {
    expect(parseUsd("1")).toBe(1_000_000n);
    expect(parseUsd("0.05")).toBe(50_000n);
    expect(parseUsd("$2.50")).toBe(2_500_000n);
    expect(parseUsd("0.000001")).toBe(1n);
    expect(parseUsd("12.345678")).toBe(12_345_678n);
    // 0.1 + 0.2 would not be 0.3 in floating point; here it is exact
    expect(parseUsd("0.1") + parseUsd("0.2")).toBe(parseUsd("0.3"));
  });

  it("refuses what is not a USD amount", () => {
    for (const bad of ["", "-1", "1e3", "0.0000001", "1,5", "abc", "1.", ".5", "NaN"]) {
      expect(() => parseUsd(bad), bad).toThrow(RangeError);
    }
  });

  it("prints units as exact USD", () => {
    expect(usd(50_000n)).toBe("0.05");
    expect(usd(1_234_567n)).toBe("1.234567");
    expect(usd(0n)).toBe("0.00");
    expect(usd(2_500_000n)).toBe("2.50");
  });

  it("per-payment and session limits: check refuses, commit counts", () => {
    const b = new Budget({ perPaymentUnits: parseUsd("1"), sessionUnits: parseUsd("1.5") });
    expect(() => b.check(1_000_001n)).toThrow(BudgetError);
    b.commit(1_000_000n);
    expect(b.remaining).toBe(500_000n);
    const err = (() => {
      try {
        b.check(600_000n);
      } catch (e) {
        return e as BudgetError;
      }
    })();
    expect(err?.code).toBe("budget_session_exceeded");
    expect(() => b.commit(600_000n)).toThrow(BudgetError);
    expect(b.spent).toBe(1_000_000n);
    b.commit(500_000n);
    expect(b.remaining).toBe(0n);
  });

  it("defaults to the stock client's 1 USD per payment and no session limit", () => {
    const b = new Budget();
    expect(b.perPaymentUnits).toBe(1_000_000n);
    expect(b.remaining).toBeUndefined();
    expect(() => b.check(1_000_001n)).toThrow(/per-payment/);
  });
});
