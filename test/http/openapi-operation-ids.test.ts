import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CAMEL_CASE, deriveOperationId, OPERATION_IDS, operationKey } from "../../src/http/operation-ids.js";
import { type TestApp, testApp } from "../support/app.js";
import { BASE_SETTLEMENT } from "../support/rails.js";

type Operation = { operationId?: string };
type OpenApi = { paths: Record<string, Record<string, Operation>> };

const HTTP_METHODS = new Set(["get", "put", "post", "delete", "options", "head", "patch", "trace"]);

/** Every operation of the document as `METHOD /path` → its operation object. */
function operations(doc: OpenApi): Map<string, Operation> {
  const out = new Map<string, Operation>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (HTTP_METHODS.has(method)) out.set(`${method.toUpperCase()} ${path}`, op);
    }
  }
  return out;
}

describe("OpenAPI operationId (issue #25 item 4)", () => {
  let t: TestApp;
  let doc: OpenApi;
  let ops: Map<string, Operation>;

  beforeAll(async () => {
    // The configuration that serves every route (both paid operations included).
    t = await testApp("sqlite", { PAY_TO_BASE: "0x1111111111111111111111111111111111111111", ...BASE_SETTLEMENT });
    const res = await t.app.inject({ method: "GET", url: "/openapi.json" });
    expect(res.statusCode).toBe(200);
    doc = res.json() as OpenApi;
    ops = operations(doc);
  });
  afterAll(async () => {
    await t.close();
  });

  it("every operation has an operationId, all unique and camelCase", () => {
    expect(ops.size).toBeGreaterThan(90);
    const seen = new Map<string, string>();
    for (const [key, op] of ops) {
      expect(op.operationId, key).toEqual(expect.any(String));
      const id = op.operationId as string;
      expect(id, key).toMatch(CAMEL_CASE);
      expect(seen.get(id), `${key} reuses ${id}`).toBeUndefined();
      seen.set(id, key);
    }
  });

  it("every id is the explicit one from src/http/operation-ids.ts (no route falls back to a derived id)", () => {
    const missing = [...ops.keys()].filter((key) => OPERATION_IDS[key] === undefined);
    expect(missing, "add these to OPERATION_IDS in src/http/operation-ids.ts").toEqual([]);
    for (const [key, op] of ops) expect(op.operationId, key).toBe(OPERATION_IDS[key]);
  });

  it("the table names no operation the app does not serve, and its ids are unique and camelCase", () => {
    const stale = Object.keys(OPERATION_IDS).filter((key) => !ops.has(key));
    expect(stale, "remove (or fix the path of) these entries").toEqual([]);
    const ids = Object.values(OPERATION_IDS);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(CAMEL_CASE);
  });

  it("the ids clients already use stay what they are", () => {
    const byKey = (key: string) => ops.get(key)?.operationId;
    expect(byKey("POST /api/x402-suite")).toBe("createX402Suite");
    expect(byKey("POST /api/x402-products")).toBe("buyProductX402");
    expect(byKey("GET /api/x402-products")).toBe("listProducts");
    expect(byKey("GET /api/jobs/{id}")).toBe("getJob");
    expect(byKey("POST /api/ppp-quote")).toBe("createSuiteQuote");
    expect(byKey("POST /api/omni")).toBe("runEngine");
    expect(byKey("GET /api/payments")).toBe("getPaymentsMatrix");
    expect(byKey("GET /openapi.yaml")).toBe("getOpenApiYaml");
  });

  it("a route serving several methods gets one id per method (MCP: GET, POST, DELETE)", () => {
    expect([
      ops.get("GET /mcp")?.operationId,
      ops.get("POST /mcp")?.operationId,
      ops.get("DELETE /mcp")?.operationId,
    ]).toEqual(["getMcp", "postMcp", "deleteMcp"]);
  });

  it("/platform.json names each route's operationId, the same as the OpenAPI document", async () => {
    const res = await t.app.inject({ method: "GET", url: "/platform.json" });
    const routes = (
      res.json() as { modules: { routes: { method: string; path: string; operation_id?: string }[] }[] }
    ).modules.flatMap((m) => m.routes);
    expect(routes.length).toBe(ops.size);
    for (const r of routes) {
      const key = operationKey(r.method, r.path);
      expect(r.operation_id, key).toBe(ops.get(key)?.operationId);
    }
  });

  it("the YAML twin carries the same ids", async () => {
    const res = await t.app.inject({ method: "GET", url: "/openapi.yaml" });
    for (const op of ops.values()) expect(res.body).toContain(`operationId: ${op.operationId}`);
  });

  it("keys and the fallback: Fastify parameters are written the OpenAPI way; a derived id is camelCase", () => {
    expect(operationKey("get", "/api/jobs/:id/output")).toBe("GET /api/jobs/{id}/output");
    expect(deriveOperationId("PATCH", "/api/jobs/uploads/{upload_id}")).toBe("patchApiJobsUploadsUploadId");
    expect(deriveOperationId("GET", "/.well-known/x402")).toBe("getWellKnownX402");
    expect(deriveOperationId("GET", "/")).toBe("get");
    for (const key of Object.keys(OPERATION_IDS)) {
      const [method = "", path = ""] = key.split(" ");
      expect(deriveOperationId(method, path)).toMatch(CAMEL_CASE);
    }
  });
});
