import { createHash, randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestApp, testApp } from "../support/app.js";
import { grantProduct } from "../support/orders.js";

/**
 * Access-token guessing (SECURITY.md, threat model): an access URL is
 * `<base>/access/HMAC(secret, order id)`; only SHA-256 of the token is stored, and `open` looks the
 * order up by that hash (no comparison of secrets in JavaScript).
 */

const tokenOf = (url: string) => new URL(url).pathname.split("/access/")[1] as string;
const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

/** Changes the character at `i` to another base64url character. */
function flip(token: string, i: number): string {
  const c = token[i] === "A" ? "B" : "A";
  return token.slice(0, i) + c + token.slice(i + 1);
}

describe("access tokens", () => {
  let t: TestApp;
  const granted: { id: string; token: string }[] = [];

  beforeAll(async () => {
    t = await testApp("sqlite");
    for (let i = 0; i < 2; i++) {
      const g = await grantProduct(t.app.services.orders, {
        proofKey: `test:security:access:${i}`,
        sku: "zrw-pro",
        rail: "test_rail",
        amountCents: 24900,
        email: `buyer${i}@example.org`,
      });
      granted.push({ id: g.order.id, token: tokenOf(g.accessUrl) });
    }
  });
  afterAll(async () => t?.close());

  const open = (token: string) => t.app.inject({ method: "GET", url: `/access/${token}` });

  /** The answer minus the requested path (`instance`), to compare answer shapes. */
  const shape = (body: string) => {
    const { instance: _instance, ...rest } = JSON.parse(body) as Record<string, unknown>;
    return rest;
  };

  it("the real token opens its order (the fixture works)", async () => {
    const r = await open(granted[0]?.token as string);
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json().order.order_id).toBe(granted[0]?.id);
  });

  it("a well-formed random token gets 404 with no order data, the same answer as a malformed unknown token", async () => {
    const unknown = await open("not-a-token-at-all-0000");
    expect(unknown.statusCode).toBe(404);
    for (let i = 0; i < 5; i++) {
      const random = randomBytes(32).toString("base64url"); // the form of a real token: 43 characters
      expect(random).toHaveLength(granted[0]?.token.length as number);
      const r = await open(random);
      expect(r.statusCode).toBe(404);
      expect(r.headers["content-type"]).toBe(unknown.headers["content-type"]);
      expect(shape(r.body)).toEqual(shape(unknown.body));
      expect(r.json()).toMatchObject({ code: "access_not_found" });
      for (const g of granted) expect(r.body).not.toContain(g.id);
      expect(r.body).not.toMatch(/order|license|email/i);
    }
  });

  it("another order's token with one character changed (first, middle, last) gets 404", async () => {
    const token = granted[1]?.token as string;
    for (const i of [0, Math.floor(token.length / 2), token.length - 1]) {
      const r = await open(flip(token, i));
      expect(r.statusCode, `position ${i}`).toBe(404);
      expect(r.json()).toMatchObject({ code: "access_not_found" });
      expect(r.body).not.toContain(granted[1]?.id);
    }
    // and one order's token never opens another's
    const first = await open(granted[0]?.token as string);
    expect(first.json().order.order_id).toBe(granted[0]?.id);
  });

  it("stores only SHA-256 of the token: the database row never holds the token", async () => {
    for (const g of granted) {
      const row = await t.app.services.db.kysely
        .selectFrom("orders")
        .selectAll()
        .where("id", "=", g.id)
        .executeTakeFirstOrThrow();
      expect(row.access_token_hash).toBe(sha256(g.token));
      expect(JSON.stringify(row)).not.toContain(g.token);
    }
  });

  it("a token that was valid stops opening anything once its order is revoked (410, then no data beyond the id)", async () => {
    const g = granted[1] as { id: string; token: string };
    await t.app.services.orders.revoke(g.id, "admin:test", "security test");
    const r = await open(g.token);
    expect(r.statusCode).toBe(410);
    expect(r.json()).toMatchObject({ code: "access_revoked", order_id: g.id });
    expect(r.body).not.toMatch(/license_key|email/);
  });
});
