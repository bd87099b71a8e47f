import type { FastifyInstance } from "fastify";
import { collectDefaultMetrics, Registry } from "prom-client";

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

const BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** One (method, route, status) series of the request histogram. */
interface Series {
  labels: string;
  /** Non-cumulative counts per bucket; the last slot is +Inf. */
  buckets: Float64Array;
  sum: number;
  count: number;
}

const escapeLabel = (v: string) => v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");

/**
 * Request metrics, kept per app instance: per-series histograms rendered in the Prometheus
 * text format at scrape time (plus prom-client's process metrics), and a bounded in-memory
 * reservoir per route for the JSON percentiles at /api/lab/metrics. Recording a request is a
 * map lookup and a few array writes: nothing is hashed or formatted on the request path.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly startedAt = new Date();
  private readonly byRoute = new Map<string, RouteStats>();
  private readonly series = new Map<string, Series>();
  total = 0;

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: "labphi_" });
  }

  attach(app: FastifyInstance): void {
    app.addHook("onResponse", (request, reply, done) => {
      this.record(request.method, request.routeOptions.url ?? "(unmatched)", reply.statusCode, reply.elapsedTime);
      done();
    });
  }

  record(method: string, route: string, status: number, ms: number): void {
    this.total++;
    const id = `${method} ${route} ${status}`;
    let series = this.series.get(id);
    if (!series) {
      series = {
        labels: `method="${escapeLabel(method)}",route="${escapeLabel(route)}",status="${status}"`,
        buckets: new Float64Array(BUCKETS.length + 1),
        sum: 0,
        count: 0,
      };
      this.series.set(id, series);
    }
    const seconds = ms / 1000;
    let b = 0;
    while (b < BUCKETS.length && seconds > (BUCKETS[b] as number)) b++;
    series.buckets[b] = (series.buckets[b] ?? 0) + 1;
    series.sum += seconds;
    series.count++;
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

  /** Prometheus text exposition: process metrics and the request histogram and counter. */
  async prometheus(): Promise<string> {
    const lines: string[] = [
      "# HELP labphi_http_request_duration_seconds HTTP request duration by route",
      "# TYPE labphi_http_request_duration_seconds histogram",
    ];
    for (const s of this.series.values()) {
      let cumulative = 0;
      BUCKETS.forEach((le, i) => {
        cumulative += s.buckets[i] ?? 0;
        lines.push(`labphi_http_request_duration_seconds_bucket{le="${le}",${s.labels}} ${cumulative}`);
      });
      lines.push(`labphi_http_request_duration_seconds_bucket{le="+Inf",${s.labels}} ${s.count}`);
      lines.push(`labphi_http_request_duration_seconds_sum{${s.labels}} ${s.sum}`);
      lines.push(`labphi_http_request_duration_seconds_count{${s.labels}} ${s.count}`);
    }
    lines.push("# HELP labphi_http_requests_total HTTP requests by route and status");
    lines.push("# TYPE labphi_http_requests_total counter");
    for (const s of this.series.values()) lines.push(`labphi_http_requests_total{${s.labels}} ${s.count}`);
    return `${await this.registry.metrics()}\n${lines.join("\n")}\n`;
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
