import { VERSIONS } from "../versions.js";

/**
 * Suite pricing (spec: "Suite pricing record", "Limits"): the one source of the metered suite's
 * prices. Every amount is an integer: bytes and USDC atomic units (6 decimals: 1 unit = 1 micro-USD)
 * as bigint, card charges in cents. The spec's decimal USD numbers are derived from these integers
 * for presentation only. Rules the spec leaves open, as decided here (docs/suite.md):
 *
 * - GB = 10^9 bytes, MB = 10^6 bytes (decimal units, as storage and egress are priced).
 * - Free volume belongs to the caller, not to the job (issue #21): 100 GB (10^11 bytes) per
 *   join-work identity per calendar month (UTC), shared by all its jobs (read from the usage
 *   ledger, src/jobs/usage.ts); without an identity, SUITE_ANON_FREE_BYTES_PER_DAY (default 1 GB)
 *   per client IP per UTC day. The spec's "Free suite volume 100 GB, per job first, per the join
 *   grant wording" is read, deliberately, as per identity per month: a per-job free part let any
 *   large job be split into free ones. `priceJob` takes what the caller has left
 *   (`freeRemainingBytes`, src/jobs/quotes/service.ts computes it); one job never gets more than 100 GB.
 * - Billable bytes = bytes beyond the free part, rounded up to whole MB.
 * - 0.05 USD per GB (50 units per MB) for the first 100 billable GB of a job, 0.04 USD per GB
 *   (40 units per MB) for billable bytes beyond that (bulk).
 * - A paid job costs at least 0.05 USD (50,000 units): shown as a `minimum` tier (top-up).
 * - Card charges round the USDC amount up to the cent.
 * - The price does not depend on product, data class, op or level (the spec gives one price).
 */

/** 1 GB = 10^9 bytes. */
export const BYTES_PER_GB = 1_000_000_000n;
/** 1 MB = 10^6 bytes: the billing granularity. */
export const BYTES_PER_MB = 1_000_000n;
const MB_PER_GB = BYTES_PER_GB / BYTES_PER_MB;
/** USDC atomic units per USD (6 decimals). */
export const UNITS_PER_USD = 1_000_000n;
/** USDC atomic units per US cent. */
export const UNITS_PER_CENT = 10_000n;

/** The spec's prices as integers: USDC atomic units per GB (10^9 bytes), and GB counts. */
export const SUITE_PRICE = {
  /** free suite volume per join-work identity per calendar month (UTC), shared by its jobs: 100 GB */
  freeCapGb: 100n,
  /** 0.05 USD per GB (10^9 bytes) after the free cap */
  unitsPerGbAfterFree: 50_000n,
  /** 0.04 USD per GB (10^9 bytes), bulk */
  unitsPerGbBulk: 40_000n,
  /** bulk applies to billable bytes beyond the first 100 billable GB (10^11 bytes) of a job */
  bulkAfterBillableGb: 100n,
  /** minimum paid job: 0.05 USD */
  minPaidUnits: 50_000n,
  /** 0.09 USD per GB (10^9 bytes): the reference first-paid egress price we undercut (not charged) */
  firstPaidEgressRefUnitsPerGb: 90_000n,
} as const;

/** The same prices in cents, for the payments matrix (derived from the USDC-unit integers above). */
export const SUITE_PRICING = {
  freeCapGb: Number(SUITE_PRICE.freeCapGb),
  centsPerGbAfterFree: Number(SUITE_PRICE.unitsPerGbAfterFree / UNITS_PER_CENT),
  centsPerGbBulk: Number(SUITE_PRICE.unitsPerGbBulk / UNITS_PER_CENT),
  minPaidCents: Number(SUITE_PRICE.minPaidUnits / UNITS_PER_CENT),
  firstPaidEgressRefCentsPerGb: Number(SUITE_PRICE.firstPaidEgressRefUnitsPerGb / UNITS_PER_CENT),
} as const;

/** Free bytes per join-work identity per calendar month (UTC): 100 GB = 10^11 bytes. */
export const FREE_CAP_BYTES = SUITE_PRICE.freeCapGb * BYTES_PER_GB;
/** Billable bytes of a job charged at the standard price before bulk starts: 100 GB = 10^11 bytes. */
export const BULK_AFTER_BYTES = SUITE_PRICE.bulkAfterBillableGb * BYTES_PER_GB;
/** Largest job a quote accepts: 10^15 bytes (1 PB = 10^6 GB); below 2^53, so JSON numbers stay exact. */
export const MAX_JOB_BYTES = 10n ** 15n;
export const MAX_JOB_BYTES_NUMBER = Number(MAX_JOB_BYTES);

