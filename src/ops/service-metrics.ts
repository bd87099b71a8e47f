import type { Kysely } from "kysely";
import { sql } from "kysely";
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import type { Database } from "../db/schema.js";
import type { X402Service } from "../payments/x402/service.js";

/**
 * The service's promises as Prometheus metrics (docs/operations.md, "Metrics and alerts"):
 * settlements (latency, failures by reason, pending), the suite-job queue (depth, age of the oldest
 * waiting work) and admission rejections (rate limits, codec capacity). Counters and the latency
 * histogram are per process, as Prometheus expects; the pending and queue gauges are read from the
 * database at scrape time, so they are the same in every process (alert on max, not sum).
 */

/** Problem codes that mean "refused to protect capacity", not "bad input". */
export const ADMISSION_CODES = new Set([
  "rate_limited",
  "codec_capacity_unavailable",
  "codec_input_too_large",
  "body_too_large",
  "service_unavailable",
]);

const SETTLE_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60];

export interface ServiceMetrics {
  /** counts one problem answer (every 4xx/5xx problem goes through here) */
  problem(status: number, code: string): void;
}

export function registerServiceMetrics(
  registry: Registry,
  deps: { db: Kysely<Database>; x402: X402Service },
): ServiceMetrics {
  const { db, x402 } = deps;
  const settleSeconds = new Histogram({
    name: "labphi_settlement_duration_seconds",
    help: "Time from submitting an x402 settlement to its answer, by rail and outcome",
    labelNames: ["rail", "outcome"],
    buckets: SETTLE_BUCKETS,
    registers: [registry],
  });
  const settleFailures = new Counter({
    name: "labphi_settlement_failures_total",
    help: "x402 settlements that did not succeed, by rail and reason (failed reasons, pending, unavailable)",
    labelNames: ["rail", "reason"],
    registers: [registry],
  });
  x402.settlementObservers.add((e) => {
    settleSeconds.observe({ rail: e.rail, outcome: e.outcome }, e.seconds);
    if (e.outcome !== "success") settleFailures.inc({ rail: e.rail, reason: e.reason ?? e.outcome });
  });

  new Gauge({
    name: "labphi_settlements_pending",
    help: "x402 proofs whose settlement is in flight or whose outcome is unknown (reconciler's work), by state",
    labelNames: ["state"],
    registers: [registry],
    async collect() {
      const rows = await db
        .selectFrom("payment_proofs")
        .select(["state", sql<number>`count(*)`.as("n")])
        .where("state", "in", ["reserved", "settling", "pending_unknown"])
        .groupBy("state")
        .execute()
        .catch(() => []);
      this.reset();
      for (const s of ["reserved", "settling", "pending_unknown"]) {
        this.set({ state: s }, Number(rows.find((r) => r.state === s)?.n ?? 0));
      }
    },
  });

  new Gauge({
    name: "labphi_job_queue_depth",
    help: "Suite jobs and segments waiting or running, by kind and state",
    labelNames: ["kind", "state"],
    registers: [registry],
    async collect() {
      const [jobs, segments] = await Promise.all([
        db
          .selectFrom("jobs")
          .select(["state", sql<number>`count(*)`.as("n")])
          .where("state", "in", ["queued", "running"])
          .groupBy("state")
          .execute()
          .catch(() => []),
        db
          .selectFrom("job_segments")
          .select(["state", sql<number>`count(*)`.as("n")])
          .where("state", "in", ["pending", "running"])
          .groupBy("state")
          .execute()
          .catch(() => []),
      ]);
      this.reset();
      for (const s of ["queued", "running"]) {
        this.set({ kind: "job", state: s }, Number(jobs.find((r) => r.state === s)?.n ?? 0));
      }
      for (const s of ["pending", "running"]) {
        this.set({ kind: "segment", state: s }, Number(segments.find((r) => r.state === s)?.n ?? 0));
      }
    },
  });

  new Gauge({
    name: "labphi_job_queue_oldest_seconds",
    help: "Age of the oldest queued or running suite job (since its last state change); 0 when none",
    registers: [registry],
    async collect() {
      const row = await db
        .selectFrom("jobs")
        .select(sql<string | null>`min(updated_at)`.as("oldest"))
        .where("state", "in", ["queued", "running"])
        .executeTakeFirst()
        .catch(() => undefined);
      const oldest = row?.oldest ? Date.parse(row.oldest) : Number.NaN;
      this.set(Number.isFinite(oldest) ? Math.max(0, (Date.now() - oldest) / 1000) : 0);
    },
  });

  const admission = new Counter({
    name: "labphi_admission_rejections_total",
    help: "Requests refused to protect capacity (rate limits, codec admission control, size caps), by code",
    labelNames: ["code"],
    registers: [registry],
  });
  const problems = new Counter({
    name: "labphi_problems_total",
    help: "Problem answers (RFC 9457) by status and stable code",
    labelNames: ["status", "code"],
    registers: [registry],
  });

  return {
    problem(status, code) {
      problems.inc({ status: String(status), code });
      if (ADMISSION_CODES.has(code)) admission.inc({ code });
    },
  };
}
