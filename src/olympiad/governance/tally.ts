import type { DecisionKind } from "../tables.js";
import { CONSTITUENCIES, type Constituency, GOVERNANCE_WEIGHTS_BP } from "./weights.js";

/**
 * The weighted tally of one proposal (pure; docs/olympiad-governance.md). Each constituency is
 * tallied on its own: its yes-share is yes / (yes + no) (abstentions count toward the quorum, not
 * the share). A constituency with no decisive vote (no yes, no no) is empty: its weight goes to the
 * others in proportion to theirs. The mixed yes-share is Σ wᵢ·shareᵢ / Σ wᵢ over the non-empty
 * constituencies, kept as an exact fraction (BigInt) and compared to the kind's threshold by
 * cross-multiplication. Parts-per-million figures are floored and for display only.
 */

export type Choice = "yes" | "no" | "abstain";
export type Outcome = "passed" | "failed" | "no_quorum";

/** An exact fraction in lowest terms, den > 0. */
export interface Fraction {
  num: bigint;
  den: bigint;
}

export interface DecisionRule {
  /** voting window when the proposer gives none, in hours */
  default_window_hours: number;
  /** distinct voters needed (abstentions count) */
  quorum: number;
  /** non-empty constituencies needed (constituencies with at least one yes or no vote) */
  min_constituencies: number;
  /** the fraction the mixed yes-share must exceed (greater_than) or reach (at_least) */
  threshold: { num: number; den: number };
  rule: "greater_than" | "at_least";
}

/** Quorum and pass thresholds per decision kind (the table in docs/olympiad-governance.md). */
export const DECISION_RULES: Readonly<Record<DecisionKind, DecisionRule>> = {
  new_games: {
    default_window_hours: 72,
    quorum: 5,
    min_constituencies: 1,
    threshold: { num: 1, den: 2 },
    rule: "greater_than",
  },
  change_games: {
    default_window_hours: 72,
    quorum: 5,
    min_constituencies: 1,
    threshold: { num: 1, den: 2 },
    rule: "greater_than",
  },
  event_weights: {
    default_window_hours: 72,
    quorum: 5,
    min_constituencies: 1,
    threshold: { num: 1, den: 2 },
    rule: "greater_than",
  },
  ratio_appeals: {
    default_window_hours: 48,
    quorum: 7,
    min_constituencies: 2,
    threshold: { num: 3, den: 5 },
    rule: "at_least",
  },
  remove_games: {
    default_window_hours: 168,
    quorum: 10,
    min_constituencies: 2,
    threshold: { num: 2, den: 3 },
    rule: "at_least",
  },
  prize_pool_release: {
    default_window_hours: 168,
    quorum: 15,
    min_constituencies: 3,
    threshold: { num: 2, den: 3 },
    rule: "at_least",
  },
};

export interface TallyVote {
  constituency: Constituency;
  choice: Choice;
}

export interface ConstituencyTally {
  constituency: Constituency;
  weight_bp: number;
  yes: number;
  no: number;
  abstain: number;
  yes_share: Fraction | null;
  empty: boolean;
  effective_weight: Fraction;
}

export interface Tally {
  voters: number;
  decisive: number;
  constituencies: ConstituencyTally[];
  mixed_yes: Fraction | null;
  quorum: number;
  min_constituencies: number;
  quorum_met: boolean;
  threshold: Fraction;
  threshold_rule: DecisionRule["rule"];
  outcome: Outcome;
}

const gcd = (a: bigint, b: bigint): bigint => {
  let x = a < 0n ? -a : a;
  let y = b < 0n ? -b : b;
  while (y !== 0n) [x, y] = [y, x % y];
  return x;
};

/** num/den in lowest terms (den must be positive). */
export function fraction(num: bigint | number, den: bigint | number): Fraction {
  const n = BigInt(num);
  const d = BigInt(den);
  if (d <= 0n) throw new RangeError("a fraction needs a positive denominator");
  const g = gcd(n, d) || 1n;
  return { num: n / g, den: d / g };
}

const add = (a: Fraction, b: Fraction): Fraction => fraction(a.num * b.den + b.num * a.den, a.den * b.den);

/** Compares a and b exactly: -1, 0 or 1. */
export function compare(a: Fraction, b: Fraction): -1 | 0 | 1 {
  const l = a.num * b.den;
  const r = b.num * a.den;
  return l < r ? -1 : l > r ? 1 : 0;
}

