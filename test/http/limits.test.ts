import net from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { testConfig } from "../../src/config.js";
import { RATE_LIMITED_ROUTES } from "../../src/http/rate-limit.js";
import { type TestApp, testApp } from "../support/app.js";
import { SOLANA_SETTLEMENT } from "../support/rails.js";

/**
 * Hostile input (issue #9, item 8): request timeouts on a real socket, and per-IP rate limits of
 * the paid, checkout/claim, join and codec routes (docs/limits.md).
 */

// The Solana rail complete (so POST /api/x402-products answers its 402), never settling anything.
const PAY_TO = {
  PAY_TO_SOLANA: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
  ...SOLANA_SETTLEMENT,
  CONTACT_EMAIL: "ops@lab.test",
};

describe("settings", () => {
  it("defaults: 30 s per request, the connection timeout above the settlement wait, no proxy trusted", () => {
    const c = testConfig();
    expect(c.http).toEqual({ requestTimeoutSeconds: 30, connectionTimeoutSeconds: 75, trustProxy: false });
    expect(testConfig({ X402_SETTLE_TIMEOUT_SECONDS: "120" }).http.connectionTimeoutSeconds).toBe(150);
    expect(() => testConfig({ CONNECTION_TIMEOUT_SECONDS: "20" })).toThrow(/CONNECTION_TIMEOUT_SECONDS/);
    expect(() => testConfig({ REQUEST_TIMEOUT_SECONDS: "0" })).toThrow(/REQUEST_TIMEOUT_SECONDS/);
  });

  it("TRUST_PROXY: true, a hop count or addresses; anything else stops start-up", () => {
    expect(testConfig({ TRUST_PROXY: "true" }).http.trustProxy).toBe(true);
    expect(testConfig({ TRUST_PROXY: "false" }).http.trustProxy).toBe(false);
    expect(testConfig({ TRUST_PROXY: "2" }).http.trustProxy).toBe(2);
    expect(testConfig({ TRUST_PROXY: "127.0.0.1, 10.0.0.0/8,loopback" }).http.trustProxy).toBe(
      "127.0.0.1,10.0.0.0/8,loopback",
    );
    expect(() => testConfig({ TRUST_PROXY: "everyone" })).toThrow(/TRUST_PROXY/);
  });

  it("rate limits are off under NODE_ENV=test unless turned on, on elsewhere unless turned off", () => {
    expect(testConfig().rateLimit.enabled).toBe(false);
    expect(testConfig({ RATE_LIMIT_ENABLED: "true" }).rateLimit.enabled).toBe(true);
    expect(testConfig({ NODE_ENV: "development" }).rateLimit.enabled).toBe(true);
    expect(testConfig({ NODE_ENV: "development", RATE_LIMIT_ENABLED: "false" }).rateLimit.enabled).toBe(false);
    expect(testConfig().rateLimit.perMinute).toEqual({ paid: 60, checkout: 10, join: 5, codec: 60 });
    expect(() => testConfig({ RATE_LIMIT_ENABLED: "maybe" })).toThrow(/RATE_LIMIT_ENABLED/);
  });
});

