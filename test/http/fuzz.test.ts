import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestApp, testApp } from "../support/app.js";
import { BASE_SETTLEMENT, SOLANA_SETTLEMENT } from "../support/rails.js";

/**
 * Property: whatever a client sends to any registered route (wrong methods, garbage
 * parameters, random bodies and content types, bogus payment and auth headers), the
 * answer is a 4xx problem or a success, never a 5xx. The one designed exception is a
 * 503 that says a rail or feature is not configured on this instance. Every 4xx is a
 * problem document, except the x402 challenge: a 402 whose body is the protocol's own
 * `{ x402Version, accepts }` shape, which x402 clients parse.
 */
const DESIGNED_503 = /(_not_configured|_unavailable|_disabled)$/;

const ADMIN = "f".repeat(32);
const CONTENT_TYPES = [
  undefined,
  "application/json",
  "application/json; charset=utf-8",
  "text/plain",
  "application/octet-stream",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/xml",
  "garbage/??",
];
const METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"] as const;

describe("generated bad requests at every route", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp("sqlite", {
      ADMIN_TOKEN: ADMIN,
      PAY_TO_BASE: "0x2222222222222222222222222222222222222222",
      ...BASE_SETTLEMENT,
      PAY_TO_SOLANA: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
      ...SOLANA_SETTLEMENT,
      CONTACT_EMAIL: "ops@lab.test",
      BODY_LIMIT_BYTES: "65536",
    });
  });
  afterAll(() => t.close());

  it("never answers 5xx", async () => {
    const routes = t.app.services.routes.routes;
    expect(routes.length).toBeGreaterThan(5);
    const segment = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.constantFrom("..", "%00", "%", "ord_x", "x".repeat(300), "💥", "-1", "0", "null"),
    );
    const body = fc.oneof(
      fc.constant(undefined),
      fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
      fc.string({ maxLength: 200 }),
      fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
      fc
        .record({
          sku: fc.oneof(fc.string(), fc.constantFrom("gao", "zrw-pro", "chip")),
          email: fc.string(),
          op: fc.string(),
          data: fc.string(),
        })
        .map((v) => JSON.stringify(v)),
      fc.constant("x".repeat(70_000)),
    );
    const request = fc.record({
      routeIndex: fc.nat({ max: routes.length - 1 }),
      otherMethod: fc.option(fc.constantFrom(...METHODS), { freq: 4 }),
      segments: fc.array(segment, { minLength: 3, maxLength: 3 }),
      query: fc.option(fc.dictionary(fc.string({ maxLength: 10 }), fc.string({ maxLength: 30 }), { maxKeys: 3 })),
      contentType: fc.constantFrom(...CONTENT_TYPES),
      body,
      payment: fc.option(fc.oneof(fc.string({ maxLength: 100 }), fc.base64String({ maxLength: 200 }))),
      auth: fc.option(fc.constantFrom(`Bearer ${ADMIN}`, "Bearer nope", "Basic abc", "")),
      accept: fc.option(fc.constantFrom("text/html", "application/json", "*/*", "image/png")),
    });

    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const route = routes[r.routeIndex]!;
        let i = 0;
        const path = route.url.replace(/:[A-Za-z_]+/g, () => encodeURIComponent(r.segments[i++ % 3] ?? ""));
        const qs = r.query ? `?${new URLSearchParams(r.query).toString()}` : "";
        const method = r.otherMethod ?? route.method;
        const headers: Record<string, string> = {};
        if (r.contentType) headers["content-type"] = r.contentType;
        if (r.payment !== null) headers["x-payment"] = r.payment;
        if (r.auth !== null) headers.authorization = r.auth;
        if (r.accept !== null) headers.accept = r.accept;
        const res = await t.app.inject({
          method,
          url: path + qs,
          headers,
          ...(r.body !== undefined && method !== "GET" && method !== "HEAD" ? { payload: r.body } : {}),
        });
        const info = `${method} ${path}${qs} → ${res.statusCode} ${res.body.slice(0, 300)}`;
        if (res.statusCode >= 500) {
          expect(res.statusCode, info).toBe(503);
          expect(res.json().code, info).toMatch(DESIGNED_503);
        }
        if (res.statusCode === 402 && res.headers["payment-required"] !== undefined) {
          const challenge = res.json();
          expect(challenge.x402Version, info).toBe(1);
          expect(Array.isArray(challenge.accepts), info).toBe(true);
        } else if (res.statusCode >= 400 && method !== "HEAD") {
          expect(res.headers["content-type"], info).toMatch(/^application\/problem\+json/);
          expect(typeof res.json().code, info).toBe("string");
        }
      }),
      {
        numRuns: Number(process.env.FUZZ_RUNS ?? 600),
        // Keep the report readable: the generated bodies can be 70 kB.
        reporter: (out) => {
          if (!out.failed) return;
          const example = JSON.stringify(out.counterexample).slice(0, 1500);
          throw new Error(`${String(out.errorInstance).slice(0, 1500)}\ncounterexample: ${example}`);
        },
      },
    );
  });
});
