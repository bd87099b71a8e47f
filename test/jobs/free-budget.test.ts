import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IdentityService } from "../../src/identity/service.js";
import { SuitePurchase } from "../../src/jobs/purchase.js";
import { QuoteService } from "../../src/jobs/quotes/service.js";
import { jobStore } from "../../src/jobs/store.js";
import { type TestApp, testApp } from "../support/app.js";
import { ENGINES } from "../support/databases.js";
import { problemOf } from "../support/problem.js";
import { BASE_SETTLEMENT } from "../support/rails.js";

/**
 * Issue #21 item 2 and the admission part of item 3: the free cap belongs to a caller, not to a
 * job. Free volume needs a join-work identity (100 GB per identity per calendar month); an
 * anonymous caller gets SUITE_ANON_FREE_BYTES_PER_DAY per IP (default 1 GB); identities are
 * issued at most IDENTITY_ISSUE_PER_IP_PER_DAY per IP (default 3); one caller has at most 1
 * running and 3 queued free jobs (429 free_jobs_limit); queued free bytes of all callers are
 * capped (503 free_tier_busy). Every counter is read from the database, under one lock on
 * PostgreSQL, so concurrent requests never exceed them.
 */

const GB = 1_000_000_000;
const MB = 1_000_000;
const SEED = "correct horse battery staple 1234"; // 33 ASCII bytes
const BODY = { product: "auto", dataClass: "text", op: "compress" } as const;