describe("request timeouts on a listening socket", () => {
  let t: TestApp;
  let port: number;
  const sockets: net.Socket[] = [];
  beforeAll(async () => {
    t = await testApp("sqlite", { ...PAY_TO, REQUEST_TIMEOUT_SECONDS: "2" });
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    port = (t.app.server.address() as net.AddressInfo).port;
  });
  afterEach(() => {
    for (const s of sockets.splice(0)) s.destroy();
  });
  afterAll(async () => t.close());

  /** Opens a socket, writes `head`, then one byte of `trickle` every `everyMs`; resolves on close. */
  function slowClient(head: string, trickle: string, everyMs: number) {
    const socket = net.connect(port, "127.0.0.1");
    sockets.push(socket);
    const started = Date.now();
    let response = "";
    let timer: NodeJS.Timeout | undefined;
    socket.on("data", (d) => {
      response += d;
    });
    socket.on("error", () => {});
    socket.once("connect", () => {
      socket.write(head);
      let i = 0;
      timer = setInterval(() => {
        if (i < trickle.length && !socket.destroyed) socket.write(trickle[i++] as string);
      }, everyMs);
    });
    return new Promise<{ response: string; ms: number }>((resolve) =>
      socket.once("close", () => {
        clearInterval(timer);
        resolve({ response, ms: Date.now() - started });
      }),
    );
  }

  const problemOf = (response: string) => JSON.parse(response.slice(response.indexOf("\r\n\r\n") + 4));

  it("a body trickled slowly is answered 408 request_timeout and closed within the bound", async () => {
    const body = JSON.stringify({ sku: "zrw-pro", email: "slow@example.com", rail: "crypto_manual_evm", tx: "0x00" });
    const head = `POST /api/claims HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    const { response, ms } = await slowClient(head, body, 250);
    expect(ms).toBeGreaterThanOrEqual(1900);
    expect(ms).toBeLessThan(3500);
    expect(response).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(response).toMatch(/\r\nContent-Type: application\/problem\+json/i);
    expect(problemOf(response)).toMatchObject({ status: 408, code: "request_timeout" });
  });

  it("headers trickled slowly (slowloris) are cut within the bound too", async () => {
    const head = "GET /healthz HTTP/1.1\r\nHost: x\r\n";
    const { response, ms } = await slowClient(head, "X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 250);
    expect(ms).toBeLessThan(3500);
    expect(response).toMatch(/^HTTP\/1\.1 408 /);
    expect(problemOf(response).code).toBe("request_timeout");
  });

  it("a request whose body arrives in time is served on the same server", async () => {
    const body = JSON.stringify({ sku: "zrw-pro" });
    const r = await fetch(`http://127.0.0.1:${port}/api/x402-products`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    expect(r.status).toBe(402);
    // A 4 MiB codec upload sent at full speed is far inside the bound.
    const big = Buffer.alloc(4 * 1024 * 1024, 7);
    const c = await fetch(`http://127.0.0.1:${port}/api/compress?level=fast`, {
      method: "POST",
      headers: { "content-type": "application/octet-stream" },
      body: big,
    });
    expect(c.status).toBe(200);
    expect(Number(c.headers.get("x-original-bytes"))).toBe(big.length);
  });
});

