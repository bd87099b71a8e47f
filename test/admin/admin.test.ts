import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testApp } from "../support/app.js";
import { ENGINES } from "../support/databases.js";
import { grantProduct } from "../support/orders.js";
import { ADMIN_TOKEN, type CardHarness, cardHarness } from "../support/stripe/harness.js";

describe("admin authentication", () => {
  it("disables every admin route when ADMIN_TOKEN is unset (503) and refuses a missing or wrong token (401)", async () => {
    const off = await testApp("sqlite");
    const on = await testApp("sqlite", { ADMIN_TOKEN });
    try {
      const adminRoutes = on.app.services.routes.routes.filter((r) => r.url.startsWith("/api/admin/"));
      const urls = adminRoutes.map((r) => ({
        method: r.method as "GET" | "POST",
        url: r.url.replace(/:(\w+)/g, "x_$1"),
      }));
      const required = [
        "GET /api/admin/orders",
        "GET /api/admin/claims",
        "POST /api/admin/claims/:id/approve",
        "POST /api/admin/claims/:id/reject",
        "POST /api/admin/orders/:id/revoke",
        "POST /api/admin/orders/:id/refunded",
        "GET /api/admin/webhook-events",
        "GET /api/admin/audit",
      ];
      const present = adminRoutes.map((r) => `${r.method} ${r.url}`);
      for (const route of required) expect(present).toContain(route);
      for (const { method, url } of urls) {
        const disabled = await off.app.inject({ method, url, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
        expect(disabled.statusCode, `${method} ${url}`).toBe(503);
        expect(disabled.json().code).toBe("admin_disabled");
        const missing = await on.app.inject({ method, url });
        expect(missing.statusCode, `${method} ${url}`).toBe(401);
        expect(missing.json().code).toBe("admin_unauthorized");
        expect(missing.headers["www-authenticate"]).toContain("Bearer");
        const wrong = await on.app.inject({ method, url, headers: { authorization: `Bearer ${ADMIN_TOKEN}x` } });
        expect(wrong.statusCode).toBe(401);
        const basic = await on.app.inject({ method, url, headers: { authorization: `Basic ${ADMIN_TOKEN}` } });
        expect(basic.statusCode).toBe(401);
      }
    } finally {
      await off.close();
      await on.close();
    }
  });
});

describe.each(ENGINES)("admin API on %s", (engine) => {
  let h: CardHarness;
  const ids: string[] = [];
  beforeAll(async () => {
    h = await cardHarness(engine, { CONTACT_EMAIL: "ops@lab.test" }); // wire claims need a contact address
    for (let i = 0; i < 7; i++) {
      const { order } = await grantProduct(h.app.services.orders, {
        proofKey: `test:admin:${i}`,
        sku: i % 2 === 0 ? "zrw-pro" : "sponsor",
        rail: "test_rail",
        amountCents: i % 2 === 0 ? 24900 : 2900,
        email: i < 3 ? `Alice${i}@Example.com` : `bob${i}@example.org`,
      });
      ids.push(order.id);
    }
  });
  afterAll(async () => h.close());

  it("lists orders with search, filters and pagination", async () => {
    const all = await h.admin("GET", "/api/admin/orders?limit=200");
    expect(all.status).toBe(200);
    expect(all.body.total).toBe(7);
    const search = await h.admin("GET", "/api/admin/orders?search=alice");
    expect(search.body.total).toBe(3);
    const items = search.body.items as { email: string; access_url: string }[];
    expect(items.every((o) => o.email.toLowerCase().includes("alice"))).toBe(true);
    expect(items[0]?.access_url).toMatch(/^http:\/\/lab\.test\/access\//);
    const p1 = await h.admin("GET", "/api/admin/orders?limit=3&offset=0");
    const p2 = await h.admin("GET", "/api/admin/orders?limit=3&offset=3");
    const p3 = await h.admin("GET", "/api/admin/orders?limit=3&offset=6");
    const seen = [p1, p2, p3].flatMap((p) => (p.body.items as { order_id: string }[]).map((o) => o.order_id));
    expect(seen).toHaveLength(7);
    expect(new Set(seen)).toEqual(new Set(ids));
    expect(p1.body).toMatchObject({ total: 7, limit: 3, offset: 0 });
    const bySku = await h.admin("GET", "/api/admin/orders?sku=sponsor");
    expect(bySku.body.total).toBe(3);
    const bad = await h.admin("GET", "/api/admin/orders?limit=0");
    expect(bad.status).toBe(400);
    const one = await h.admin("GET", `/api/admin/orders/${ids[0]}`);
    expect(one.body.order_id).toBe(ids[0]);
    expect((await h.admin("GET", "/api/admin/orders/ord_nope")).status).toBe(404);
  });

  it("revokes and marks refunded; the licence answers revoked / refunded; both are audited", async () => {
    const [a, , b] = ids;
    const revoked = await h.admin("POST", `/api/admin/orders/${a}/revoke`, { reason: "abuse" });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ status: "revoked", revoke_reason: "abuse" });
    const refunded = await h.admin("POST", `/api/admin/orders/${b}/refunded`, { reason: "refunded by bank transfer" });
    expect(refunded.body).toMatchObject({ status: "refunded" });
    const keyA = revoked.body.license_key as string;
    const keyB = refunded.body.license_key as string;
    expect((await h.app.inject({ method: "GET", url: `/api/licenses/${keyA}` })).json()).toMatchObject({
      valid: false,
      code: "revoked",
    });
    expect((await h.app.inject({ method: "GET", url: `/api/licenses/${keyB.toLowerCase()}` })).json()).toMatchObject({
      valid: false,
      code: "refunded",
    });
    const filtered = await h.admin("GET", "/api/admin/orders?status=refunded");
    expect(filtered.body.total).toBe(1);
    const audit = await h.admin("GET", `/api/admin/audit?subject=${b}`);
    const entries = audit.body.items as {
      actor: string;
      action: string;
      at: string;
      detail: Record<string, unknown>;
    }[];
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ action: "order.refunded", detail: { reason: "refunded by bank transfer" } });
    expect(entries[0]?.actor).toMatch(/^admin:[0-9a-f]{12}:tester$/);
    expect(Date.parse(entries[0]?.at ?? "")).not.toBeNaN();
    const search = await h.admin("GET", "/api/admin/audit?search=abuse");
    expect((search.body.items as { subject: string }[]).map((e) => e.subject)).toEqual([a]);
  });

  it("keeps the audit log append-only in the database itself", async () => {
    const db = h.app.services.db.kysely;
    const before = await db.selectFrom("audit_log").selectAll().execute();
    expect(before.length).toBeGreaterThan(0);
    await expect(db.updateTable("audit_log").set({ actor: "someone-else" }).execute()).rejects.toThrow(/append-only/);
    await expect(db.deleteFrom("audit_log").execute()).rejects.toThrow(/append-only/);
    expect(await db.selectFrom("audit_log").selectAll().execute()).toEqual(before);
  });

  it("validates licence keys with stable codes", async () => {
    const ok = await h.admin("GET", `/api/admin/orders/${ids[4]}`);
    const lic = await h.app.inject({ method: "GET", url: `/api/licenses/${ok.body.license_key}` });
    expect(lic.json()).toMatchObject({ valid: true, code: "valid", sku: "zrw-pro" });
    expect(
      (await h.app.inject({ method: "GET", url: "/api/licenses/ZRWPRO-AAAAA-AAAAA-AAAAA-AAAAA" })).json().code,
    ).toBe("license_not_found");
    const bad = await h.app.inject({ method: "GET", url: "/api/licenses/hello" });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe("invalid_license_key");
  });

  it("lists webhook events with their outcome, searchable by object id", async () => {
    const r = await h.checkout("zrw-n00b", "events@example.com");
    const sessionId = r.body.session_id as string;
    h.stripe.pay(sessionId);
    const evt = h.stripe.sessionEvent("checkout.session.completed", sessionId);
    await h.deliver(evt);
    await h.deliver(evt);
    const list = await h.admin("GET", `/api/admin/webhook-events?search=${sessionId}`);
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(1);
    expect(list.body.items).toEqual([
      expect.objectContaining({
        id: evt.id,
        type: "checkout.session.completed",
        object_id: sessionId,
        outcome: "granted",
      }),
    ]);
    const orders = await h.admin("GET", "/api/admin/orders?search=events@example.com");
    expect(orders.body.items).toEqual([expect.objectContaining({ rail: "card_checkout", sku: "zrw-n00b" })]);
  });

  it("lists claims with search and state filters", async () => {
    const claims = await h.admin("GET", "/api/admin/claims?state=submitted&search=nobody");
    expect(claims.body).toMatchObject({ total: 0, items: [] });
    const wire = await h.app.inject({
      method: "POST",
      url: "/api/claims",
      payload: {
        sku: "consulting",
        email: "ap@acme.example",
        rail: "wire_invoice_ach",
        company: "ACME",
        billing_address: "1 Road",
      },
    });
    expect(wire.statusCode).toBe(201);
    const found = await h.admin("GET", "/api/admin/claims?search=acme&rail=wire_invoice_ach");
    expect(found.body.total).toBe(1);
    expect(found.body.items).toEqual([
      expect.objectContaining({ company: "ACME", terms: "net-15", state: "submitted" }),
    ]);
  });
});
