import { formatUsd } from "../../catalog/service.js";
import { VERSIONS } from "../../versions.js";

/**
 * The metered suite's published pricing facts (spec: "Suite pricing record", "Limits").
 * Held as integers (cents per GB, cents); the spec's decimal USD fields are derived for
 * presentation only, through `formatUsd` (no floating-point arithmetic on money).
 */
export const SUITE_PRICING = {
  freeCapGb: 100,
  centsPerGbAfterFree: 5,
  centsPerGbBulk: 4,
  minPaidCents: 5,
  firstPaidEgressRefCentsPerGb: 9,
} as const;

/** A whole number of cents as the spec's decimal number of dollars (5 → 0.05). */
export function usdNumber(cents: number): number {
  return Number(formatUsd(cents));
}

export interface SuitePricingRecord {
  free_cap_gb: number;
  usd_per_gb_after_free: number;
  usd_per_gb_bulk: number;
  min_paid_usd: number;
  first_paid_egress_ref_usd: number;
  model: string;
  try_gate: "retired";
  /** The same prices as integers, for clients that avoid decimals. */
  cents_per_gb_after_free: number;
  cents_per_gb_bulk: number;
  min_paid_cents: number;
  first_paid_egress_ref_cents_per_gb: number;
  note: string;
}

/** The spec's suite pricing record (field names and values as the spec gives them) plus integer twins. */
export function suitePricingRecord(): SuitePricingRecord {
  const p = SUITE_PRICING;
  return {
    free_cap_gb: p.freeCapGb,
    usd_per_gb_after_free: usdNumber(p.centsPerGbAfterFree),
    usd_per_gb_bulk: usdNumber(p.centsPerGbBulk),
    min_paid_usd: usdNumber(p.minPaidCents),
    first_paid_egress_ref_usd: usdNumber(p.firstPaidEgressRefCentsPerGb),
    model: VERSIONS.suitePricingModel,
    try_gate: "retired",
    cents_per_gb_after_free: p.centsPerGbAfterFree,
    cents_per_gb_bulk: p.centsPerGbBulk,
    min_paid_cents: p.minPaidCents,
    first_paid_egress_ref_cents_per_gb: p.firstPaidEgressRefCentsPerGb,
    note: `Suite jobs are free up to ${p.freeCapGb} GB, then ${formatUsd(p.centsPerGbAfterFree)} USD per GB (bulk ${formatUsd(p.centsPerGbBulk)} USD per GB), at least ${formatUsd(p.minPaidCents)} USD per paid job; ${formatUsd(p.firstPaidEgressRefCentsPerGb)} USD per GB is the reference first-paid egress price we undercut. The try gate is retired.`,
  };
}
