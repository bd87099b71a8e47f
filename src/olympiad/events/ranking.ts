/**
 * The one scoring rule of every event (docs/olympiad.md "Events and scoring"): entrants are ranked by
 * the event's measured value (standard competition ranking: equal values share the better rank,
 * 1, 2, 2, 4); rank r earns `pointsFor(r) × weight` points; an invalid result ranks nowhere and
 * earns 0. All integers: no rounding anywhere.
 */

import type { OlympiadEvent } from "./events.js";

/** Points for places 1 to 10 (the long-standing motorsport table); every other place earns 0. */
export const POINTS_TABLE: readonly number[] = [25, 18, 15, 12, 10, 8, 6, 4, 2, 1];

/** Points for a rank (1 = first); 0 beyond the table or for a rank that is not a positive integer. */
export function pointsFor(rank: number): number {
  if (!Number.isInteger(rank) || rank < 1) return 0;
  return POINTS_TABLE[rank - 1] ?? 0;
}

export interface Ranked<T> {
  result: T;
  /** null: invalid result, no rank */
  rank: number | null;
  points: number;
}

/**
 * Ranks an event's results by its rule: `value` null = invalid (no rank, 0 points); equal values
 * share the better rank (1, 2, 2, 4); points = pointsFor(rank) × weight. Order: ranked first (best
 * first), then invalid results in the given order.
 */
export function rankResults<T extends { value: number | null }>(
  event: OlympiadEvent,
  results: readonly T[],
): Ranked<T>[] {
  const valid = results.filter((r): r is T & { value: number } => r.value !== null);
  const higher = event.scoring.better === "higher";
  const sorted = [...valid].sort((a, b) => {
    if (a.value === b.value) return 0;
    return a.value < b.value === higher ? 1 : -1;
  });
  const out: Ranked<T>[] = [];
  sorted.forEach((result, i) => {
    const prev = out[i - 1];
    const rank = prev && prev.result.value === result.value ? (prev.rank as number) : i + 1;
    out.push({ result, rank, points: pointsFor(rank) * event.weight });
  });
  for (const result of results) if (result.value === null) out.push({ result, rank: null, points: 0 });
  return out;
}
