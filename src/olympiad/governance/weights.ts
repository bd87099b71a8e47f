/**
 * The governance constituencies and their mixed weights (spec: team captains 0.4, entered agents
 * 0.25, public community 0.2, lab stewards 0.1, residual integrity 0.05), held as integer basis
 * points that sum to exactly 10 000. The record's decimal weights are derived from these; tallies
 * (docs/olympiad-governance.md) compute in basis points, never in floating point.
 */

export const CONSTITUENCIES = [
  "team_captains",
  "entered_agents",
  "public_community",
  "lab_stewards",
  "residual_integrity",
] as const;
export type Constituency = (typeof CONSTITUENCIES)[number];

export const WEIGHTS_TOTAL_BP = 10_000;

export const GOVERNANCE_WEIGHTS_BP: Readonly<Record<Constituency, number>> = {
  team_captains: 4_000,
  entered_agents: 2_500,
  public_community: 2_000,
  lab_stewards: 1_000,
  residual_integrity: 500,
};

/** The six decision kinds a proposal may have (spec `decides`). */
export const DECISION_KINDS = [
  "new_games",
  "change_games",
  "remove_games",
  "event_weights",
  "ratio_appeals",
  "prize_pool_release",
] as const;

/** Basis points → decimal string with up to four places ("0.4", "0.25", "0.05"); exact, no floats. */
export function bpToDecimalString(bp: number): string {
  if (!Number.isSafeInteger(bp) || bp < 0) throw new RangeError(`not basis points: ${bp}`);
  const whole = Math.trunc(bp / WEIGHTS_TOTAL_BP);
  const frac = String(bp % WEIGHTS_TOTAL_BP)
    .padStart(4, "0")
    .replace(/0+$/, "");
  return frac === "" ? String(whole) : `${whole}.${frac}`;
}

/** The record's decimal weights (numbers, as the spec shows them), derived from the basis points. */
export function decimalWeights(): Record<Constituency, number> {
  return Object.fromEntries(
    CONSTITUENCIES.map((c) => [c, Number(bpToDecimalString(GOVERNANCE_WEIGHTS_BP[c]))]),
  ) as Record<Constituency, number>;
}