const UNITS_PER_MB_AFTER_FREE = SUITE_PRICE.unitsPerGbAfterFree / MB_PER_GB;
const UNITS_PER_MB_BULK = SUITE_PRICE.unitsPerGbBulk / MB_PER_GB;
// Per-MB prices must be whole units, or the arithmetic below would not be exact.
for (const [name, perGb] of Object.entries({
  unitsPerGbAfterFree: SUITE_PRICE.unitsPerGbAfterFree,
  unitsPerGbBulk: SUITE_PRICE.unitsPerGbBulk,
})) {
  if (perGb % MB_PER_GB !== 0n) throw new Error(`SUITE_PRICE.${name} is not a whole number of units per MB`);
}

/** Integer division rounding up (a, b > 0). */
const ceilDiv = (a: bigint, b: bigint): bigint => (a + b - 1n) / b;
const min = (a: bigint, b: bigint): bigint => (a < b ? a : b);
const max = (a: bigint, b: bigint): bigint => (a > b ? a : b);

/**
 * An exact decimal USD string of USDC atomic units: at least 2 decimals, at most 6, no trailing
 * zeros beyond the cents (2,500,000 → "2.50"; 50,050 → "0.05005"; 0 → "0.00").
 */
export function usdOfUnits(units: bigint): string {
  if (units < 0n) throw new RangeError(`negative amount: ${units}`);
  const whole = units / UNITS_PER_USD;
  const frac = (units % UNITS_PER_USD)
    .toString()
    .padStart(6, "0")
    .replace(/0{1,4}$/, "");
  return `${whole}.${frac.padEnd(2, "0")}`;
}

/** The card charge of a USDC amount: whole cents, rounded up (50,050 units → 6 cents). */
export function centsOfUnits(units: bigint): number {
  if (units < 0n) throw new RangeError(`negative amount: ${units}`);
  return Number(ceilDiv(units, UNITS_PER_CENT));
}

export type TierName = "free" | "standard" | "bulk" | "minimum";

/** One line of a quote's breakdown; the amounts of all lines add up to the quote's amount. */
export interface PriceTier {
  tier: TierName;
  /** bytes priced in this tier: free bytes, or billable (whole-MB) bytes; 0 for `minimum` */
  bytes: number;
  /** most bytes this tier can take in this quote (free: the free part available; standard: 100 GB); null: no limit */
  limit_bytes: number | null;
  /** price per GB (10^9 bytes) in USDC atomic units; null for `minimum` */
  units_per_gb: number | null;
  /** price per GB (10^9 bytes) in USD (exact decimal); null for `minimum` */
  usd_per_gb: string | null;
  /** USDC atomic units, integer string */
  amount_units: string;
  amount_usd: string;
  rule: string;
}

export interface PriceInput {
  /** bytes of the job (input size), 1 … MAX_JOB_BYTES */
  bytes: bigint | number;
  /**
   * The free volume the caller has left (bytes): its identity's month, or its IP's day (QuoteService
   * computes it; 0 for a caller with none). Omitted or null: a whole 100 GB, i.e. an identity at
   * the start of its month (the worked examples). Never more than 100 GB is free in one job.
   */
  freeRemainingBytes?: bigint | number | null;
}

export interface JobPrice {
  bytes: bigint;
  /** free bytes this job uses (of the caller's free volume: its identity's month, or its IP's day) */
  free_bytes: bigint;
  /** bytes beyond the free part, rounded up to whole MB (10^6 bytes) */
  billable_bytes: bigint;
  /** USDC atomic units (0 when free) */
  amount_units: bigint;
  /** card charge: amount_units rounded up to the cent */
  amount_cents: number;
  /** exact decimal USD of amount_units */
  amount_usd: string;
  minimum_applied: boolean;
  /** always four lines, in order: free, standard, bulk, minimum */
  tiers: PriceTier[];
}

const asBigInt = (v: bigint | number, what: string): bigint => {
  if (typeof v === "bigint") return v;
  if (!Number.isSafeInteger(v)) throw new RangeError(`${what} must be an integer: ${v}`);
  return BigInt(v);
};

/** Prices one job. Pure and exact (bigint); throws RangeError for bytes outside 1 … MAX_JOB_BYTES. */
/**
 * The free terms in one phrase for pages and documents (issue #21: free volume belongs to a
 * caller): "100 GB a calendar month with a join-work identity, 1 GB a day per address without one".
 * `anonBytesPerDay`: SUITE_ANON_FREE_BYTES_PER_DAY of this server (0: no anonymous free work).
 */