describe.each(ENGINES)("free suite work belongs to a caller (%s)", (engine) => {
  let t: TestApp;
  let ipSeq = 0;
  /** A fresh client address per use, so the tests of one app do not share an IP's budget. */
  const newIp = () => `198.51.100.${++ipSeq}`;

  const suite = (payload: Record<string, unknown>, who: { ip: string; token?: string }) =>
    t.app.inject({
      method: "POST",
      url: "/api/x402-suite",
      payload,
      remoteAddress: who.ip,
      headers: who.token ? { "x-identity-token": who.token } : {},
    });
  const join = (ip: string, name = "Tester") =>
    t.app.inject({
      method: "POST",
      url: "/api/join-work",
      remoteAddress: ip,
      payload: { name, intent: "I want to compress my sensor logs.", seed: SEED },
    });
  const identity = async (ip: string) => {
    const r = await join(ip);
    expect(r.statusCode, r.body).toBe(201);
    return r.json() as { token: string; identity_id: string };
  };

  beforeAll(async () => {
    // The queue cap is tested on its own app below; here it is out of the way.
    t = await testApp(engine, {
      SUITE_FREE_QUEUE_BYTES: String(10 ** 15),
      IDENTITY_ISSUE_PER_IP_PER_DAY: "3",
      // a configured rail, so that a quoted request is a 402 (nothing here is ever paid)
      PAY_TO_BASE: "0x1111111111111111111111111111111111111111",
      ...BASE_SETTLEMENT,
    });
  });
  afterAll(() => t?.close());

  it("the three-way split: three 100 GB jobs get one free job and two 402s", async () => {
    // With an identity: its 100 GB of the month go to the first job; the next two are quoted.
    const ip = newIp();
    const me = await identity(ip);
    const idn = [];
    for (let i = 0; i < 3; i++) idn.push(await suite({ ...BODY, bytes: 100 * GB }, { ip, token: me.token }));
    expect(idn.map((r) => r.statusCode)).toEqual([200, 402, 402]);
    expect(idn[1]?.json().quote).toMatchObject({ free_bytes: 0, amount_units: "5000000" });
    // Anonymously (a new IP: 1 GB a day), 100 GB is already past the allowance: none is free,
    // each is quoted with the 1 GB the IP has left as its free part.
    const anonIp = newIp();
    const anon = [];
    for (let i = 0; i < 3; i++) anon.push(await suite({ ...BODY, bytes: 100 * GB }, { ip: anonIp }));
    expect(anon.map((r) => r.statusCode)).toEqual([402, 402, 402]);
    expect(anon[0]?.json().quote).toMatchObject({ free_bytes: GB, billable_bytes: 99 * GB, amount_units: "4950000" });
    // The same split at the anonymous scale: three jobs of 1 GB (the day's allowance) from one IP.
    const smallIp = newIp();
    const small = [];
    for (let i = 0; i < 3; i++) small.push(await suite({ ...BODY, bytes: GB }, { ip: smallIp }));
    expect(small.map((r) => r.statusCode)).toEqual([200, 402, 402]);
    expect(small[1]?.json().quote).toMatchObject({ free_bytes: 0, amount_units: "50000" });
  });

  it("the identity-then-no-identity trick gets a 402", async () => {
    const ip = newIp();
    const me = await identity(ip);
    const used = await suite({ ...BODY, bytes: 100 * GB }, { ip, token: me.token });
    expect(used.statusCode, used.body).toBe(200);
    const withIdentity = await suite({ ...BODY, bytes: 100 * GB }, { ip, token: me.token });
    expect(withIdentity.statusCode).toBe(402);
    const without = await suite({ ...BODY, bytes: 100 * GB }, { ip });
    expect(without.statusCode, without.body).toBe(402);
    expect(without.json().quote).toMatchObject({ free_bytes: GB, amount_units: "4950000", free: false });
  });

  it("an anonymous quote's free part is what is left of the IP's day; an IPv6 /64 is one IP", async () => {
    const ip = newIp();
    const q = await t.app.inject({
      method: "POST",
      url: "/api/ppp-quote",
      remoteAddress: ip,
      payload: { ...BODY, bytes: 300 * MB },
    });
    expect(q.json()).toMatchObject({ free_bytes: 300 * MB, amount_units: "0", free: true });
    // a quote holds nothing; a free job holds its free bytes for the day
    expect((await suite({ ...BODY, bytes: 600 * MB }, { ip })).statusCode).toBe(200);
    const rest = await suite({ ...BODY, bytes: 1 * GB }, { ip });
    expect(rest.statusCode).toBe(402);
    expect(rest.json().quote).toMatchObject({ free_bytes: 400 * MB, billable_bytes: 600 * MB });
    const row = await jobStore.quote(t.app.services.db.kysely, rest.json().quote.quote_id);
    // the client IP is kept only as a keyed hash
    expect(row?.client_ip_hash).toMatch(/^[0-9a-f]{32}$/);
    expect(JSON.stringify(row)).not.toContain(ip);

    expect((await suite({ ...BODY, bytes: GB }, { ip: "2001:db8:5:6::1" })).statusCode).toBe(200);
    const sameNet = await suite({ ...BODY, bytes: 10 * MB }, { ip: "2001:db8:5:6:ffff:1:2:3" });
    expect(sameNet.statusCode).toBe(402);
    expect((await suite({ ...BODY, bytes: 10 * MB }, { ip: "2001:db8:5:7::1" })).statusCode).toBe(200);
  });

  it("SUITE_ANON_FREE_BYTES_PER_DAY=0 turns anonymous free work off; no IP known: nothing free", async () => {
    const quotes = new QuoteService(t.app.services.db.kysely, { ttlSeconds: 600, anonFreeBytesPerDay: 0 });
    expect(await quotes.quote({ ...BODY, bytes: 1 }, null, { ip: newIp() })).toMatchObject({
      free_bytes: 0,
      amount_units: "50000",
    });
    expect(await t.app.services.quotes.quote({ ...BODY, bytes: 1 }, null)).toMatchObject({ free_bytes: 0 });
  });

  it("identity issuance is limited per IP per day: the fourth gets 429 identity_daily_limit with Retry-After", async () => {
    const ip = newIp();
    for (let i = 0; i < 3; i++) expect((await join(ip)).statusCode).toBe(201);
    const over = await join(ip);
    expect(over.statusCode, over.body).toBe(429);
    expect(over.json()).toMatchObject({ code: "identity_daily_limit", limit: 3 });
    const retry = Number(over.headers["retry-after"]);
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(86_400);
    expect(over.json().retry_after).toBe(retry);
    // another IP is not affected
    expect((await join(newIp())).statusCode).toBe(201);
  });

  it("the identity issuance day is the UTC calendar day (controlled clock)", async () => {
    let now = new Date("2031-03-09T23:59:59.000Z");
    const ids = new IdentityService(t.app.services.db.kysely, "k".repeat(32), 30, () => now, { perIpPerDay: 3 });
    const input = { name: "Clock", intent: "I want to compress my sensor logs.", seed: SEED };
    const ip = "192.0.2.77";
    for (let i = 0; i < 3; i++) await ids.join(input, { ip });
    const p = await problemOf(ids.join(input, { ip }));
    expect([p.status, p.code, p.headers["Retry-After"]]).toEqual([429, "identity_daily_limit", "1"]);
    now = new Date("2031-03-10T00:00:00.000Z");
    expect((await ids.join(input, { ip })).identity_id).toMatch(/^idn_/);
  });

  it("the anonymous day and the identity month turn over at UTC midnight (controlled clock)", async () => {
    let now = new Date("2031-01-31T23:59:00.000Z");
    const s = t.app.services;
    const quotes = new QuoteService(s.db.kysely, { ttlSeconds: 600, anonFreeBytesPerDay: GB }, () => now);
    const purchase = new SuitePurchase(s.db.kysely, quotes, s.jobs, s.x402, s.card, "http://lab.test", {
      now: () => now,
    });
    const ip = { ip: "192.0.2.200" };
    expect((await purchase.x402({ ...BODY, bytes: GB }, undefined, null, {}, ip)).kind).toBe("free");
    expect((await purchase.x402({ ...BODY, bytes: 1 }, undefined, null, {}, ip)).kind).toBe("quote_challenge");
    const me = { id: "idn_clock_month" };
    expect((await purchase.x402({ ...BODY, bytes: 100 * GB }, undefined, me, {}, ip)).kind).toBe("free");
    expect((await purchase.x402({ ...BODY, bytes: GB }, undefined, me, {}, ip)).kind).toBe("quote_challenge");
    now = new Date("2031-02-01T00:00:00.000Z");
    expect((await purchase.x402({ ...BODY, bytes: GB }, undefined, null, {}, ip)).kind).toBe("free");
    expect((await purchase.x402({ ...BODY, bytes: 100 * GB }, undefined, me, {}, ip)).kind).toBe("free");
  });

  it("one caller has at most 3 queued and 1 running free jobs: more → 429 free_jobs_limit with Retry-After", async () => {
    const ip = newIp();
    const me = await identity(ip);
    const jobs: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await suite({ ...BODY, bytes: MB }, { ip, token: me.token });
      expect(r.statusCode, r.body).toBe(200);
      jobs.push(r.json().job_id);
    }
    const over = await suite({ ...BODY, bytes: MB }, { ip, token: me.token });
    expect(over.statusCode, over.body).toBe(429);
    expect(over.json()).toMatchObject({ code: "free_jobs_limit", queued: 3, max_queued: 3, max_running: 1 });
    expect(Number(over.headers["retry-after"])).toBeGreaterThan(0);
    const db = t.app.services.db.kysely;
    // the refused request created no job, and its quote is still open
    const mine = await db.selectFrom("jobs").select("id").where("identity_id", "=", me.identity_id).execute();
    expect(mine.map((j) => j.id).sort()).toEqual([...jobs].sort());
    const last = await db
      .selectFrom("quotes")
      .select("state")
      .where("identity_id", "=", me.identity_id)
      .orderBy("created_at", "desc")
      .limit(1)
      .executeTakeFirstOrThrow();
    expect(last.state).toBe("open");

    const set = (id: string, state: "done" | "running") =>
      jobStore.jobTransition(db, id, ["awaiting_input"], { state });
    await set(jobs[0] as string, "done");
    const fourth = await suite({ ...BODY, bytes: MB }, { ip, token: me.token });
    expect(fourth.statusCode, fourth.body).toBe(200);
    // one running + three queued is the most
    await set(jobs[1] as string, "running");
    const fifth = await suite({ ...BODY, bytes: MB }, { ip, token: me.token });
    expect(fifth.statusCode, fifth.body).toBe(200);
    expect((await suite({ ...BODY, bytes: MB }, { ip, token: me.token })).statusCode).toBe(429);
    await set(jobs[2] as string, "running");
    expect((await suite({ ...BODY, bytes: MB }, { ip, token: me.token })).json()).toMatchObject({
      code: "free_jobs_limit",
      running: 2,
    });

    // anonymous callers are counted per IP
    const anonIp = newIp();
    for (let i = 0; i < 3; i++) expect((await suite({ ...BODY, bytes: MB }, { ip: anonIp })).statusCode).toBe(200);
    expect((await suite({ ...BODY, bytes: MB }, { ip: anonIp })).statusCode).toBe(429);
    // paid work is not limited by it: a paid quote is still a 402 to pay
    expect((await suite({ ...BODY, bytes: 2 * GB }, { ip: anonIp })).statusCode).toBe(402);
  });

  it("concurrent free requests of one caller never exceed its caps", async () => {
    const fire = (n: number, payload: Record<string, unknown>, who: { ip: string; token?: string }) =>
      Promise.all(Array.from({ length: n }, () => suite(payload, who)));
    const count = (rs: { statusCode: number }[]) =>
      rs.reduce<Record<number, number>>((a, r) => {
        a[r.statusCode] = (a[r.statusCode] ?? 0) + 1;
        return a;
      }, {});

    // 10 small jobs at once: 3 queued at most
    const ip = newIp();
    const me = await identity(ip);
    expect(count(await fire(10, { ...BODY, bytes: MB }, { ip, token: me.token }))).toEqual({ 200: 3, 429: 7 });
    // 10 × 40 GB of one identity at once: 100 GB a month holds two of them
    const ip2 = newIp();
    const other = await identity(ip2);
    expect(count(await fire(10, { ...BODY, bytes: 40 * GB }, { ip: ip2, token: other.token }))).toEqual({
      200: 2,
      402: 8,
    });
    // 10 × 400 MB from one IP at once: 1 GB a day holds two of them
    expect(count(await fire(10, { ...BODY, bytes: 400 * MB }, { ip: newIp() }))).toEqual({ 200: 2, 402: 8 });
    const held = await t.app.services.db.kysely
      .selectFrom("jobs")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("identity_id", "=", other.identity_id)
      .executeTakeFirstOrThrow();
    expect(Number(held.n)).toBe(2);
    // 10 identities asked for at once from one IP: 3 a day
    const joinIp = newIp();
    expect(count(await Promise.all(Array.from({ length: 10 }, () => join(joinIp))))).toEqual({ 201: 3, 429: 7 });
  });
});

