import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_FAILURES_PER_MINUTE } from "../../src/http/rate-limit.js";
import { type TestApp, testApp } from "../support/app.js";

/**
 * Admin token theft and guessing (SECURITY.md, threat model): the token is compared in constant
 * time (a hash of each side, `timingSafeEqual`), and wrong tokens are limited per client IP.
 */

const ADMIN_TOKEN = "security-admin-token-0123456789";
let ipSeq = 10;
const nextIp = () => `198.51.100.${ipSeq++}`;

describe("operator token checks", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp("sqlite", { ADMIN_TOKEN });
  });
  afterAll(async () => t?.close());

  const get = (authorization: string | undefined, ip = "203.0.113.1") =>
    t.app.inject({
      method: "GET",
      url: "/api/admin/orders",
      remoteAddress: ip,
      headers: authorization === undefined ? {} : { authorization },
    });

  it("accepts only the exact token: same length, one character off, prefix, longer, other case, empty → 401", async () => {
    expect((await get(`Bearer ${ADMIN_TOKEN}`)).statusCode).toBe(200);
    const last = ADMIN_TOKEN.at(-1) === "9" ? "8" : "9";
    const wrong = [
      `${ADMIN_TOKEN.slice(0, -1)}${last}`, // same length, last character differs
      `x${ADMIN_TOKEN.slice(1)}`, // same length, first character differs
      ADMIN_TOKEN.slice(0, -1), // a prefix
      `${ADMIN_TOKEN}0`, // longer
      ADMIN_TOKEN.toUpperCase(),
      "",
    ];
    for (const token of wrong) {
      const r = await get(`Bearer ${token}`);
      expect(r.statusCode, token).toBe(401);
      expect(r.json()).toMatchObject({ code: "admin_unauthorized" });
      expect(r.body).not.toContain(ADMIN_TOKEN);
    }
    expect((await get(undefined)).statusCode).toBe(401);
    expect((await get(`Basic ${ADMIN_TOKEN}`)).statusCode).toBe(401);
  });

  it("compares digests with timingSafeEqual, never the token with === (source check)", () => {
    const source = readFileSync(new URL("../../src/http/admin-auth.ts", import.meta.url), "utf8");
    expect(source).toMatch(/timingSafeEqual\(given, expected\)/);
    expect(source).not.toMatch(/===\s*(adminToken|expected)|(adminToken|expected)\s*===/);
  });

  it("reads ADMIN_TOKEN from the environment only and refuses one shorter than 16 characters", async () => {
    await expect(testApp("sqlite", { ADMIN_TOKEN: "short" })).rejects.toThrow(/ADMIN_TOKEN/);
  });

  it("under NODE_ENV=test without RATE_LIMIT_ENABLED, wrong tokens are not limited (the default of tests)", async () => {
    const ip = nextIp();
    for (let i = 0; i < ADMIN_FAILURES_PER_MINUTE + 2; i++) expect((await get("Bearer nope", ip)).statusCode).toBe(401);
  });
});

describe("failed operator-token attempts are limited per IP", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp("sqlite", { ADMIN_TOKEN, RATE_LIMIT_ENABLED: "true" });
  });
  afterAll(async () => t?.close());

  const get = (url: string, ip: string, token?: string) =>
    t.app.inject({
      method: "GET",
      url,
      remoteAddress: ip,
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    });

  it("after 10 wrong tokens every admin route answers 429 to that IP, the right token too; others are not affected", async () => {
    expect(ADMIN_FAILURES_PER_MINUTE).toBe(10);
    const ip = nextIp();
    for (let i = 0; i < ADMIN_FAILURES_PER_MINUTE; i++) {
      expect((await get("/api/admin/orders", ip, `guess-${i}-0123456789abcdef`)).statusCode).toBe(401);
    }
    for (const [url, token] of [
      ["/api/admin/orders", "another-guess-0123456789"],
      ["/api/admin/claims", undefined],
      ["/api/admin/audit", ADMIN_TOKEN],
    ] as const) {
      const r = await get(url, ip, token);
      expect(r.statusCode, url).toBe(429);
      expect(r.headers["content-type"]).toMatch(/^application\/problem\+json/);
      const retry = Number(r.headers["retry-after"]);
      expect(retry).toBeGreaterThan(0);
      expect(retry).toBeLessThanOrEqual(60);
      expect(r.json()).toMatchObject({ code: "rate_limited", group: "admin", limit: ADMIN_FAILURES_PER_MINUTE });
    }
    expect((await get("/api/admin/orders", nextIp(), ADMIN_TOKEN)).statusCode).toBe(200);
    // public routes of the same address are not touched
    expect((await get("/api/x402-products", ip)).statusCode).toBe(200);
  });

  it("a burst of wrong tokens sent at once is bounded too", async () => {
    const ip = nextIp();
    const answers = await Promise.all(
      Array.from({ length: 3 * ADMIN_FAILURES_PER_MINUTE }, (_, i) =>
        get("/api/admin/orders", ip, `burst-${i}-0123456789`),
      ),
    );
    const codes = answers.map((r) => r.statusCode);
    expect(codes.filter((c) => c === 401)).toHaveLength(ADMIN_FAILURES_PER_MINUTE);
    expect(codes.filter((c) => c === 429)).toHaveLength(2 * ADMIN_FAILURES_PER_MINUTE);
  });

  it("the operator's own successful requests cost nothing", async () => {
    const ip = nextIp();
    for (let i = 0; i < 3 * ADMIN_FAILURES_PER_MINUTE; i++) {
      expect((await get("/api/admin/orders", ip, ADMIN_TOKEN)).statusCode).toBe(200);
    }
    for (let i = 0; i < ADMIN_FAILURES_PER_MINUTE - 1; i++) {
      expect((await get("/api/admin/orders", ip, "wrong-token-0123456789")).statusCode).toBe(401);
    }
    expect((await get("/api/admin/orders", ip, ADMIN_TOKEN)).statusCode).toBe(200);
  });
});