export function freeTermsText(anonBytesPerDay: number | bigint): string {
  const month = `${SUITE_PRICE.freeCapGb} GB a calendar month (UTC) with a join-work identity, shared by its jobs`;
  const anon = BigInt(anonBytesPerDay);
  if (anon <= 0n) return `${month}; nothing free without one`;
  return `${month}; ${decimalGb(anon)} a day (UTC) per address without one`;
}

/** 10^9 → "1 GB", 5×10^8 → "0.5 GB", 1234 → "1234 bytes". */
function decimalGb(bytes: bigint): string {
  if (bytes < BYTES_PER_MB) return `${bytes} bytes`;
  const mb = bytes / BYTES_PER_MB;
  return mb % 1000n === 0n ? `${mb / 1000n} GB` : `${(Number(mb) / 1000).toString()} GB`;
}

export function priceJob(input: PriceInput): JobPrice {
  const bytes = asBigInt(input.bytes, "bytes");
  if (bytes < 1n || bytes > MAX_JOB_BYTES) {
    throw new RangeError(`bytes must be between 1 and ${MAX_JOB_BYTES}: ${bytes}`);
  }
  const remaining =
    input.freeRemainingBytes === undefined || input.freeRemainingBytes === null
      ? FREE_CAP_BYTES
      : max(0n, asBigInt(input.freeRemainingBytes, "freeRemainingBytes"));
  const freeLimit = min(FREE_CAP_BYTES, remaining);
  const free = min(bytes, freeLimit);
  const billable = ceilDiv(bytes - free, BYTES_PER_MB) * BYTES_PER_MB;
  const standardBytes = min(billable, BULK_AFTER_BYTES);
  const bulkBytes = billable - standardBytes;
  const standardUnits = (standardBytes / BYTES_PER_MB) * UNITS_PER_MB_AFTER_FREE;
  const bulkUnits = (bulkBytes / BYTES_PER_MB) * UNITS_PER_MB_BULK;
  const metered = standardUnits + bulkUnits;
  const topUp = billable > 0n && metered < SUITE_PRICE.minPaidUnits ? SUITE_PRICE.minPaidUnits - metered : 0n;
  const amount = metered + topUp;
  const line = (
    tier: TierName,
    tierBytes: bigint,
    limit: bigint | null,
    perGb: bigint | null,
    units: bigint,
    rule: string,
  ): PriceTier => ({
    tier,
    bytes: Number(tierBytes),
    limit_bytes: limit === null ? null : Number(limit),
    units_per_gb: perGb === null ? null : Number(perGb),
    usd_per_gb: perGb === null ? null : usdOfUnits(perGb),
    amount_units: units.toString(),
    amount_usd: usdOfUnits(units),
    rule,
  });
  const g = (b: bigint) => `${b / BYTES_PER_GB} GB`;
  return {
    bytes,
    free_bytes: free,
    billable_bytes: billable,
    amount_units: amount,
    amount_cents: centsOfUnits(amount),
    amount_usd: usdOfUnits(amount),
    minimum_applied: topUp > 0n,
    tiers: [
      line(
        "free",
        free,
        freeLimit,
        0n,
        0n,
        `free volume belongs to the caller: ${g(FREE_CAP_BYTES)} (GB = 10^9 bytes) per join-work identity per calendar month (UTC), shared by its jobs; without an identity, the client IP's daily allowance; this job uses what is left of it`,
      ),
      line(
        "standard",
        standardBytes,
        BULK_AFTER_BYTES,
        SUITE_PRICE.unitsPerGbAfterFree,
        standardUnits,
        `${usdOfUnits(SUITE_PRICE.unitsPerGbAfterFree)} USD per GB (10^9 bytes) for the first ${g(BULK_AFTER_BYTES)} of billable bytes (bytes beyond the free part, rounded up to whole MB = 10^6 bytes)`,
      ),
      line(
        "bulk",
        bulkBytes,
        null,
        SUITE_PRICE.unitsPerGbBulk,
        bulkUnits,
        `${usdOfUnits(SUITE_PRICE.unitsPerGbBulk)} USD per GB (10^9 bytes) for billable bytes beyond the first ${g(BULK_AFTER_BYTES)}`,
      ),
      line(
        "minimum",
        0n,
        null,
        null,
        topUp,
        `a paid job costs at least ${usdOfUnits(SUITE_PRICE.minPaidUnits)} USD: the difference is added here`,
      ),
    ],
  };
}

