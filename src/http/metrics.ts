import type { FastifyInstance } from "fastify";
import { Counter, collectDefaultMetrics, Histogram, Registry } from "prom-client";

const RESERVOIR = 2048;

interface RouteStats {
  method: string;
  route: string;
  count: number;
  errors: number;
  /** Ring buffer of the latest durations in milliseconds. */
  samples: Float64Array;
  next: number;
}

export interface RouteMetrics {
  method: string;
  route: string;
  count: number;
  errors: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  const idx = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return Math.round((sorted[Math.max(0, idx)] ?? 0) * 1000) / 1000;
}

/**
 * Request metrics, kept per app instance: a prom-client registry for /metrics and a
 * bounded in-memory reservoir per route for the JSON percentiles at /api/lab/metrics.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly startedAt = new Date();
  private readonly byRoute = new Map<string, RouteStats>();
  /** Labelled children per (method, route, status), so a request does not hash its labels again. */
  private readonly children = new Map<
    string,
    {
      duration: ReturnType<Histogram<"method" | "route" | "status">["labels"]>;
      requests: ReturnType<Counter<"method" | "route" | "status">["labels"]>;
    }
  >();
  private readonly duration: Histogram<"method" | "route" | "status">;
  private readonly requests: Counter<"method" | "route" | "status">;
  total = 0;

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: "labphi_" });
    this.duration = new Histogram({
      name: "labphi_http_request_duration_seconds",
      help: "HTTP request duration by route",
      labelNames: ["method", "route", "status"],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [this.registry],
    });
    this.requests = new Counter({
      name: "labphi_http_requests_total",
      help: "HTTP requests by route and status",
      labelNames: ["method", "route", "status"],
      registers: [this.registry],
    });
  }

  attach(app: FastifyInstance): void {
    app.addHook("onResponse", (request, reply, done) => {
      this.record(request.method, request.routeOptions.url ?? "(unmatched)", reply.statusCode, reply.elapsedTime);
      done();
    });
  }

  record(method: string, route: string, status: number, ms: number): void {
    this.total++;
    const series = `${method} ${route} ${status}`;
    let children = this.children.get(series);
    if (!children) {
      const labels = { method, route, status: String(status) };
      children = { duration: this.duration.labels(labels), requests: this.requests.labels(labels) };
      this.children.set(series, children);
    }
    children.duration.observe(ms / 1000);
    children.requests.inc();
    const key = `${method} ${route}`;
    let stats = this.byRoute.get(key);
    if (!stats) {
      stats = { method, route, count: 0, errors: 0, samples: new Float64Array(RESERVOIR), next: 0 };
      this.byRoute.set(key, stats);
    }
    stats.count++;
    if (status >= 500) stats.errors++;
    stats.samples[stats.next % RESERVOIR] = ms;
    stats.next++;
  }

  routes(): RouteMetrics[] {
    return [...this.byRoute.values()]
      .map((s) => {
        const n = Math.min(s.next, RESERVOIR);
        const sorted = s.samples.slice(0, n).sort();
        return {
          method: s.method,
          route: s.route,
          count: s.count,
          errors: s.errors,
          p50_ms: percentile(sorted, 50),
          p90_ms: percentile(sorted, 90),
          p99_ms: percentile(sorted, 99),
        };
      })
      .sort((a, b) => b.count - a.count);
  }

  uptimeSeconds(): number {
    return Math.round((Date.now() - this.startedAt.getTime()) / 1000);
  }
}
