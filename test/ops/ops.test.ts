import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestApp, testApp } from "../support/app.js";
import { ENGINES } from "../support/databases.js";

describe.each(ENGINES)("operations on %s", (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp(engine);
  });
  afterAll(() => t.close());

  it("healthz and readyz", async () => {
    expect((await t.app.inject("/healthz")).json()).toMatchObject({ status: "ok" });
    const ready = await t.app.inject("/readyz");
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: "ready", database: engine });
  });

  it("echoes a request id, or makes one", async () => {
    const mine = await t.app.inject({ url: "/healthz", headers: { "x-request-id": "trace-123" } });
    expect(mine.headers["x-request-id"]).toBe("trace-123");
    const made = await t.app.inject({ url: "/healthz", headers: { "x-request-id": "bad id with spaces" } });
    expect(made.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("counts requests with latency percentiles per route", async () => {
    for (let i = 0; i < 5; i++) await t.app.inject("/api/x402-products");
    await t.app.inject("/nowhere");
    const m = (await t.app.inject("/api/lab/metrics")).json();
    expect(m.database).toBe(engine);
    expect(m.requests_total).toBeGreaterThanOrEqual(6);
    const route = m.routes.find((r: { route: string }) => r.route === "/api/x402-products");
    expect(route.count).toBe(5);
    expect(route.p50_ms).toBeGreaterThan(0);
    expect(route.p99_ms).toBeGreaterThanOrEqual(route.p50_ms);
    expect(m.orders).toEqual({ total: 0, by_rail: {} });
  });

  it("serves Prometheus text", async () => {
    const res = await t.app.inject("/metrics");
    expect(res.headers["content-type"]).toMatch(/^text\/plain/);
    expect(res.body).toMatch(/^labphi_http_requests_total\{/m);
    const healthz = /^labphi_http_requests_total\{method="GET",route="\/healthz",status="200"\} (\d+)$/m.exec(res.body);
    expect(Number(healthz?.[1])).toBeGreaterThanOrEqual(3);
    expect(res.body).toMatch(
      /^labphi_http_request_duration_seconds_bucket\{le="\+Inf",method="GET",route="\/healthz",status="200"\} \d+$/m,
    );
    expect(res.body).toMatch(/^# TYPE labphi_http_request_duration_seconds histogram$/m);
    expect(res.body).toMatch(/labphi_process_cpu_user_seconds_total/);
  });

  it("readyz answers 503 once the database is gone", async () => {
    const other = await testApp(engine);
    await other.app.services.db.close();
    const res = await other.app.inject("/readyz");
    expect(res.statusCode).toBe(503);
    expect(res.json().code).toBe("database_unreachable");
    await other.app.close();
  });
});
