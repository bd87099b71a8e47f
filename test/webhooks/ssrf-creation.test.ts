import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { App } from "../../src/http/types.js";
import { type TestApp, testApp } from "../support/app.js";

/**
 * Issue #23 item 1 (SSRF at creation): a suite request's `callback_url` must be https and resolve
 * only to public unicast addresses (WEBHOOK_ALLOW_PRIVATE is off by default). Loopback, RFC 1918,
 * link-local (the cloud metadata address), IPv6 loopback, a name that resolves to loopback and
 * plain http are refused with 400 `callback_url_refused` on every route that takes the field,
 * and nothing is stored. Before the feature the field was silently dropped: 200, a quote.
 */

const REQUEST = { product: "auto", dataClass: "text", op: "compress", bytes: 1000 };

const REFUSED = [
  "https://127.0.0.1/hook",
  "https://10.1.2.3/hook",
  "https://169.254.169.254/latest/meta-data/",
  "https://[::1]/hook",
  "https://[::ffff:127.0.0.1]/hook",
  "https://[fd00::1]/hook",
  "https://100.64.0.1/hook",
  "https://0.0.0.0/hook",
  "https://localhost:8443/hook",
  "http://93.184.215.14/hook",
];

describe("callback_url refused at creation (SSRF)", () => {
  let t: TestApp;
  let app: App;
  beforeAll(async () => {
    t = await testApp("sqlite", { WEBHOOK_POLL_SECONDS: "0" });
    app = t.app;
  });
  afterAll(async () => t?.close());

  it.each(REFUSED)("POST /api/ppp-quote refuses %s", async (callback_url) => {
    const r = await app.inject({ method: "POST", url: "/api/ppp-quote", payload: { ...REQUEST, callback_url } });
    expect(r.statusCode, r.body).toBe(400);
    expect(r.json().code).toBe("callback_url_refused");
  });

  it.each(REFUSED)("POST /api/x402-suite refuses %s (no job is created)", async (callback_url) => {
    const r = await app.inject({ method: "POST", url: "/api/x402-suite", payload: { ...REQUEST, callback_url } });
    expect(r.statusCode, r.body).toBe(400);
    expect(r.json().code).toBe("callback_url_refused");
    const jobs = await app.services.db.kysely.selectFrom("jobs").select("id").execute();
    expect(jobs).toEqual([]);
  });

  it("POST /api/ppp-checkout refuses a private callback_url for a quote", async () => {
    const q = await app.inject({ method: "POST", url: "/api/ppp-quote", payload: { ...REQUEST, bytes: 5e12 } });
    expect(q.statusCode, q.body).toBe(200);
    const r = await app.inject({
      method: "POST",
      url: "/api/ppp-checkout",
      payload: { quote_id: q.json().quote_id, email: "a@example.com", callback_url: "https://169.254.169.254/" },
    });
    expect(r.statusCode, r.body).toBe(400);
    expect(r.json().code).toBe("callback_url_refused");
  });

  it("a public https target is kept with the quote; POST /api/ppp-checkout can set it on an open quote", async () => {
    const q = await app.inject({
      method: "POST",
      url: "/api/ppp-quote",
      payload: { ...REQUEST, callback_url: "https://93.184.215.14/hook#x" },
    });
    expect(q.statusCode, q.body).toBe(200);
    expect(q.json().callback_url).toBe("https://93.184.215.14/hook");
    const big = await app.inject({ method: "POST", url: "/api/ppp-quote", payload: { ...REQUEST, bytes: 5e12 } });
    const quoteId = big.json().quote_id as string;
    expect(big.json().callback_url).toBeNull();
    // the card rail is not configured here (503), but the checked URL is kept with the quote first
    await app.inject({
      method: "POST",
      url: "/api/ppp-checkout",
      payload: { quote_id: quoteId, email: "a@example.com", callback_url: "https://93.184.215.14/card" },
    });
    const row = await app.services.db.kysely
      .selectFrom("quotes")
      .select("callback_url")
      .where("id", "=", quoteId)
      .executeTakeFirst();
    expect(row?.callback_url).toBe("https://93.184.215.14/card");
  });

  it("a name that resolves to loopback (or to any private address among public ones) is refused as non_public_address", async () => {
    const w = app.services.webhooks;
    const before = w.resolve;
    w.resolve = async (host) => {
      if (host === "internal.example") return [{ address: "127.0.0.1", family: 4 }];
      if (host === "mixed.example")
        return [
          { address: "93.184.215.14", family: 4 },
          { address: "fd00::5", family: 6 },
        ];
      return [{ address: "93.184.215.14", family: 4 }];
    };
    try {
      for (const callback_url of ["https://internal.example/x", "https://mixed.example/x"]) {
        const r = await app.inject({ method: "POST", url: "/api/ppp-quote", payload: { ...REQUEST, callback_url } });
        expect(r.statusCode, r.body).toBe(400);
        expect(r.json()).toMatchObject({ code: "callback_url_refused", reason: "non_public_address" });
      }
      const ok = await app.inject({
        method: "POST",
        url: "/api/ppp-quote",
        payload: { ...REQUEST, callback_url: "https://public.example/x" },
      });
      expect(ok.statusCode, ok.body).toBe(200);
    } finally {
      w.resolve = before;
    }
  });

  it("a URL with credentials or that is not a URL is refused", async () => {
    for (const callback_url of ["https://user:pw@93.184.215.14/hook", "not a url", "ftp://93.184.215.14/x"]) {
      const r = await app.inject({ method: "POST", url: "/api/ppp-quote", payload: { ...REQUEST, callback_url } });
      expect(r.statusCode, `${callback_url}: ${r.body}`).toBe(400);
    }
  });
});
