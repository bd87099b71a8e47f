import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../src/db/database.js";
import { rateLimitStoreFor } from "../../src/http/rate-limit.js";
import { MemoryRateLimitStore, type RateLimitStore } from "../../src/http/rate-limit-store.js";
import { PgRateLimitStore } from "../../src/http/rate-limit-store-pg.js";
import type { App } from "../../src/http/types.js";
import { appOn, type TestApp, testApp } from "../support/app.js";
import { ENGINES, freshDatabase } from "../support/databases.js";

/**
 * Issue #21 item 8: the rate-limit counters. On PostgreSQL they are rows shared by every instance
 * (one atomic upsert per request); on SQLite they stay in the process. Same rule in both: a fixed
 * window opened by a key's first request. Timed with a clock the test controls.
 */

const W = 60_000;

describe.each(["memory", "postgres"] as const)("%s store", (kind) => {
  let db: Db | undefined;
  let clock = 1_800_000_000_000;
  let store: RateLimitStore;
  let pg: PgRateLimitStore | undefined;
  beforeAll(async () => {
    if (kind === "memory") {
      store = new MemoryRateLimitStore(() => clock);
      return;
    }
    db = (await freshDatabase("postgres")).db;
    pg = new PgRateLimitStore(db.kysely, { now: () => clock, sweepEveryMs: 0 });
    store = pg;
  });
  afterAll(async () => {
    await store?.close();
    await db?.close();
  });

  it("counts a key in a fixed window opened by its first request, then starts over", async () => {
    expect(await store.incr("k1", W)).toEqual({ current: 1, ttl: W });
    clock += 10_000;
    expect(await store.incr("k1", W)).toEqual({ current: 2, ttl: W - 10_000 });
    expect(await store.read("k1", W)).toEqual({ current: 2, ttl: W - 10_000 });
    expect(await store.incr("k2", W)).toEqual({ current: 1, ttl: W });
    clock += W - 10_000; // k1's window has ended
    expect(await store.read("k1", W)).toEqual({ current: 0, ttl: 0 });
    expect(await store.incr("k1", W)).toEqual({ current: 1, ttl: W });
  });

  it("refunds one count of the open window only, never below zero", async () => {
    await store.incr("r", W);
    await store.incr("r", W);
    await store.refund("r", W);
    expect((await store.read("r", W)).current).toBe(1);
    await store.refund("r", W);
    await store.refund("r", W);
    expect((await store.read("r", W)).current).toBe(0);
    expect((await store.incr("r", W)).current).toBe(1);
  });

  it("concurrent requests of one key each get their own count: none lost, none repeated", async () => {
    const counts = await Promise.all(Array.from({ length: 200 }, () => store.incr("burst", W)));
    expect(counts.map((c) => c.current).sort((a, b) => a - b)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
  });

  it.runIf(kind === "postgres")("the sweep deletes the rows whose window ended, and only them", async () => {
    const p = pg as PgRateLimitStore;
    await p.incr("old", W);
    clock += W;
    await p.incr("fresh", W);
    const deleted = await p.sweep();
    expect(deleted).toBeGreaterThanOrEqual(1);
    const keys = (await (db as Db).kysely.selectFrom("rate_limits").select("key").execute()).map((r) => r.key);
    expect(keys).toContain("fresh");
    expect(keys).not.toContain("old");
  });
});

describe("the store of a deployment", () => {
  it("PostgreSQL's table with a PostgreSQL database, the process otherwise", async () => {
    const sqlite = await freshDatabase("sqlite");
    const mem = rateLimitStoreFor(sqlite.db);
    expect(mem).toBeInstanceOf(MemoryRateLimitStore);
    await mem.close();
    await sqlite.db.close();
    expect(rateLimitStoreFor(undefined)).toBeInstanceOf(MemoryRateLimitStore);
  });
});

describe.each(ENGINES)("two app instances on one %s database", (engine) => {
  let a: TestApp;
  let b: App;
  const env = {
    RATE_LIMIT_ENABLED: "true",
    RATE_LIMIT_CODEC_PER_MINUTE: "5",
    ADMIN_TOKEN: "two-instances-admin-token-0123456789",
  };
  beforeAll(async () => {
    a = await testApp(engine, env);
    b = await appOn(a.app.services.db, env);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  const omni = (app: App, ip: string) =>
    app.inject({ method: "POST", url: "/api/omni", payload: { op: "profile", data: "aGVsbG8=" }, remoteAddress: ip });

  it(
    engine === "postgres"
      ? "share one budget per IP: 3 requests to A and 3 to B, the 6th is 429"
      : "count in each process (SQLite: one service process)",
    async () => {
      const ip = "203.0.113.77";
      const codes: number[] = [];
      for (let i = 0; i < 3; i++) codes.push((await omni(a.app, ip)).statusCode);
      for (let i = 0; i < 3; i++) codes.push((await omni(b, ip)).statusCode);
      if (engine === "postgres") {
        expect(codes).toEqual([200, 200, 200, 200, 200, 429]);
        const last = await omni(b, ip);
        expect(last.json()).toMatchObject({ code: "rate_limited", group: "codec", limit: 5 });
        expect(Number(last.headers["retry-after"])).toBeGreaterThan(0);
        // Another address has its own budget on both.
        expect((await omni(a.app, "203.0.113.78")).statusCode).toBe(200);
      } else {
        expect(codes).toEqual([200, 200, 200, 200, 200, 200]);
      }
    },
  );

  it.runIf(engine === "postgres")("the operator-token failure limit is shared too", async () => {
    const ip = "203.0.113.90";
    const guess = (app: App) =>
      app.inject({
        method: "GET",
        url: "/api/admin/orders",
        headers: { authorization: "Bearer wrong-token-wrong-token" },
        remoteAddress: ip,
      });
    const codes: number[] = [];
    for (let i = 0; i < 6; i++) codes.push((await guess(a.app)).statusCode);
    for (let i = 0; i < 6; i++) codes.push((await guess(b)).statusCode);
    expect(codes.filter((c) => c === 429).length).toBe(2);
    expect(codes.slice(0, 10).every((c) => c !== 429)).toBe(true);
  });
});
