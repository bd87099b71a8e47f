import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestApp, testApp } from "../support/app.js";

const ADMIN = "a".repeat(32);

function expectProblem(
  res: { statusCode: number; headers: Record<string, unknown>; json(): unknown },
  status: number,
  code: string,
) {
  expect(res.statusCode).toBe(status);
  expect(String(res.headers["content-type"])).toMatch(/^application\/problem\+json/);
  expect(res.json()).toMatchObject({
    status,
    code,
    title: expect.any(String),
    detail: expect.any(String),
    type: expect.stringContaining(code),
  });
}

describe("problem+json errors", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp("sqlite", { BODY_LIMIT_BYTES: "2048", ADMIN_TOKEN: ADMIN });
  });
  afterAll(() => t.close());

  const revoke = (payload: string, contentType = "application/json") =>
    t.app.inject({
      method: "POST",
      url: "/api/admin/orders/ord_x/revoke",
      headers: { authorization: `Bearer ${ADMIN}`, "content-type": contentType },
      payload,
    });

  it("unknown path → 404 not_found", async () => {
    expectProblem(await t.app.inject("/nope"), 404, "not_found");
  });

  it("wrong method → 405 with Allow", async () => {
    const res = await t.app.inject({ method: "PUT", url: "/readyz" });
    expectProblem(res, 405, "method_not_allowed");
    expect(res.headers.allow).toBe("GET, HEAD");
    const res2 = await t.app.inject({ method: "GET", url: "/api/admin/orders/abc/revoke" });
    expectProblem(res2, 405, "method_not_allowed");
    expect(res2.headers.allow).toBe("POST");
  });

  it("malformed JSON → 400 malformed_json", async () => {
    expectProblem(await revoke("{not json"), 400, "malformed_json");
  });

  it("wrong types → 400 validation_failed naming the field", async () => {
    const res = await revoke(JSON.stringify({ reason: 42 }));
    expectProblem(res, 400, "validation_failed");
    expect(res.json().errors[0].path).toBe("/reason");
  });

  it("bad query → 400 validation_failed", async () => {
    expectProblem(await t.app.inject(`/api/x402-products?sku=${"x".repeat(200)}`), 400, "validation_failed");
  });

  it("body over the limit → 413 body_too_large", async () => {
    expectProblem(await revoke(JSON.stringify({ reason: "x".repeat(5000) })), 413, "body_too_large");
  });

  it("unsupported media type → 415", async () => {
    expectProblem(await revoke("reason=x", "application/x-www-form-urlencoded"), 415, "unsupported_media_type");
  });

  it("empty JSON body → 400", async () => {
    expectProblem(await revoke(""), 400, "empty_json_body");
  });

  it("admin routes need the token (401) and say so in WWW-Authenticate", async () => {
    const res = await t.app.inject({
      method: "POST",
      url: "/api/admin/orders/x/revoke",
      headers: { authorization: "Bearer wrong" },
    });
    expectProblem(res, 401, "admin_unauthorized");
    expect(res.headers["www-authenticate"]).toMatch(/^Bearer/);
    expectProblem(await t.app.inject({ method: "POST", url: "/api/admin/orders/x/revoke" }), 401, "admin_unauthorized");
  });

  it("unknown order for a valid operator → 404 order_not_found", async () => {
    expectProblem(await revoke("{}"), 404, "order_not_found");
  });
});

describe("admin routes without ADMIN_TOKEN", () => {
  it("are disabled (503 admin_disabled) even with a bearer", async () => {
    const t = await testApp("sqlite");
    try {
      const res = await t.app.inject({
        method: "POST",
        url: "/api/admin/orders/x/revoke",
        headers: { authorization: "Bearer whatever-whatever" },
      });
      expectProblem(res, 503, "admin_disabled");
    } finally {
      await t.close();
    }
  });
});