describe.each(ENGINES)("queued free bytes of all callers are capped (%s)", (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp(engine, { SUITE_FREE_QUEUE_BYTES: String(2.5 * GB) });
  });
  afterAll(() => t?.close());

  const suite = (payload: Record<string, unknown>, ip: string, token?: string) =>
    t.app.inject({
      method: "POST",
      url: "/api/x402-suite",
      payload,
      remoteAddress: ip,
      headers: token ? { "x-identity-token": token } : {},
    });

  it("past SUITE_FREE_QUEUE_BYTES → 503 free_tier_busy with Retry-After; a job larger than the cap waits for an empty queue", async () => {
    const a = await suite({ ...BODY, bytes: GB }, "203.0.113.1");
    const b = await suite({ ...BODY, bytes: GB }, "203.0.113.2");
    expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
    const c = await suite({ ...BODY, bytes: GB }, "203.0.113.3");
    expect(c.statusCode, c.body).toBe(503);
    expect(c.json()).toMatchObject({ code: "free_tier_busy", queued_free_bytes: 2 * GB, limit_bytes: 2.5 * GB });
    expect(Number(c.headers["retry-after"])).toBeGreaterThan(0);
    // the refused caller's day is not used up
    expect((await suite({ ...BODY, bytes: 400 * MB }, "203.0.113.3")).statusCode).toBe(200);

    const join = await t.app.inject({
      method: "POST",
      url: "/api/join-work",
      remoteAddress: "203.0.113.9",
      payload: { name: "Big", intent: "I want to compress my sensor logs.", seed: SEED },
    });
    const token = join.json().token as string;
    expect((await suite({ ...BODY, bytes: 5 * GB }, "203.0.113.9", token)).statusCode).toBe(503);
    const db = t.app.services.db.kysely;
    await db.updateTable("jobs").set({ state: "done" }).where("paid_by", "=", "free").execute();
    expect((await suite({ ...BODY, bytes: 5 * GB }, "203.0.113.9", token)).statusCode).toBe(200);
  });
});
