import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { controlFree, isZodTextIssue, multiLineText, plainText } from "../../src/http/text.js";
import { type TestApp, testApp } from "../support/app.js";
import { ENGINES } from "../support/databases.js";

/**
 * Hostile text (issue #9, item 8): a control character (NUL included) in any user string gets a
 * 400 problem `invalid_text` naming the field, on both engines. PostgreSQL refuses NUL in text
 * columns, so without the route-level rule these requests reached the database and answered 500.
 */
const ADMIN = "text-rules-admin-token-0123456789";
const ENV = {
  ADMIN_TOKEN: ADMIN,
  PAY_TO_BASE: "0x1111111111111111111111111111111111111111",
  PAY_TO_SOLANA: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
  CONTACT_EMAIL: "ops@lab.test",
};
const auth = { authorization: `Bearer ${ADMIN}` };
const SEED = "a".repeat(33);

const wire = (over: Record<string, unknown>) => ({
  sku: "zrw-pro",
  email: "w@example.com",
  rail: "wire_invoice_ach",
  company: "ACME Corp.",
  billing_address: "1 Road\nSpringfield",
  ...over,
});

interface Case {
  name: string;
  method: "GET" | "POST";
  url: string;
  payload?: Record<string, unknown>;
  headers?: Record<string, string>;
  field: string;
}

const CASES: Case[] = [
  {
    name: "claim company (NUL)",
    method: "POST",
    url: "/api/claims",
    payload: wire({ company: "AC\u0000ME" }),
    field: "company",
  },
  {
    name: "claim billing address (NUL)",
    method: "POST",
    url: "/api/claims",
    payload: wire({ billing_address: "1 Road\u0000" }),
    field: "billing_address",
  },
  {
    name: "claim billing address (ESC)",
    method: "POST",
    url: "/api/claims",
    payload: wire({ billing_address: "1 Road\u001b[2J" }),
    field: "billing_address",
  },
  {
    name: "claim email (NUL)",
    method: "POST",
    url: "/api/claims",
    payload: wire({ email: "w\u0000@example.com" }),
    field: "email",
  },
  { name: "claim sku (C1)", method: "POST", url: "/api/claims", payload: wire({ sku: "zrw\u0085pro" }), field: "sku" },
  {
    name: "claim tx (NUL)",
    method: "POST",
    url: "/api/claims",
    payload: {
      sku: "zrw-pro",
      email: "c@example.com",
      rail: "crypto_manual_evm",
      tx: `0x${"ab".repeat(31)}\u0000\u0000`,
    },
    field: "tx",
  },
  {
    name: "claim currency (tab)",
    method: "POST",
    url: "/api/claims",
    payload: wire({ currency: "us\td" }),
    field: "currency",
  },
  {
    name: "checkout email (NUL)",
    method: "POST",
    url: "/api/checkout",
    payload: { sku: "zrw-pro", email: "a\u0000@example.com" },
    field: "email",
  },
  {
    name: "join name (NUL)",
    method: "POST",
    url: "/api/join-work",
    payload: { name: "ada\u0000", intent: "I want to compress my logs.", seed: SEED },
    field: "name",
  },
  {
    name: "join intent (newline)",
    method: "POST",
    url: "/api/join-work",
    payload: { name: "ada", intent: "I want to compress\nmy logs.", seed: SEED },
    field: "intent",
  },
  {
    name: "join seed (NUL)",
    method: "POST",
    url: "/api/join-work",
    payload: { name: "ada", intent: "I want to compress my logs.", seed: `${"a".repeat(32)}\u0000` },
    field: "seed",
  },
  {
    name: "admin order search (NUL)",
    method: "GET",
    url: "/api/admin/orders?search=a%00b",
    headers: auth,
    field: "search",
  },
  {
    name: "admin claim search (NUL)",
    method: "GET",
    url: "/api/admin/claims?search=%00",
    headers: auth,
    field: "search",
  },
  { name: "admin audit actor (NUL)", method: "GET", url: "/api/admin/audit?actor=x%00", headers: auth, field: "actor" },
  {
    name: "admin approve note (NUL)",
    method: "POST",
    url: "/api/admin/claims/clm_doesnotexist0/approve",
    payload: { note: "ok\u0000" },
    headers: auth,
    field: "note",
  },
  {
    name: "admin reject reason (BEL)",
    method: "POST",
    url: "/api/admin/claims/clm_doesnotexist0/reject",
    payload: { reason: "no\u0007" },
    headers: auth,
    field: "reason",
  },
  {
    name: "order revoke reason (NUL)",
    method: "POST",
    url: "/api/admin/orders/ord_doesnotexist/revoke",
    payload: { reason: "x\u0000" },
    headers: auth,
    field: "reason",
  },
  {
    name: "admin order id in the path (NUL)",
    method: "GET",
    url: "/api/admin/orders/ord_%00x",
    headers: auth,
    field: "id",
  },
  {
    name: "order revoke id in the path (NUL)",
    method: "POST",
    url: "/api/admin/orders/ord_%00x/revoke",
    payload: {},
    headers: auth,
    field: "id",
  },
  { name: "pay page email (NUL)", method: "GET", url: "/pay?sku=zrw-pro&email=a%00%40b.c", field: "email" },
];