// ------------------------------------------------------------------ the spec's pricing record

/** USDC atomic units as the spec's decimal number of dollars (50,000 → 0.05). Presentation only. */
export const usdNumber = (units: bigint): number => Number(usdOfUnits(units));

const centsOf = (units: bigint): number => {
  if (units % UNITS_PER_CENT !== 0n) throw new Error(`${units} units is not a whole number of cents`);
  return Number(units / UNITS_PER_CENT);
};

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
  const p = SUITE_PRICE;
  return {
    free_cap_gb: Number(p.freeCapGb),
    usd_per_gb_after_free: usdNumber(p.unitsPerGbAfterFree),
    usd_per_gb_bulk: usdNumber(p.unitsPerGbBulk),
    min_paid_usd: usdNumber(p.minPaidUnits),
    first_paid_egress_ref_usd: usdNumber(p.firstPaidEgressRefUnitsPerGb),
    model: VERSIONS.suitePricingModel,
    try_gate: "retired",
    cents_per_gb_after_free: centsOf(p.unitsPerGbAfterFree),
    cents_per_gb_bulk: centsOf(p.unitsPerGbBulk),
    min_paid_cents: centsOf(p.minPaidUnits),
    first_paid_egress_ref_cents_per_gb: centsOf(p.firstPaidEgressRefUnitsPerGb),
    note: `Suite jobs are free up to ${p.freeCapGb} GB (GB = 10^9 bytes) per join-work identity per calendar month (UTC), shared by all its jobs (without an identity, a small daily allowance per IP); then ${usdOfUnits(p.unitsPerGbAfterFree)} USD per GB for the first ${p.bulkAfterBillableGb} billable GB of a job and ${usdOfUnits(p.unitsPerGbBulk)} USD per GB (bulk) beyond, billed per whole MB (10^6 bytes), at least ${usdOfUnits(p.minPaidUnits)} USD per paid job; ${usdOfUnits(p.firstPaidEgressRefUnitsPerGb)} USD per GB is the reference first-paid egress price we undercut. The try gate is retired.`,
  };
}

/** The pricing rules as integers (GET /api/ppp-quote adds these to the spec's record). */
export function pricingRules() {
  return {
    gb_bytes: Number(BYTES_PER_GB),
    mb_bytes: Number(BYTES_PER_MB),
    units_per_usd: Number(UNITS_PER_USD),
    free_cap_bytes: Number(FREE_CAP_BYTES),
    units_per_gb_after_free: SUITE_PRICE.unitsPerGbAfterFree.toString(),
    units_per_gb_bulk: SUITE_PRICE.unitsPerGbBulk.toString(),
    bulk_after_billable_bytes: Number(BULK_AFTER_BYTES),
    min_paid_units: SUITE_PRICE.minPaidUnits.toString(),
    first_paid_egress_ref_units_per_gb: SUITE_PRICE.firstPaidEgressRefUnitsPerGb.toString(),
    max_job_bytes: MAX_JOB_BYTES_NUMBER,
    rules: [
      "GB = 10^9 bytes and MB = 10^6 bytes.",
      `Free volume belongs to the caller, not to the job: ${SUITE_PRICE.freeCapGb} GB per join-work identity (X-Identity-Token) per calendar month (UTC), shared by all its jobs and summed from its usage ledger; without an identity, the client IP's daily allowance (SUITE_ANON_FREE_BYTES_PER_DAY, default 1 GB). A job's free part is what its caller has left.`,
      "Billable bytes are the bytes beyond the free part, rounded up to whole MB.",
      `The first ${SUITE_PRICE.bulkAfterBillableGb} billable GB of a job cost ${usdOfUnits(SUITE_PRICE.unitsPerGbAfterFree)} USD per GB; billable bytes beyond them cost ${usdOfUnits(SUITE_PRICE.unitsPerGbBulk)} USD per GB (bulk).`,
      `A paid job costs at least ${usdOfUnits(SUITE_PRICE.minPaidUnits)} USD.`,
      "Amounts are USDC atomic units (6 decimals) as integer strings; card charges round up to the cent.",
      "The price does not depend on product, data class, op or level.",
      `The examples are for a join-work identity with its whole ${SUITE_PRICE.freeCapGb} GB of the month left.`,
    ],
    examples: [50n, 150n, 300n].map((gb) => {
      const p = priceJob({ bytes: gb * BYTES_PER_GB });
      return { bytes: Number(gb * BYTES_PER_GB), amount_units: p.amount_units.toString(), amount_usd: p.amount_usd };
    }),
  };
}
