import type { Kysely } from "kysely";
import type { Executor } from "../db/executor.js";
import type { Database } from "../db/schema.js";
import type { UsageEventRow } from "./tables.js";

/**
 * The usage ledger (suite-engine notes §5): append-only events, each with an idempotency key as its
 * id, one value in bytes, the identity it is charged to, and the calendar month (UTC) it counts in.
 * Totals are summed at read time per identity, meter and month; nothing is ever updated or deleted.
 * A correction or refund is a new event with a negative value. The id can later be sent to a
 * billing meter (Stripe `identifier`, OpenMeter/CloudEvents `id`, Lago `transaction_id`).
 *
 * Who records: the job runner, once per job, when the job's input upload is complete, with
 * `suiteUsageId(job.id)` as the key and the input bytes as the value (the free cap of
 * src/jobs/pricing.ts reads these totals).
 */

export const METERS = ["suite_bytes"] as const;
export type Meter = (typeof METERS)[number];

export interface UsageEvent {
  /** idempotency key: a second record with the same id changes nothing */
  id: string;
  /** the join-work identity charged; null for anonymous jobs (recorded, counted for no cap) */
  identityId: string | null;
  meter: Meter;
  /** bytes; negative for a correction */
  valueBytes: bigint | number;
  jobId?: string | null;
  quoteId?: string | null;
  /** when it happened (default now); its UTC calendar month is the event's period */
  at?: Date;
}

/** The idempotency key of a suite job's input usage. */
export const suiteUsageId = (jobId: string): string => `suite:${jobId}:input`;

/**
 * The idempotency key of the correction a cancelled job gets (src/jobs/manage.ts, docs/suite.md
 * "Cancelling a job"): `coded − recorded` bytes, so that the job's events sum to the bytes its done
 * segments coded. Its quote id also ends the free bytes the quote held until its input was recorded.
 */
export const suiteCancelUsageId = (jobId: string): string => `suite:${jobId}:cancel`;

/** The calendar month (UTC) of a time: YYYY-MM. */
export function periodOf(at: Date): string {
  return at.toISOString().slice(0, 7);
}

/** The first instant of a period and of the next one, as ISO 8601 strings. */
export function periodBounds(period: string): { start: string; end: string } {
  const m = /^(\d{4})-(\d{2})$/.exec(period);
  if (!m) throw new RangeError(`not a period (YYYY-MM): ${period}`);
  const y = Number(m[1]);
  const mo = Number(m[2]);
  return {
    start: new Date(Date.UTC(y, mo - 1, 1)).toISOString(),
    end: new Date(Date.UTC(y, mo, 1)).toISOString(),
  };
}

/** The first instant of a UTC calendar day (YYYY-MM-DD) and of the next one, as ISO 8601 strings. */
export function dayBounds(day: string): { start: string; end: string } {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!m) throw new RangeError(`not a day (YYYY-MM-DD): ${day}`);
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  return {
    start: new Date(Date.UTC(y, mo - 1, d)).toISOString(),
    end: new Date(Date.UTC(y, mo - 1, d + 1)).toISOString(),
  };
}

/** A SUM() or bigint column as read from either engine (number, string, bigint or null) as a bigint. */
export function toBigInt(v: number | string | bigint | null | undefined): bigint {
  if (v === null || v === undefined) return 0n;
  if (typeof v === "bigint") return v;
  if (typeof v === "number") return BigInt(Math.trunc(v));
  return BigInt(v.split(".")[0] ?? "0");
}

export class UsageLedger {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * Appends an event once: insert, or nothing when its id exists (works inside the caller's
   * transaction on both engines: ON CONFLICT DO NOTHING never aborts it). `recorded` is false for
   * a repeat; `event` is the stored one either way.
   */
  async record(e: UsageEvent, db: Executor = this.db): Promise<{ recorded: boolean; event: UsageEventRow }> {
    if (!/^[\x21-\x7e]{1,200}$/.test(e.id)) throw new RangeError(`usage event id must be 1-200 visible ASCII: ${e.id}`);
    if (!(METERS as readonly string[]).includes(e.meter)) throw new RangeError(`unknown meter ${e.meter}`);
    if (typeof e.valueBytes === "number" && !Number.isSafeInteger(e.valueBytes)) {
      throw new RangeError(`valueBytes must be an integer: ${e.valueBytes}`);
    }
    const at = e.at ?? this.now();
    const row: UsageEventRow = {
      id: e.id,
      identity_id: e.identityId,
      meter: e.meter,
      value_bytes: e.valueBytes.toString(),
      period: periodOf(at),
      job_id: e.jobId ?? null,
      quote_id: e.quoteId ?? null,
      occurred_at: at.toISOString(),
    };
    const r = await db
      .insertInto("usage_events")
      .values(row)
      .onConflict((oc) => oc.column("id").doNothing())
      .executeTakeFirst();
    const recorded = Number(r.numInsertedOrUpdatedRows ?? 0n) === 1;
    if (recorded) return { recorded, event: row };
    const stored = await db.selectFrom("usage_events").selectAll().where("id", "=", e.id).executeTakeFirstOrThrow();
    return { recorded, event: stored };
  }

  /** The sum of a job's events of a meter (bytes) and the period of its first one (null: none). */
  async jobTotal(
    jobId: string,
    meter: Meter = "suite_bytes",
    db: Executor = this.db,
  ): Promise<{ total: bigint; period: string | null }> {
    const rows = await db
      .selectFrom("usage_events")
      .select(["value_bytes", "period", "occurred_at"])
      .where("job_id", "=", jobId)
      .where("meter", "=", meter)
      .orderBy("occurred_at")
      .execute();
    return {
      total: rows.reduce((a, r) => a + toBigInt(r.value_bytes), 0n),
      period: rows[0]?.period ?? null,
    };
  }

  /** Sum of an identity's events of a meter in a period (YYYY-MM), in bytes. */
  async monthTotal(
    identityId: string,
    period: string = periodOf(this.now()),
    meter: Meter = "suite_bytes",
    db: Executor = this.db,
  ): Promise<bigint> {
    const r = await db
      .selectFrom("usage_events")
      .select((eb) => eb.fn.sum<string | number | bigint | null>("value_bytes").as("total"))
      .where("identity_id", "=", identityId)
      .where("meter", "=", meter)
      .where("period", "=", period)
      .executeTakeFirst();
    return toBigInt(r?.total);
  }
}
