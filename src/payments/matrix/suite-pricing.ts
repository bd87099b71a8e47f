import { SUITE_PRICE, UNITS_PER_CENT } from "../../jobs/pricing.js";

/**
 * The metered suite's published pricing facts (spec: "Suite pricing record", "Limits") for the
 * payments matrix. One source: the integers and the record live in src/jobs/pricing.ts (also used
 * by quotes); this file only re-exports them for the matrix.
 */
export { type SuitePricingRecord, suitePricingRecord, usdNumber } from "../../jobs/pricing.js";

/** The prices in cents (derived from the USDC-unit integers of src/jobs/pricing.ts). */
export const SUITE_PRICING = {
  freeCapGb: Number(SUITE_PRICE.freeCapGb),
  centsPerGbAfterFree: Number(SUITE_PRICE.unitsPerGbAfterFree / UNITS_PER_CENT),
  centsPerGbBulk: Number(SUITE_PRICE.unitsPerGbBulk / UNITS_PER_CENT),
  minPaidCents: Number(SUITE_PRICE.minPaidUnits / UNITS_PER_CENT),
  firstPaidEgressRefCentsPerGb: Number(SUITE_PRICE.firstPaidEgressRefUnitsPerGb / UNITS_PER_CENT),
} as const;