describe("rate limits", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp("sqlite", {
      ...PAY_TO,
      RATE_LIMIT_ENABLED: "true",
      RATE_LIMIT_PAID_PER_MINUTE: "3",
      RATE_LIMIT_CHECKOUT_PER_MINUTE: "2",
      RATE_LIMIT_JOIN_PER_MINUTE: "2",
      RATE_LIMIT_CODEC_PER_MINUTE: "2",
    });
  });
  afterAll(async () => t.close());

  let ipSeq = 10;
  const nextIp = () => `203.0.113.${ipSeq++}`;
  const post = (url: string, ip: string, payload: unknown = {}, headers: Record<string, string> = {}) =>
    t.app.inject({ method: "POST", url, payload: payload as object, remoteAddress: ip, headers });

  function expect429(r: Awaited<ReturnType<typeof post>>, group: string, limit: number) {
    expect(r.statusCode, r.body).toBe(429);
    expect(r.headers["content-type"]).toMatch(/^application\/problem\+json/);
    const retry = Number(r.headers["retry-after"]);
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(60);
    expect(r.json()).toMatchObject({ status: 429, code: "rate_limited", group, limit, retry_after: retry });
  }

  it("paid: x402 402 challenges count; the next request gets 429 with Retry-After, other clients are not affected", async () => {
    const ip = nextIp();
    for (let i = 0; i < 3; i++) {
      const r = await post("/api/x402-products", ip, { sku: "zrw-pro" });
      expect(r.statusCode, r.body).toBe(402);
      expect(r.headers["x-ratelimit-limit"]).toBe("3");
    }
    expect429(await post("/api/x402-products", ip, { sku: "zrw-pro" }), "paid", 3);
    // Still 429 before validation: a malformed body is not even parsed.
    expect429(await post("/api/x402-products", ip, { sku: 42 }), "paid", 3);
    expect((await post("/api/x402-products", nextIp(), { sku: "zrw-pro" })).statusCode).toBe(402);
    // The free catalog read is not limited.
    const get = await t.app.inject({ method: "GET", url: "/api/x402-products", remoteAddress: ip });
    expect(get.statusCode).toBe(200);
  });

  it("with limits on, an unpaid request with an empty JSON body still gets the catalog-wide 402", async () => {
    const r = await t.app.inject({
      method: "POST",
      url: "/api/x402-products",
      headers: { "content-type": "application/json" },
      payload: "",
      remoteAddress: nextIp(),
    });
    expect(r.statusCode, r.body).toBe(402);
    expect(r.json().accepts.length).toBeGreaterThan(0);
  });

  it("checkout and claims share one budget per IP", async () => {
    const ip = nextIp();
    const a = await post("/api/checkout", ip, { sku: "zrw-pro", email: "a@example.com" });
    expect(a.statusCode).toBe(503); // no Stripe here: answered, and counted
    const b = await post("/api/claims", ip, { sku: "zrw-pro", email: "a@example.com", rail: "nope" });
    expect(b.statusCode).toBeLessThan(429);
    expect429(await post("/api/claims", ip, { sku: "zrw-pro" }), "checkout", 2);
    expect429(await post("/api/checkout", ip, { sku: "zrw-pro" }), "checkout", 2);
    const form = await t.app.inject({
      method: "POST",
      url: "/pay/claim",
      payload: "sku=zrw-pro",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      remoteAddress: ip,
    });
    expect429(form, "checkout", 2);
  });

  it("join: join-work and renew", async () => {
    const ip = nextIp();
    expect((await post("/api/join-work", ip, { name: "Ada" })).statusCode).toBe(400);
    expect((await post("/api/join-work/renew", ip, { identity_id: "x" })).statusCode).toBe(400);
    expect429(await post("/api/join-work", ip, { name: "Ada" }), "join", 2);
  });

  it("codec: every codec route counts against one budget", async () => {
    const ip = nextIp();
    expect((await post("/api/omni", ip, { op: "profile", data: "aGVsbG8=" })).statusCode).toBe(200);
    expect((await post("/api/compress", ip, { corpus: "text", n: 10 })).statusCode).toBeLessThan(429);
    for (const url of ["/api/web-codec", "/api/decompress", "/api/process", "/api/omni", "/api/compress"]) {
      expect429(await post(url, ip, {}), "codec", 2);
    }
    // Describing the engine is free.
    expect((await t.app.inject({ method: "GET", url: "/api/omni", remoteAddress: ip })).statusCode).toBe(200);
  });

  it("every listed route that this instance serves is limited", () => {
    const served = RATE_LIMITED_ROUTES.filter((r) => !r.prefix && t.app.hasRoute({ method: r.method, url: r.path }));
    expect(served.map((r) => r.path)).toEqual(
      expect.arrayContaining([
        "/api/x402-products",
        "/api/claims",
        "/api/checkout",
        "/api/join-work",
        "/api/omni",
        "/api/web-codec",
        "/api/compress",
        "/api/decompress",
        "/api/process",
      ]),
    );
  });

  it("without TRUST_PROXY, X-Forwarded-For does not give a client a fresh budget", async () => {
    const ip = nextIp();
    for (let i = 0; i < 2; i++) await post("/api/join-work", ip, {}, { "x-forwarded-for": `198.51.100.${i}` });
    expect429(await post("/api/join-work", ip, {}, { "x-forwarded-for": "198.51.100.99" }), "join", 2);
  });
});

describe("rate limits behind a trusted proxy", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp("sqlite", {
      RATE_LIMIT_ENABLED: "true",
      RATE_LIMIT_JOIN_PER_MINUTE: "1",
      TRUST_PROXY: "127.0.0.1",
    });
  });
  afterAll(async () => t.close());

  it("counts per forwarded client address", async () => {
    const from = (client: string) =>
      t.app.inject({
        method: "POST",
        url: "/api/join-work",
        payload: {},
        remoteAddress: "127.0.0.1",
        headers: { "x-forwarded-for": client },
      });
    expect((await from("198.51.100.1")).statusCode).toBe(400);
    expect((await from("198.51.100.1")).statusCode).toBe(429);
    expect((await from("198.51.100.2")).statusCode).toBe(400);
  });
});
