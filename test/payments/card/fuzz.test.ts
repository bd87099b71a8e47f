import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CardHarness, cardHarness } from "../../support/stripe/harness.js";

/**
 * Property: with the card and manual rails configured (Stripe stand-in), random bodies,
 * signatures and content types sent to the human-payment routes never produce a 5xx and
 * never an order; every refusal is a problem+json with a code.
 */
describe("human-payment routes under generated bad input", () => {
  let h: CardHarness;
  beforeAll(async () => {
    h = await cardHarness("sqlite", {
      PAY_TO_BASE: "0x4444444444444444444444444444444444444444",
      PAY_TO_SOLANA: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
      CONTACT_EMAIL: "ops@lab.test", // manual rails need a contact address (and ADMIN_TOKEN, set by the harness)
    });
  });
  afterAll(async () => h.close());

  it("never answers 5xx and never grants", async () => {
    const routes = [
      { method: "POST", url: "/api/stripe/webhook" },
      { method: "POST", url: "/api/checkout" },
      { method: "POST", url: "/api/claims" },
      { method: "POST", url: "/pay" },
      { method: "POST", url: "/pay/claim" },
      { method: "GET", url: "/api/checkout/" },
      { method: "GET", url: "/pay/success?session_id=" },
      { method: "GET", url: "/api/licenses/" },
    ] as const;
    const field = fc.oneof(
      fc.string({ maxLength: 60 }),
      fc.constantFrom("zrw-pro", "chip", "a@b.co", "cs_test_x", "stripe"),
    );
    const body = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
      fc
        .record({
          sku: field,
          email: field,
          rail: field,
          tx: field,
          company: field,
          billing_address: field,
          currency: field,
        })
        .map((v) => JSON.stringify(v)),
      fc.string({ maxLength: 300 }),
      fc.dictionary(fc.constantFrom("sku", "email", "rail", "tx"), field).map((v) => new URLSearchParams(v).toString()),
    );
    const signature = fc.oneof(
      fc.constant(undefined),
      fc.string({ maxLength: 120 }),
      fc.integer({ min: 0, max: 2_000_000_000 }).map((t) => `t=${t},v1=${"0".repeat(64)}`),
    );
    const contentType = fc.constantFrom(
      "application/json",
      "application/json; charset=utf-8",
      "application/x-www-form-urlencoded",
      "text/plain",
      undefined,
    );
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: routes.length - 1 }),
        body,
        signature,
        contentType,
        field,
        async (i, payload, sig, ct, suffix) => {
          const route = routes[i]!;
          const headers: Record<string, string> = {};
          if (ct) headers["content-type"] = ct;
          if (sig !== undefined) headers["stripe-signature"] = sig;
          const url = route.method === "GET" ? `${route.url}${encodeURIComponent(suffix)}` : route.url;
          const res = await h.app.inject({
            method: route.method,
            url,
            headers,
            ...(route.method === "POST" ? { payload } : {}),
          });
          const info = `${route.method} ${url} → ${res.statusCode} ${res.body.slice(0, 200)}`;
          expect(res.statusCode, info).toBeLessThan(500);
          if (res.statusCode >= 400) {
            expect(res.headers["content-type"], info).toMatch(/^application\/problem\+json/);
            expect(typeof res.json().code, info).toBe("string");
          }
        },
      ),
      { numRuns: 300 },
    );
    expect(await h.countOrders()).toBe(0);
    const events = await h.app.services.db.kysely.selectFrom("webhook_events").selectAll().execute();
    expect(events).toHaveLength(0);
  });
});
