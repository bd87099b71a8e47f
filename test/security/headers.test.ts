import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestApp, testApp } from "../support/app.js";

/**
 * Security headers on every answer (SECURITY.md, "Security headers"): the parts that
 * test/web/headers.test.ts (pages and assets) does not look at — framing, referrer, HSTS by
 * scheme, and CORS without credentials.
 */

const directives = (csp: string) =>
  new Map(
    csp
      .split(";")
      .map((d) => d.trim().split(/\s+/))
      .filter((d) => d[0])
      .map(([name, ...values]) => [name as string, values]),
  );

describe.each([
  ["http", "http://lab.test"],
  ["https", "https://lab.example"],
])("security headers with an %s BASE_URL", (scheme, baseUrl) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp("sqlite", { BASE_URL: baseUrl });
  });
  afterAll(async () => t?.close());

  it("a page, an API answer and a problem all carry the CSP, nosniff, no framing and the referrer policy", async () => {
    const answers = [
      await t.app.inject({ method: "GET", url: "/", headers: { accept: "text/html" } }),
      await t.app.inject({ method: "GET", url: "/api/x402-products" }),
      await t.app.inject({ method: "GET", url: "/access/not-a-token-at-all-0000" }),
    ];
    for (const r of answers) {
      const csp = directives(String(r.headers["content-security-policy"]));
      expect(csp.get("frame-ancestors")).toEqual(["'none'"]);
      expect(csp.get("script-src")).toEqual(["'self'"]);
      expect(csp.get("style-src")).toEqual(["'self'"]);
      expect(csp.get("object-src")).toEqual(["'none'"]);
      expect(String(r.headers["content-security-policy"])).not.toMatch(/unsafe-inline|unsafe-eval/);
      expect(r.headers["x-content-type-options"]).toBe("nosniff");
      expect(r.headers["referrer-policy"]).toBe("strict-origin-when-cross-origin");
      if (scheme === "https") {
        expect(r.headers["strict-transport-security"]).toMatch(/max-age=31536000/);
        expect(csp.has("upgrade-insecure-requests")).toBe(true);
      } else {
        expect(r.headers["strict-transport-security"]).toBeUndefined();
        expect(csp.has("upgrade-insecure-requests")).toBe(false);
      }
    }
  });

  it("CORS: any origin may read, never with credentials; a preflight is answered without credentials", async () => {
    const r = await t.app.inject({
      method: "GET",
      url: "/.well-known/agent-card.json",
      headers: { origin: "https://agent.example", cookie: "a=b" },
    });
    expect(r.statusCode).toBe(200);
    expect(r.headers["access-control-allow-origin"]).toBe("*");
    expect(r.headers["access-control-allow-credentials"]).toBeUndefined();
    const pre = await t.app.inject({
      method: "OPTIONS",
      url: "/api/x402-products",
      headers: {
        origin: "https://agent.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type, payment-signature",
      },
    });
    expect(pre.statusCode).toBeLessThan(300);
    expect(pre.headers["access-control-allow-origin"]).toBe("*");
    expect(pre.headers["access-control-allow-credentials"]).toBeUndefined();
    expect(String(pre.headers["access-control-allow-headers"]).toLowerCase()).toContain("payment-signature");
  });
});