/** Parts per million, floored (display only: no decision uses it). */
export function ppm(f: Fraction): number {
  return Number((f.num * 1_000_000n) / f.den);
}

/** Does `mixed` pass the rule's threshold? */
export function passes(mixed: Fraction, rule: Pick<DecisionRule, "threshold" | "rule">): boolean {
  const c = compare(mixed, fraction(rule.threshold.num, rule.threshold.den));
  return rule.rule === "greater_than" ? c > 0 : c >= 0;
}

/**
 * Tallies the votes (one per voter, each already in its constituency) under the rule, with the
 * weights in basis points (the spec's by default).
 */
export function tally(
  votes: readonly TallyVote[],
  rule: DecisionRule,
  weights: Readonly<Record<Constituency, number>> = GOVERNANCE_WEIGHTS_BP,
): Tally {
  const counts = new Map<Constituency, { yes: number; no: number; abstain: number }>(
    CONSTITUENCIES.map((c) => [c, { yes: 0, no: 0, abstain: 0 }]),
  );
  for (const v of votes) {
    const c = counts.get(v.constituency);
    if (!c) throw new RangeError(`unknown constituency ${v.constituency}`);
    c[v.choice] += 1;
  }

  // Σ wᵢ over the non-empty constituencies, and Σ wᵢ·yesᵢ/(yesᵢ+noᵢ) over them.
  let liveWeight = 0n;
  let weighted: Fraction = { num: 0n, den: 1n };
  for (const c of CONSTITUENCIES) {
    const { yes, no } = counts.get(c) as { yes: number; no: number };
    if (yes + no === 0) continue;
    const w = BigInt(weights[c]);
    liveWeight += w;
    weighted = add(weighted, fraction(w * BigInt(yes), yes + no));
  }
  const nonEmpty = CONSTITUENCIES.filter((c) => {
    const k = counts.get(c) as { yes: number; no: number };
    return k.yes + k.no > 0;
  }).length;

  const constituencies = CONSTITUENCIES.map((c): ConstituencyTally => {
    const { yes, no, abstain } = counts.get(c) as { yes: number; no: number; abstain: number };
    const empty = yes + no === 0;
    return {
      constituency: c,
      weight_bp: weights[c],
      yes,
      no,
      abstain,
      yes_share: empty ? null : fraction(yes, yes + no),
      empty,
      effective_weight: empty || liveWeight === 0n ? { num: 0n, den: 1n } : fraction(weights[c], liveWeight),
    };
  });

  const mixed = liveWeight === 0n ? null : fraction(weighted.num, weighted.den * liveWeight);
  const voters = votes.length;
  const decisive = votes.filter((v) => v.choice !== "abstain").length;
  const quorumMet = voters >= rule.quorum && nonEmpty >= rule.min_constituencies;
  const outcome: Outcome = !quorumMet ? "no_quorum" : mixed && passes(mixed, rule) ? "passed" : "failed";
  return {
    voters,
    decisive,
    constituencies,
    mixed_yes: mixed,
    quorum: rule.quorum,
    min_constituencies: rule.min_constituencies,
    quorum_met: quorumMet,
    threshold: fraction(rule.threshold.num, rule.threshold.den),
    threshold_rule: rule.rule,
    outcome,
  };
}

/** The JSON form (fractions as decimal strings, plus floored ppm for display). */
export function tallyJson(t: Tally, asOf: string) {
  const f = (x: Fraction) => ({ num: x.num.toString(), den: x.den.toString() });
  return {
    voters: t.voters,
    decisive: t.decisive,
    constituencies: t.constituencies.map((c) => ({
      constituency: c.constituency,
      weight_bp: c.weight_bp,
      yes: c.yes,
      no: c.no,
      abstain: c.abstain,
      yes_share: c.yes_share ? f(c.yes_share) : null,
      yes_share_ppm: c.yes_share ? ppm(c.yes_share) : null,
      empty: c.empty,
      effective_weight: f(c.effective_weight),
      effective_weight_ppm: ppm(c.effective_weight),
    })),
    mixed_yes: t.mixed_yes ? f(t.mixed_yes) : null,
    mixed_yes_ppm: t.mixed_yes ? ppm(t.mixed_yes) : null,
    quorum: t.quorum,
    min_constituencies: t.min_constituencies,
    quorum_met: t.quorum_met,
    threshold: f(t.threshold),
    threshold_rule: t.threshold_rule,
    outcome: t.outcome,
    as_of: asOf,
  };
}
export type TallyJson = ReturnType<typeof tallyJson>;
