/**
 * The paying agent's spending limits, in USDC atomic units (6 decimals: 1 unit = 1 micro-USD) as
 * bigint. Decimal USD strings are parsed exactly (no floating point): "0.05" → 50,000 units.
 * A payment is checked against both limits before anything is signed, and counted as spent the
 * moment it is signed (a signed authorization can be settled by anyone holding it).
 */

export const UNITS_PER_USD = 1_000_000n;

/** The stock x402 client's default per-payment cap, kept as ours when none is given. */
export const DEFAULT_MAX_PAYMENT_UNITS = 1_000_000n;

export class BudgetError extends Error {
  constructor(
    readonly code: "budget_per_payment_exceeded" | "budget_session_exceeded",
    message: string,
  ) {
    super(message);
    this.name = "BudgetError";
  }
}

/** "1", "0.05", "12.345678", "$2.50" → atomic units. At most 6 decimals; never negative. */
export function parseUsd(text: string): bigint {
  const m = /^\s*\$?(\d{1,12})(?:\.(\d{1,6}))?\s*$/.exec(text);
  if (!m) {
    throw new RangeError(`not a USD amount: ${JSON.stringify(text)} (use e.g. 0.05 or 2.50; at most 6 decimals)`);
  }
  return BigInt(m[1] as string) * UNITS_PER_USD + BigInt((m[2] ?? "").padEnd(6, "0"));
}

/** Atomic units → exact decimal USD, at least 2 decimals (50,000 → "0.05"; 1,234,567 → "1.234567"). */
export function usd(units: bigint): string {
  const neg = units < 0n;
  const abs = neg ? -units : units;
  const frac = (abs % UNITS_PER_USD)
    .toString()
    .padStart(6, "0")
    .replace(/0{1,4}$/, "");
  return `${neg ? "-" : ""}${abs / UNITS_PER_USD}.${frac.padEnd(2, "0")}`;
}

export interface BudgetLimits {
  /** most one payment may cost; default 1 USD */
  perPaymentUnits?: bigint;
  /** most this agent (one session) may spend in all; undefined: no session limit */
  sessionUnits?: bigint;
}

export class Budget {
  readonly perPaymentUnits: bigint;
  readonly sessionUnits: bigint | undefined;
  private spentUnits = 0n;

  constructor(limits: BudgetLimits = {}) {
    this.perPaymentUnits = limits.perPaymentUnits ?? DEFAULT_MAX_PAYMENT_UNITS;
    this.sessionUnits = limits.sessionUnits;
    if (this.perPaymentUnits < 0n || (this.sessionUnits !== undefined && this.sessionUnits < 0n)) {
      throw new RangeError("budget limits must not be negative");
    }
  }

  get spent(): bigint {
    return this.spentUnits;
  }

  /** What the session may still spend (undefined: no session limit). */
  get remaining(): bigint | undefined {
    return this.sessionUnits === undefined ? undefined : this.sessionUnits - this.spentUnits;
  }

  /** Throws a BudgetError when `units` may not be paid. Call before signing. */
  check(units: bigint): void {
    if (units > this.perPaymentUnits) {
      throw new BudgetError(
        "budget_per_payment_exceeded",
        `refused: the price ${usd(units)} USD (${units} units) is above the per-payment limit of ${usd(this.perPaymentUnits)} USD (--max-usd). Nothing was signed.`,
      );
    }
    const left = this.remaining;
    if (left !== undefined && units > left) {
      throw new BudgetError(
        "budget_session_exceeded",
        `refused: the price ${usd(units)} USD (${units} units) is above what is left of the session budget, ${usd(left)} of ${usd(this.sessionUnits as bigint)} USD (LABPHI_AGENT_BUDGET_USD). Nothing was signed.`,
      );
    }
  }

  /** Counts a signed payment (checked first: two payments racing cannot both pass). */
  commit(units: bigint): void {
    this.check(units);
    this.spentUnits += units;
  }
}
