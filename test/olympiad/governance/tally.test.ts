import { describe, expect, it } from "vitest";
import {
  type Choice,
  compare,
  DECISION_RULES,
  fraction,
  passes,
  ppm,
  type TallyVote,
  tally,
  tallyJson,
} from "../../../src/olympiad/governance/tally.js";
import { CONSTITUENCIES, type Constituency, GOVERNANCE_WEIGHTS_BP } from "../../../src/olympiad/governance/weights.js";

/** n votes of one choice in one constituency. */
const many = (constituency: Constituency, choice: Choice, n: number): TallyVote[] =>
  Array.from({ length: n }, () => ({ constituency, choice }));

const frac = (num: number, den: number) => ({ num: BigInt(num), den: BigInt(den) });
const of = (t: ReturnType<typeof tally>, c: Constituency) => t.constituencies.find((x) => x.constituency === c);

describe("weighted tally", () => {
  it("mixes uneven constituencies by their weights: 1 captain yes, 10 agents no, 3 community yes → 12/17", () => {
    const votes = [
      ...many("team_captains", "yes", 1),
      ...many("entered_agents", "no", 10),
      ...many("public_community", "yes", 3),
    ];
    const t = tally(votes, DECISION_RULES.new_games);
    // stewards and integrity are empty: 0.4 + 0.25 + 0.2 = 0.85 shares their 0.15 in proportion
    expect(t.mixed_yes).toEqual(frac(12, 17)); // (4000·1 + 2500·0 + 2000·1) / 8500
    expect(ppm(t.mixed_yes ?? frac(0, 1))).toBe(705_882);
    expect(of(t, "team_captains")?.effective_weight).toEqual(frac(8, 17));
    expect(of(t, "entered_agents")?.effective_weight).toEqual(frac(5, 17));
    expect(of(t, "public_community")?.effective_weight).toEqual(frac(4, 17));
    expect(of(t, "lab_stewards")).toMatchObject({ empty: true, yes_share: null, effective_weight: frac(0, 1) });
    expect(of(t, "residual_integrity")).toMatchObject({ empty: true, yes_share: null });
    expect(of(t, "entered_agents")).toMatchObject({ yes: 0, no: 10, yes_share: frac(0, 1), empty: false });
    // 10 of the 14 voters said no, yet the weighted result passes: each constituency counts as a whole
    expect(t).toMatchObject({ voters: 14, decisive: 14, quorum_met: true, outcome: "passed" });
    // the same votes are too few for a prize-pool release (quorum 15)
    expect(tally(votes, DECISION_RULES.prize_pool_release).outcome).toBe("no_quorum");
  });

  it("matches the worked example of the documentation: every constituency voting → 259/600, failed", () => {
    const votes = [
      ...many("team_captains", "yes", 2),
      ...many("team_captains", "no", 1),
      ...many("entered_agents", "yes", 3),
      ...many("entered_agents", "no", 7),
      ...many("public_community", "yes", 1),
      ...many("public_community", "no", 4),
      ...many("public_community", "abstain", 2),
      ...many("lab_stewards", "no", 1),
      ...many("residual_integrity", "yes", 1),
    ];
    const t = tally(votes, DECISION_RULES.change_games);
    // 0.4·2/3 + 0.25·3/10 + 0.2·1/5 + 0.1·0 + 0.05·1 = 259/600 ≈ 0.431667
    expect(t.mixed_yes).toEqual(frac(259, 600));
    expect(t.voters).toBe(22);
    expect(t.decisive).toBe(20);
    expect(of(t, "public_community")).toMatchObject({ yes: 1, no: 4, abstain: 2, yes_share: frac(1, 5) });
    for (const c of CONSTITUENCIES) {
      expect(of(t, c)?.effective_weight).toEqual(fraction(GOVERNANCE_WEIGHTS_BP[c], 10_000));
    }
    expect(t.outcome).toBe("failed");
    const json = tallyJson(t, "2030-01-01T00:00:00.000Z");
    expect(json.mixed_yes).toEqual({ num: "259", den: "600" });
    expect(json.mixed_yes_ppm).toBe(431_666); // floored, display only
  });

  it("gives an empty constituency's weight to the others: only stewards voting decide alone", () => {
    const t = tally(
      [...many("lab_stewards", "yes", 3), ...many("lab_stewards", "no", 2)],
      DECISION_RULES.event_weights,
    );
    expect(of(t, "lab_stewards")?.effective_weight).toEqual(frac(1, 1));
    expect(t.mixed_yes).toEqual(frac(3, 5));
    expect(t.outcome).toBe("passed");
  });

  it("counts a constituency whose members only abstained as empty (its weight is redistributed)", () => {
    const votes = [
      ...many("team_captains", "abstain", 4),
      ...many("public_community", "yes", 1),
      ...many("entered_agents", "no", 1),
    ];
    const t = tally(votes, DECISION_RULES.new_games);
    expect(of(t, "team_captains")).toMatchObject({ abstain: 4, empty: true });
    // 2000·1 / (2500 + 2000)
    expect(t.mixed_yes).toEqual(frac(4, 9));
    expect(t).toMatchObject({ voters: 6, decisive: 2, quorum_met: true, outcome: "failed" });
  });

  it("has no mixed share without a decisive vote and then lacks quorum", () => {
    const t = tally(many("public_community", "abstain", 9), DECISION_RULES.new_games);
    expect(t.mixed_yes).toBeNull();
    expect(t.constituencies.every((c) => c.empty && c.effective_weight.num === 0n)).toBe(true);
    expect(t).toMatchObject({ voters: 9, quorum_met: false, outcome: "no_quorum" });
    expect(tallyJson(t, "x").mixed_yes_ppm).toBeNull();
  });

  it("applies each kind's quorum: 4 voters are short of 5, 5 are enough", () => {
    expect(tally(many("public_community", "yes", 4), DECISION_RULES.new_games).outcome).toBe("no_quorum");
    expect(tally(many("public_community", "yes", 5), DECISION_RULES.new_games).outcome).toBe("passed");
  });

  it("needs decisive votes in enough constituencies for the heavy kinds", () => {
    const one = many("public_community", "yes", 20);
    expect(tally(one, DECISION_RULES.remove_games)).toMatchObject({ quorum_met: false, outcome: "no_quorum" });
    const two = [...one, ...many("entered_agents", "yes", 1)];
    expect(tally(two, DECISION_RULES.remove_games).outcome).toBe("passed");
    expect(tally(two, DECISION_RULES.prize_pool_release).outcome).toBe("no_quorum");
    const three = [...two, ...many("lab_stewards", "no", 1)];
    expect(tally(three, DECISION_RULES.prize_pool_release).outcome).toBe("passed");
  });

  it("decides exact boundaries: > 1/2 fails at exactly 1/2, ≥ 2/3 and ≥ 3/5 pass at exactly 2/3 and 3/5", () => {
    const half = [
      ...many("team_captains", "yes", 1),
      ...many("team_captains", "no", 1),
      ...many("team_captains", "abstain", 3),
    ];
    const h = tally(half, DECISION_RULES.new_games);
    expect(h.mixed_yes).toEqual(frac(1, 2));
    expect(h.outcome).toBe("failed");

    const twoThirds = [
      ...many("team_captains", "yes", 2),
      ...many("team_captains", "no", 1),
      ...many("entered_agents", "yes", 4),
      ...many("entered_agents", "no", 2),
      ...many("public_community", "abstain", 1),
    ];
    const r = tally(twoThirds, DECISION_RULES.remove_games);
    expect(r.mixed_yes).toEqual(frac(2, 3));
    expect(r.outcome).toBe("passed");
    // one more "no" among the agents: 4000·2/3 + 2500·4/7 over 6500 < 2/3
    const less = tally([...twoThirds, ...many("entered_agents", "no", 1)], DECISION_RULES.remove_games);
    expect(compare(less.mixed_yes ?? frac(0, 1), frac(2, 3))).toBe(-1);
    expect(less.outcome).toBe("failed");

    // ratio_appeals: exactly 3/5 in each of two constituencies
    const appeal = [
      ...many("team_captains", "yes", 3),
      ...many("team_captains", "no", 2),
      ...many("entered_agents", "yes", 3),
      ...many("entered_agents", "no", 2),
    ];
    const a = tally(appeal, DECISION_RULES.ratio_appeals);
    expect(a.mixed_yes).toEqual(frac(3, 5));
    expect(a.outcome).toBe("passed");
  });

  it("compares fractions exactly where floating point would round", () => {
    // 0.1 + 0.2 !== 0.3 in floating point; as fractions the sum equals the threshold exactly
    const sum = fraction(1n * 10n + 2n * 10n, 100n);
    expect(compare(sum, fraction(3, 10))).toBe(0);
    expect(passes(fraction(3, 10), { threshold: { num: 3, den: 10 }, rule: "at_least" })).toBe(true);
    expect(passes(fraction(3, 10), { threshold: { num: 3, den: 10 }, rule: "greater_than" })).toBe(false);
    // large numbers stay exact
    const big = fraction(10n ** 30n + 1n, 2n * 10n ** 30n);
    expect(passes(big, { threshold: { num: 1, den: 2 }, rule: "greater_than" })).toBe(true);
    expect(() => fraction(1, 0)).toThrow(RangeError);
  });

  it("has a rule for every decision kind and uses weights summing to 10000 basis points", () => {
    expect(Object.keys(DECISION_RULES).sort()).toEqual(
      ["change_games", "event_weights", "new_games", "prize_pool_release", "ratio_appeals", "remove_games"].sort(),
    );
    expect(CONSTITUENCIES.reduce((s, c) => s + GOVERNANCE_WEIGHTS_BP[c], 0)).toBe(10_000);
    for (const rule of Object.values(DECISION_RULES)) {
      expect(rule.threshold.num).toBeLessThan(rule.threshold.den);
      expect(rule.default_window_hours).toBeGreaterThanOrEqual(24);
    }
  });

  it("refuses a vote in an unknown constituency", () => {
    expect(() =>
      tally([{ constituency: "bystanders" as Constituency, choice: "yes" }], DECISION_RULES.new_games),
    ).toThrow(RangeError);
  });
});
