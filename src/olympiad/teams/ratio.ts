import type { Who } from "../tables.js";

/**
 * The team ratio rule (spec "teams.ratio_rule", docs/olympiad-teams.md). Pure and integer-only:
 * a share s = h/n lies in [30 %, 70 %] exactly when 100·h ≥ 30·n and 100·h ≤ 70·n, so no
 * decision ever depends on a rounded percentage.
 *
 * Who counts as what: a `human_for_self` participant is a human member; an `agent_self`
 * participant and a `human_for_agent` registration are autonomous members (the member is the
 * agent; the human only registered it).
 */

export const ROSTER_SIZE = 50;
export const SHARE_MIN_PCT = 30;
export const SHARE_MAX_PCT = 70;

export type MemberKind = "human" | "autonomous";

export function memberKind(who: Who): MemberKind {
  return who === "human_for_self" ? "human" : "autonomous";
}

export interface Composition {
  humans: number;
  autonomous: number;
}

/** The shares of a composition: exact counts plus integer percentages (rounded down, display only). */
export interface Shares {
  humans: number;
  autonomous: number;
  members: number;
  /** floor(100·humans/members); 0 for an empty roster */
  human_pct: number;
  /** floor(100·autonomous/members); 0 for an empty roster */
  autonomous_pct: number;
}

export interface RatioReason {
  code:
    | "human_share_below_min"
    | "human_share_above_max"
    | "autonomous_share_below_min"
    | "autonomous_share_above_max"
    | "roster_empty";
  detail: string;
}

export interface RatioCheck {
  eligible: boolean;
  shares: Shares;
  reasons: RatioReason[];
}

export function shares(c: Composition): Shares {
  const members = c.humans + c.autonomous;
  return {
    humans: c.humans,
    autonomous: c.autonomous,
    members,
    human_pct: members === 0 ? 0 : Math.floor((100 * c.humans) / members),
    autonomous_pct: members === 0 ? 0 : Math.floor((100 * c.autonomous) / members),
  };
}

/** True when part/whole lies within [SHARE_MIN_PCT %, SHARE_MAX_PCT %] (cross-multiplied). */
export function shareWithin(part: number, whole: number): boolean {
  return whole > 0 && 100 * part >= SHARE_MIN_PCT * whole && 100 * part <= SHARE_MAX_PCT * whole;
}

/** The rule applied to one composition: eligible, or every reason why not. */
export function checkRatio(c: Composition): RatioCheck {
  const s = shares(c);
  const reasons: RatioReason[] = [];
  if (s.members === 0) {
    reasons.push({ code: "roster_empty", detail: "The team has no members." });
    return { eligible: false, shares: s, reasons };
  }
  const side = (label: "human" | "autonomous", part: number) => {
    const what = `${label} share ${part}/${s.members}`;
    if (100 * part < SHARE_MIN_PCT * s.members) {
      reasons.push({
        code: `${label}_share_below_min`,
        detail: `The ${what} is below ${SHARE_MIN_PCT} %.`,
      });
    } else if (100 * part > SHARE_MAX_PCT * s.members) {
      reasons.push({
        code: `${label}_share_above_max`,
        detail: `The ${what} is above ${SHARE_MAX_PCT} %.`,
      });
    }
  };
  side("human", s.humans);
  side("autonomous", s.autonomous);
  return { eligible: reasons.length === 0, shares: s, reasons };
}

/** The composition after one member of `kind` joins (+1) or leaves (−1). */
export function changed(c: Composition, kind: MemberKind, delta: 1 | -1): Composition {
  return kind === "human" ? { ...c, humans: c.humans + delta } : { ...c, autonomous: c.autonomous + delta };
}
