import { describe, expect, it } from "vitest";
import {
  changed,
  checkRatio,
  memberKind,
  ROSTER_SIZE,
  shares,
  shareWithin,
} from "../../../src/olympiad/teams/ratio.js";

/** The team ratio rule, pure: integer arithmetic at the 30 % and 70 % boundaries. */

const team = (humans: number, members: number) => ({ humans, autonomous: members - humans });

describe("ratio rule", () => {
  it("3 humans of 10 is eligible, 2 of 10 is not", () => {
    expect(checkRatio(team(3, 10))).toMatchObject({ eligible: true, reasons: [] });
    const two = checkRatio(team(2, 10));
    expect(two.eligible).toBe(false);
    expect(two.reasons.map((r) => r.code)).toEqual(["human_share_below_min", "autonomous_share_above_max"]);
    expect(two.shares).toEqual({ humans: 2, autonomous: 8, members: 10, human_pct: 20, autonomous_pct: 80 });
  });

  it("7 humans of 10 is eligible, 8 of 10 is not", () => {
    expect(checkRatio(team(7, 10)).eligible).toBe(true);
    const eight = checkRatio(team(8, 10));
    expect(eight.eligible).toBe(false);
    expect(eight.reasons.map((r) => r.code)).toEqual(["human_share_above_max", "autonomous_share_below_min"]);
    expect(eight.reasons[0]?.detail).toContain("8/10");
  });

  it("decides on exact fractions, never on rounded percentages", () => {
    // 3/7 = 42.9 %, 2/7 = 28.6 % (rounds to 29, still below), 5/7 = 71.4 % (above)
    expect(checkRatio(team(3, 7)).eligible).toBe(true);
    expect(checkRatio(team(2, 7)).eligible).toBe(false);
    expect(checkRatio(team(5, 7)).eligible).toBe(false);
    // 15/50 = exactly 30 %, 35/50 = exactly 70 %: inclusive
    expect(checkRatio(team(15, 50)).eligible).toBe(true);
    expect(checkRatio(team(35, 50)).eligible).toBe(true);
    expect(checkRatio(team(14, 50)).eligible).toBe(false);
    expect(checkRatio(team(36, 50)).eligible).toBe(false);
    // 1/3 shows as 33 % (rounded down for display)
    expect(shares(team(1, 3))).toMatchObject({ human_pct: 33, autonomous_pct: 66 });
  });

  it("agrees with an exact rational comparison for every roster up to 50", () => {
    for (let n = 1; n <= ROSTER_SIZE; n++) {
      for (let h = 0; h <= n; h++) {
        // h/n in [3/10, 7/10]  ⇔  10h ≥ 3n and 10h ≤ 7n (a different but equivalent cross-multiplication)
        const expected = 10 * h >= 3 * n && 10 * h <= 7 * n && 10 * (n - h) >= 3 * n && 10 * (n - h) <= 7 * n;
        expect(checkRatio(team(h, n)).eligible, `${h}/${n}`).toBe(expected);
        expect(shareWithin(h, n)).toBe(10 * h >= 3 * n && 10 * h <= 7 * n);
      }
    }
  });

  it("a single member or an empty roster is never eligible", () => {
    expect(checkRatio(team(1, 1)).eligible).toBe(false);
    expect(checkRatio(team(0, 1)).eligible).toBe(false);
    expect(checkRatio(team(0, 0))).toMatchObject({ eligible: false, reasons: [{ code: "roster_empty" }] });
    expect(checkRatio(team(1, 2)).eligible).toBe(true);
  });

  it("counts human_for_self as human, agent_self and human_for_agent as autonomous", () => {
    expect(memberKind("human_for_self")).toBe("human");
    expect(memberKind("agent_self")).toBe("autonomous");
    expect(memberKind("human_for_agent")).toBe("autonomous");
  });

  it("computes the composition after a join or a leave", () => {
    expect(changed(team(3, 10), "human", -1)).toEqual({ humans: 2, autonomous: 7 });
    expect(changed(team(3, 10), "autonomous", 1)).toEqual({ humans: 3, autonomous: 8 });
  });
});
