import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Problem } from "../../src/http/problem.js";
import { QuoteService } from "../../src/jobs/quotes/service.js";
import { jobStore } from "../../src/jobs/store.js";
import { periodOf, suiteUsageId } from "../../src/jobs/usage.js";
import { type TestApp, testApp } from "../support/app.js";
import { ENGINES } from "../support/databases.js";
import { fuzzRuns } from "../support/fuzz.js";
import { problemOf } from "../support/problem.js";

const GB = 1_000_000_000;
const SEED = "correct horse battery staple 1234"; // 33 ASCII bytes
const BODY = { product: "auto", dataClass: "zeros", op: "compress" } as const;

/** The first day of last month (UTC), noon. */
function lastMonth(): Date {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1, 12));
}

describe.each(ENGINES)("suite quotes (%s)", (engine) => {
  let t: TestApp;
  const quote = (payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
    t.app.inject({ method: "POST", url: "/api/ppp-quote", payload, headers });
  const join = async (name: string) => {
    const r = await t.app.inject({
      method: "POST",
      url: "/api/join-work",
      payload: { name, intent: "I want to compress my sensor logs.", seed: SEED },
    });
    expect(r.statusCode, r.body).toBe(201);
    return r.json() as { token: string; identity_id: string };
  };

  beforeAll(async () => {
    t = await testApp(engine, { SUITE_QUOTE_TTL_SECONDS: "600" });
  });
  afterAll(() => t.close());

  it("GET /api/ppp-quote answers the spec's pricing record, its integer rules and the request values", async () => {
    const r = await t.app.inject({ method: "GET", url: "/api/ppp-quote" });
    expect(r.statusCode, r.body).toBe(200);
    const b = r.json();
    expect(b).toMatchObject({
      free_cap_gb: 100,
      usd_per_gb_after_free: 0.05,
      usd_per_gb_bulk: 0.04,
      min_paid_usd: 0.05,
      first_paid_egress_ref_usd: 0.09,
      model: "freemium_suite_v4_undercut",
      try_gate: "retired",
      gb_bytes: 1e9,
      mb_bytes: 1e6,
      free_cap_bytes: 100e9,
      units_per_gb_after_free: "50000",
      units_per_gb_bulk: "40000",
      min_paid_units: "50000",
      max_job_bytes: 1e15,
      quote_ttl_seconds: 600,
    });
    expect(b.request.products).toEqual(
      expect.arrayContaining(["auto", "zrw", "float", "text", "delta", "high_entropy", "general"]),
    );
    expect(b.request.data_classes).toContain("zeros");
    expect(b.request.ops).toEqual(["compress", "decompress", "roundtrip"]);
    expect(b.request.default_level).toBe("fast");
    expect(Object.keys(b.levels).sort()).toEqual(["balanced", "fast", "max"]);
    expect(b.examples).toEqual([
      { bytes: 50e9, amount_units: "0", amount_usd: "0.00" },
      { bytes: 150e9, amount_units: "2500000", amount_usd: "2.50" },
      { bytes: 300e9, amount_units: "9000000", amount_usd: "9.00" },
    ]);
    // the payments matrix shows the same record
    const m = (await t.app.inject({ method: "GET", url: "/api/payments" })).json();
    for (const [k, v] of Object.entries(m.suite_pricing)) expect(b[k], k).toEqual(v);
  });

  it("POST /api/ppp-quote prices a job and persists the quote with an expiry", async () => {
    // anonymous: the free part is the client IP's daily allowance (1 GB), not 100 GB per job (issue #21)
    const r = await quote({ ...BODY, bytes: 150 * GB, email: "agent@example.com" });
    expect(r.statusCode, r.body).toBe(200);
    const q = r.json();
    expect(q.quote_id).toMatch(/^qt_[A-Za-z0-9_-]{22}$/);
    expect(q).toMatchObject({
      state: "open",
      product: "auto",
      dataClass: "zeros",
      op: "compress",
      level: "fast",
      bytes: 150 * GB,
      billable_bytes: 149 * GB,
      free_bytes: 1 * GB,
      free_cap_remaining_bytes: null,
      free_cap_remaining_after_bytes: null,
      free_cap_period: null,
      amount_units: "6960000",
      amount_usd: "6.96",
      amount_cents: 696,
      currency: "usd",
      free: false,
      pay: { x402: "POST /api/x402-suite with the same body", card: "POST /api/ppp-checkout { quote_id }" },
      pricing_model: "freemium_suite_v4_undercut",
    });
    expect(q.tiers.map((x: { tier: string }) => x.tier)).toEqual(["free", "standard", "bulk", "minimum"]);
    expect(q.estimate.seconds).toBeGreaterThan(0);
    expect(q.estimate.level_note).toMatch(/^level fast: .*MB\/s/);
    expect(q.estimate.by_level.max).toBeGreaterThan(q.estimate.by_level.fast);
    expect(Date.parse(q.expires_at) - Date.parse(q.created_at)).toBe(600_000);

    const row = await jobStore.quote(t.app.services.db.kysely, q.quote_id);
    expect(row).toMatchObject({
      state: "open",
      amount_units: "6960000",
      amount_cents: 696,
      level: "fast",
      data_class: "zeros",
      identity_id: null,
      email: "agent@example.com",
      expires_at: q.expires_at,
    });
    expect(Number(row?.bytes)).toBe(150 * GB);
    expect(Number(row?.billable_bytes)).toBe(149 * GB);
    expect(Number(row?.free_bytes)).toBe(1 * GB);
    expect(JSON.parse(row?.tiers ?? "[]")).toEqual(q.tiers);
    // and reads back the same
    expect(t.app.services.quotes.view(await t.app.services.quotes.get(q.quote_id), null)).toEqual(q);
  });

  // anonymous: 1 GB of the IP's day is free (a quote alone holds none of it)
  it.each([
    [GB / 2, "0", 0, true],
    [300 * GB, "12960000", 1296, false],
    [1 * GB + 1, "50000", 5, false],
  ])("quotes %d bytes at %s units", async (bytes, units, cents, free) => {
    const q = (await quote({ ...BODY, bytes, level: "max" })).json();
    expect(q).toMatchObject({ amount_units: units, amount_cents: cents, free, level: "max" });
  });

  it.each([
    ["bytes 0", { ...BODY, bytes: 0 }, "/bytes"],
    ["negative bytes", { ...BODY, bytes: -5 }, "/bytes"],
    ["fractional bytes", { ...BODY, bytes: 1.5 }, "/bytes"],
    ["bytes as a string", { ...BODY, bytes: "100" }, "/bytes"],
    ["bytes over 10^15", { ...BODY, bytes: 1e15 + 1 }, "/bytes"],
    ["no bytes", { ...BODY }, "/bytes"],
    ["unknown product", { ...BODY, product: "zip", bytes: 10 }, "/product"],
    ["unknown data class", { ...BODY, dataClass: "video", bytes: 10 }, "/dataClass"],
    ["unknown op", { ...BODY, op: "bench", bytes: 10 }, "/op"],
    ["unknown level", { ...BODY, level: "ultra", bytes: 10 }, "/level"],
    ["a bad email", { ...BODY, bytes: 10, email: "nobody" }, "/email"],
  ])("refuses %s with a 400 problem", async (_name, payload, path) => {
    const r = await quote(payload);
    expect(r.statusCode, r.body).toBe(400);
    expect(r.headers["content-type"]).toMatch(/^application\/problem\+json/);
    const b = r.json();
    expect(b.code).toBe("validation_failed");
    expect(b.errors.map((e: { path: string }) => e.path)).toContain(path);
  });

  it("refuses a control character in the identity field and a body that is not JSON", async () => {
    const r = await quote({ ...BODY, bytes: 10, identity: "lpi_\u0000" });
    expect(r.json().code).toBe("invalid_text");
    const bad = await t.app.inject({
      method: "POST",
      url: "/api/ppp-quote",
      payload: "{nope",
      headers: { "content-type": "application/json" },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe("malformed_json");
  });

  it("an invalid identity token is a 401 problem; two different tokens are a 400", async () => {
    for (const headers of [{ "x-identity-token": "lpi_nope" }, { "x-identity-token": `lpi_${"A".repeat(43)}` }]) {
      const r = await quote({ ...BODY, bytes: 10 }, headers);
      expect(r.statusCode, r.body).toBe(401);
      expect(r.json().code).toBe("identity_token_invalid");
    }
    const body = await quote({ ...BODY, bytes: 10, identity: "lpi_nope" });
    expect(body.statusCode).toBe(401);
    const a = await join("Conflicted");
    const both = await quote(
      { ...BODY, bytes: 10, identity: a.token },
      { "x-identity-token": `lpi_${"B".repeat(43)}` },
    );
    expect(both.statusCode).toBe(400);
    expect(both.json().code).toBe("identity_conflict");
  });

  it("an identity's free cap is what is left of 100 GB this calendar month (UTC)", async () => {
    const { quotes } = t.app.services;
    const me = await join("Metered");
    const ask = async (bytes: number, how: "header" | "body" = "header") =>
      (
        await quote(
          how === "body" ? { ...BODY, bytes, identity: me.token } : { ...BODY, bytes },
          how === "header" ? { "x-identity-token": me.token } : {},
        )
      ).json();

    const fresh = await ask(150 * GB);
    expect(fresh).toMatchObject({
      free_bytes: 100 * GB,
      free_cap_remaining_bytes: 100 * GB,
      free_cap_remaining_after_bytes: 0,
      free_cap_period: periodOf(new Date()),
      amount_units: "2500000",
    });
    const row = await quotes.get(fresh.quote_id);
    expect(row.identity_id).toBe(me.identity_id);

    // 30 GB used this month: 70 GB left
    const first = await quotes.usage.record({
      id: "suite:job_a:input",
      identityId: me.identity_id,
      meter: "suite_bytes",
      valueBytes: 30 * GB,
      jobId: "job_a",
    });
    expect(first.recorded).toBe(true);
    // recording the same event again changes nothing
    const again = await quotes.usage.record({
      id: "suite:job_a:input",
      identityId: me.identity_id,
      meter: "suite_bytes",
      valueBytes: 30 * GB,
      jobId: "job_a",
    });
    expect(again.recorded).toBe(false);
    expect(Number(again.event.value_bytes)).toBe(30 * GB);
    // last month's usage does not count
    await quotes.usage.record({
      id: "suite:job_old:input",
      identityId: me.identity_id,
      meter: "suite_bytes",
      valueBytes: 500 * GB,
      jobId: "job_old",
      at: lastMonth(),
    });
    // nor does another identity's
    await quotes.usage.record({
      id: "suite:job_x:input",
      identityId: "idn_other",
      meter: "suite_bytes",
      valueBytes: GB,
    });

    const small = await ask(50 * GB, "body");
    expect(small).toMatchObject({
      free_bytes: 50 * GB,
      free_cap_remaining_bytes: 70 * GB,
      free_cap_remaining_after_bytes: 20 * GB,
      amount_units: "0",
      free: true,
    });
    const big = await ask(100 * GB);
    expect(big).toMatchObject({ free_bytes: 70 * GB, billable_bytes: 30 * GB, amount_units: "1500000" });
    expect(big.tiers[0]).toMatchObject({ tier: "free", bytes: 70 * GB, limit_bytes: 70 * GB });

    // a job bought with free bytes holds them until its usage is recorded (never counted twice)
    expect(await jobStore.quoteTransition(t.app.services.db.kysely, small.quote_id, ["open"], "used")).toBe(true);
    expect(await quotes.freeRemaining(me.identity_id)).toBe(20n * BigInt(GB));
    await quotes.usage.record({
      id: suiteUsageId("job_small"),
      identityId: me.identity_id,
      meter: "suite_bytes",
      valueBytes: 50 * GB,
      jobId: "job_small",
      quoteId: small.quote_id,
    });
    expect(await quotes.freeRemaining(me.identity_id)).toBe(20n * BigInt(GB));
    // the cap is used up: everything is billable, and never below zero
    await quotes.usage.record({
      id: "suite:job_c:input",
      identityId: me.identity_id,
      meter: "suite_bytes",
      valueBytes: 80 * GB,
    });
    const none = await ask(1 * GB);
    expect(none).toMatchObject({
      free_bytes: 0,
      free_cap_remaining_bytes: 0,
      billable_bytes: GB,
      amount_units: "50000",
    });
    // a correction (negative event) gives some back
    await quotes.usage.record({
      id: "suite:job_c:refund",
      identityId: me.identity_id,
      meter: "suite_bytes",
      valueBytes: -70 * GB,
    });
    expect(await quotes.freeRemaining(me.identity_id)).toBe(10n * BigInt(GB));
  });

  it("an identity without usage keeps the whole cap; anonymous quotes get the IP's day, not 100 GB per job", async () => {
    const fresh = await join("Fresh");
    expect((await quote({ ...BODY, bytes: 100 * GB }, { "x-identity-token": fresh.token })).json().amount_units).toBe(
      "0",
    );
    for (let i = 0; i < 2; i++) {
      expect((await quote({ ...BODY, bytes: 100 * GB })).json()).toMatchObject({
        free_bytes: GB,
        amount_units: "4950000",
      });
    }
  });

  it("an expired quote cannot be paid (410); a used one is 409; an unknown one 404", async () => {
    let now = new Date();
    const quotes = new QuoteService(t.app.services.db.kysely, { ttlSeconds: 60 }, () => now);
    const q = await quotes.quote({ ...BODY, bytes: 150 * GB }, null);
    expect((await quotes.payable(q.quote_id)).state).toBe("open");
    now = new Date(Date.parse(q.expires_at) - 1);
    expect((await quotes.payable(q.quote_id)).state).toBe("open");
    now = new Date(Date.parse(q.expires_at));
    const p = await problemOf(quotes.payable(q.quote_id));
    expect([p.status, p.code]).toEqual([410, "quote_expired"]);
    expect((await quotes.get(q.quote_id)).state).toBe("expired");
    // the row is marked expired, for everyone
    expect((await jobStore.quote(t.app.services.db.kysely, q.quote_id))?.state).toBe("expired");

    now = new Date();
    const paid = await quotes.quote({ ...BODY, bytes: 10 }, null);
    await jobStore.quoteTransition(t.app.services.db.kysely, paid.quote_id, ["open"], "paid");
    // paid before expiry: it can still turn into its job after it
    now = new Date(Date.parse(paid.expires_at) + 3_600_000);
    expect((await quotes.payable(paid.quote_id)).state).toBe("paid");
    await jobStore.quoteTransition(t.app.services.db.kysely, paid.quote_id, ["paid"], "used", { job_id: "job_z" });
    const used = await problemOf(quotes.payable(paid.quote_id));
    expect([used.status, used.code, used.extra.job_id]).toEqual([409, "quote_already_used", "job_z"]);

    const missing = await problemOf(quotes.payable("qt_missing"));
    expect([missing.status, missing.code]).toEqual([404, "quote_not_found"]);
  });

  it("a paid request must match its quote (no client-chosen amounts)", async () => {
    const { quotes } = t.app.services;
    const q = await quotes.quote({ ...BODY, bytes: 150 * GB, level: "balanced" }, null);
    const row = await quotes.get(q.quote_id);
    expect(() => quotes.assertMatches(row, { ...BODY, bytes: 150 * GB, level: "balanced" })).not.toThrow();
    let err: Problem | undefined;
    try {
      quotes.assertMatches(row, { ...BODY, bytes: 150 * GB - 1 });
    } catch (e) {
      err = e as Problem;
    }
    expect([err?.status, err?.code, err?.extra.fields]).toEqual([409, "quote_mismatch", ["level", "bytes"]]);
  });

  it("re-checks an identity's free cap before a quote buys its job", async () => {
    const { quotes } = t.app.services;
    const me = await join("Racer");
    const a = await quotes.quote({ ...BODY, bytes: 80 * GB }, { id: me.identity_id });
    const b = await quotes.quote({ ...BODY, bytes: 80 * GB }, { id: me.identity_id });
    expect([a.free_bytes, b.free_bytes]).toEqual([80 * GB, 80 * GB]);
    const rowA = await quotes.payable(a.quote_id);
    await quotes.recheckFreeCap(rowA);
    await jobStore.quoteTransition(t.app.services.db.kysely, a.quote_id, ["open"], "used");
    const p = await problemOf(quotes.recheckFreeCap(await quotes.payable(b.quote_id)));
    expect([p.status, p.code, p.extra.free_cap_remaining_bytes]).toEqual([409, "quote_free_cap_changed", 20 * GB]);
    // a quote without an identity or without free bytes has nothing to re-check
    await quotes.recheckFreeCap(await quotes.get((await quotes.quote({ ...BODY, bytes: 10 }, null)).quote_id));
  });

  it("refuses bad requests from callers that bypass the route schema", async () => {
    const p = await problemOf(t.app.services.quotes.quote({ ...BODY, bytes: 2 ** 60 } as never, null));
    expect([p.status, p.code, p.extra.field]).toEqual([400, "quote_request_invalid", "bytes"]);
  });
});

describe("POST /api/ppp-quote under generated input", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp("sqlite");
  });
  afterAll(() => t.close());

  it("answers a quote or a 4xx problem, never a 5xx; the route is in /openapi.yaml", async () => {
    const { default: fc } = await import("fast-check");
    const value = fc.oneof(
      fc.jsonValue({ maxDepth: 2 }),
      fc.constantFrom("auto", "zeros", "compress", "max", 0, -1, 1e15, 1e15 + 1, 2 ** 53, "lpi_x", null),
    );
    const body = fc.oneof(
      fc.dictionary(fc.constantFrom("product", "dataClass", "op", "bytes", "level", "identity", "email"), value),
      fc.record({
        product: fc.constantFrom(...["auto", "zrw", "x"]),
        dataClass: fc.constantFrom("zeros", "json", "y"),
        op: fc.constantFrom("compress", "roundtrip", "z"),
        bytes: fc.oneof(fc.integer(), fc.double(), fc.bigInt({ min: 0n, max: 10n ** 16n }).map(Number)),
        identity: fc.option(fc.string({ maxLength: 60 }), { nil: undefined }),
      }),
    );
    const header = fc.option(
      fc.string({ maxLength: 60 }).filter((s) => /^[\x21-\x7e]*$/.test(s)),
      { nil: undefined },
    );
    await fc.assert(
      fc.asyncProperty(body, header, async (payload, token) => {
        const r = await t.app.inject({
          method: "POST",
          url: "/api/ppp-quote",
          payload: payload as Record<string, unknown>,
          headers: token === undefined ? {} : { "x-identity-token": token },
        });
        expect(r.statusCode, r.body).toBeLessThan(500);
        if (r.statusCode >= 400) expect(r.headers["content-type"]).toMatch(/^application\/problem\+json/);
      }),
      { numRuns: fuzzRuns(150) },
    );
    const doc = await t.app.inject({ method: "GET", url: "/openapi.yaml" });
    expect(doc.statusCode).toBe(200);
    expect(doc.body).toContain("/api/ppp-quote");
  });
});
