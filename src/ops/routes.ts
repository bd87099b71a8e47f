import { sql } from "kysely";
import { z } from "zod";
import type { Db } from "../db/database.js";
import type { Metrics } from "../http/metrics.js";
import { Problem, problemSchema } from "../http/problem.js";
import type { App } from "../http/types.js";

const routeMetricsSchema = z.object({
  method: z.string(),
  route: z.string(),
  count: z.number().int(),
  errors: z.number().int(),
  p50_ms: z.number(),
  p90_ms: z.number(),
  p99_ms: z.number(),
});

export function opsRoutes(app: App, deps: { db: Db; metrics: Metrics }) {
  const { db, metrics } = deps;

  app.get(
    "/healthz",
    {
      schema: {
        summary: "Liveness: the process is up",
        tags: ["ops"],
        response: { 200: z.object({ status: z.literal("ok"), uptime_seconds: z.number().int() }) },
      },
    },
    async () => ({ status: "ok" as const, uptime_seconds: metrics.uptimeSeconds() }),
  );

  app.get(
    "/readyz",
    {
      schema: {
        summary: "Readiness: the database answers",
        tags: ["ops"],
        response: { 200: z.object({ status: z.literal("ready"), database: z.string() }), 503: problemSchema },
      },
    },
    async (_request, reply) => {
      try {
        await sql`select 1`.execute(db.kysely);
      } catch {
        throw new Problem(503, "database_unreachable", `The ${db.kind} database does not answer.`);
      }
      reply.header("Cache-Control", "no-store");
      return { status: "ready" as const, database: db.kind };
    },
  );

  app.get(
    "/api/lab/metrics",
    {
      schema: {
        summary: "Service metrics as JSON: uptime, request counts, latency percentiles per route, database kind",
        tags: ["ops"],
        response: {
          200: z.object({
            service: z.string(),
            uptime_seconds: z.number().int(),
            started_at: z.string(),
            database: z.string(),
            requests_total: z.number().int(),
            routes: z.array(routeMetricsSchema),
            orders: z.object({ total: z.number().int(), by_rail: z.record(z.string(), z.number().int()) }),
          }),
        },
      },
    },
    async () => {
      const rows = await db.kysely
        .selectFrom("orders")
        .select(["rail", (eb) => eb.fn.countAll<number | string>().as("n")])
        .groupBy("rail")
        .execute();
      const byRail = Object.fromEntries(rows.map((r) => [r.rail, Number(r.n)]));
      return {
        service: "labphi",
        uptime_seconds: metrics.uptimeSeconds(),
        started_at: metrics.startedAt.toISOString(),
        database: db.kind,
        requests_total: metrics.total,
        routes: metrics.routes(),
        orders: { total: Object.values(byRail).reduce((a, b) => a + b, 0), by_rail: byRail },
      };
    },
  );

  app.get(
    "/metrics",
    { schema: { summary: "Prometheus metrics (text exposition format)", tags: ["ops"] } },
    async (_request, reply) => {
      reply.type(metrics.registry.contentType);
      return metrics.prometheus();
    },
  );
}