describe("text helpers", () => {
  it("refuse C0, DEL and C1 controls; multi-line keeps tab, LF, CR only", () => {
    for (const bad of ["\u0000", "a\u0001", "\u001f", "\u007f", "\u0080", "x\u009f", "\t", "\n", "\r"]) {
      expect(plainText(10).safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
    for (const ok of ["", "Zoë", "日本", "a b", "\u00a0", "😀"]) expect(plainText(10).safeParse(ok).success).toBe(true);
    expect(multiLineText(20).safeParse("a\r\n\tb\n").success).toBe(true);
    for (const bad of ["\u0000", "\u000b", "\u000c", "\u001b", "\u0085"]) {
      expect(multiLineText(20).safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
  });

  it("controlFree adds the rule to a string format (e.g. z.email()), reported as a text issue", () => {
    const email = controlFree(z.email().max(254)).nullish();
    expect(email.safeParse("a@example.com").success).toBe(true);
    const r = email.safeParse("a\u0000@example.com");
    expect(r.success).toBe(false);
    expect(r.error?.issues.some(isZodTextIssue)).toBe(true);
  });
});

describe.each(ENGINES)("control characters in user text on %s", (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp(engine, ENV);
  });
  afterAll(async () => t.close());

  it.each(CASES)("$name → 400 invalid_text naming the field", async (c) => {
    const r = await t.app.inject({ method: c.method, url: c.url, payload: c.payload, headers: c.headers });
    expect(r.statusCode, r.body).toBe(400);
    expect(r.headers["content-type"]).toMatch(/^application\/problem\+json/);
    const body = r.json();
    expect(body.code).toBe("invalid_text");
    expect(body.detail).toContain(c.field);
    expect(body.errors.some((e: { path: string }) => e.path.endsWith(`/${c.field}`))).toBe(true);
  });

  it("a form claim with NUL gets 400 invalid_text, not a 500", async () => {
    const r = await t.app.inject({
      method: "POST",
      url: "/pay/claim",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      payload: "sku=zrw-pro&email=w%40example.com&rail=wire_invoice_ach&company=AC%00ME&billing_address=1%20Road",
    });
    expect(r.statusCode, r.body).toBe(400);
    expect(r.json().code).toBe("invalid_text");
  });

  it("keeps legitimate text: a multi-line billing address, tabs in it, and non-ASCII names", async () => {
    const r = await t.app.inject({
      method: "POST",
      url: "/api/claims",
      payload: wire({ company: "Zoë & Søn GmbH", billing_address: "Straße 1\r\n\t10115 Berlin" }),
    });
    expect(r.statusCode, r.body).toBe(201);
    const id = r.json().claim_id;
    const view = await t.app.inject({ method: "GET", url: `/api/admin/claims/${id}`, headers: auth });
    expect(view.json()).toMatchObject({ company: "Zoë & Søn GmbH", billing_address: "Straße 1\r\n\t10115 Berlin" });
    const search = await t.app.inject({ method: "GET", url: "/api/admin/claims?search=s%C3%B8n", headers: auth });
    expect(search.statusCode).toBe(200);
    expect(search.json().total).toBe(1);
  });
});
