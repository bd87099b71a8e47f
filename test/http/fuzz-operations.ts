/**
 * The operations the HTTP fuzz covers (test/http/fuzz.test.ts) and how each one's requests are
 * generated. Operations come from the app's own OpenAPI document (GET /openapi.json) plus the
 * registered routes it does not list (built assets). Parameters and JSON bodies are generated
 * from the document's schemas; an operation whose body the document does not describe as JSON
 * (raw uploads, webhooks, MCP, forms without a schema) needs an entry in BODIES, and the test
 * fails for an operation that has neither, so a new route gets a generator when it is added.
 */
import fc from "fast-check";
import type { App } from "../../src/http/types.js";
import { fromSchema, headerValue, type Mutation, mutate, mutation, resolve, type Schema } from "./fuzz-schema.js";

export interface Operation {
  /** "METHOD /path/{param}" as in the OpenAPI document */
  key: string;
  method: string;
  /** OpenAPI path template */
  path: string;
  params: { in: string; name: string; required: boolean; schema: Schema }[];
  /** JSON body schema, when the document gives one */
  jsonBody?: Schema;
  /** the document's request content types */
  bodyTypes: string[];
  documented: boolean;
}

export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
}

interface BodyPart {
  payload?: string | Buffer;
  contentType?: string;
  headers?: Record<string, string>;
}

const METHODS = ["get", "post", "put", "patch", "delete"];

export async function listOperations(app: App): Promise<{ doc: Schema; operations: Operation[] }> {
  const res = await app.inject({ method: "GET", url: "/openapi.json" });
  if (res.statusCode !== 200) throw new Error(`GET /openapi.json → ${res.statusCode}`);
  const doc = res.json() as Schema;
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Schema>>)) {
    for (const [m, op] of Object.entries(item)) {
      if (!METHODS.includes(m)) continue;
      const content = ((op.requestBody as Schema | undefined)?.content ?? {}) as Record<string, { schema?: Schema }>;
      const params = ((op.parameters as Schema[] | undefined) ?? []).map((p) => {
        const r = resolve(p, doc);
        return {
          in: String(r.in),
          name: String(r.name),
          required: r.required === true,
          schema: (r.schema ?? {}) as Schema,
        };
      });
      operations.push({
        key: `${m.toUpperCase()} ${path}`,
        method: m.toUpperCase(),
        path,
        params,
        jsonBody: content["application/json"]?.schema,
        bodyTypes: Object.keys(content),
        documented: true,
      });
    }
  }
  // registered but not in the document (hidden: built assets)
  const known = new Set(operations.map((o) => o.key));
  for (const r of app.services.routes.routes) {
    const path = r.url.replace(/:([A-Za-z_]+)/g, "{$1}");
    const key = `${r.method} ${path}`;
    if (known.has(key)) continue;
    known.add(key);
    const params = [...path.matchAll(/\{([A-Za-z_]+)\}/g)].map((m) => ({
      in: "path",
      name: m[1]!,
      required: true,
      schema: { type: "string" },
    }));
    operations.push({ key, method: r.method, path, params, bodyTypes: [], documented: false });
  }
  return { doc, operations };
}

/** `arb` one time in n, else undefined */
const oneIn = <T>(n: number, arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> =>
  fc.oneof({ weight: n - 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });

const bytes = (max: number): fc.Arbitrary<Buffer> => fc.uint8Array({ maxLength: max }).map((b) => Buffer.from(b));
const hex = (n: number): fc.Arbitrary<string> =>
  fc.array(fc.constantFrom(..."0123456789abcdef"), { minLength: n, maxLength: n }).map((a) => a.join(""));

/** MCP messages: JSON-RPC calls of every tool with schema-generated (then mutated) arguments. */
function mcpBody(tools: { name: string; inputSchema?: Schema }[]): fc.Arbitrary<BodyPart> {
  const id = fc.oneof(fc.nat(), fc.string({ maxLength: 10 }), fc.constant(null));
  const call = fc.oneof(
    ...tools.map((t) =>
      fc
        .record({
          args: fromSchema(t.inputSchema, t.inputSchema ?? {}),
          m: mutation,
          id,
        })
        .map(({ args, m, id: i }) => ({
          jsonrpc: "2.0",
          id: i,
          method: "tools/call",
          params: { name: t.name, arguments: mutate(args, m) },
        })),
    ),
  );
  const message = fc.oneof(
    { weight: 6, arbitrary: call },
    {
      weight: 1,
      arbitrary: fc.record({
        jsonrpc: fc.constant("2.0"),
        id,
        method: fc.constant("initialize"),
        params: fc.record({
          protocolVersion: fc.constantFrom("2025-06-18", "2025-03-26", "2026-07-28", "1999-01-01", ""),
          capabilities: fc.constant({}),
          clientInfo: fc.record({ name: fc.string({ maxLength: 20 }), version: fc.string({ maxLength: 10 }) }),
        }),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        jsonrpc: fc.constantFrom("2.0", "1.0"),
        id,
        method: fc.constantFrom("tools/list", "resources/list", "resources/read", "prompts/list", "ping", "nope/x"),
        params: fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined }),
      }),
    },
    {
      weight: 1,
      arbitrary: fc
        .record({ name: fc.string(), arguments: fc.string() })
        .map((p) => ({ jsonrpc: "2.0", method: "tools/call", params: p })),
    },
  );
  return fc
    .record({
      body: fc.oneof(
        { weight: 8, arbitrary: message.map((v) => JSON.stringify(v)) },
        { weight: 1, arbitrary: fc.array(message, { maxLength: 3 }).map((v) => JSON.stringify(v)) },
        { weight: 1, arbitrary: fc.string({ maxLength: 100 }) },
      ),
      accept: fc.oneof(
        { weight: 6, arbitrary: fc.constant("application/json, text/event-stream") },
        { weight: 1, arbitrary: fc.constantFrom("application/json", "text/event-stream", "text/html", "*/*") },
      ),
      version: fc.oneof(
        { weight: 3, arbitrary: fc.constant(undefined) },
        { weight: 3, arbitrary: fc.constant("2025-06-18") },
        { weight: 1, arbitrary: fc.constantFrom("2025-03-26", "2026-07-28", "garbage") },
      ),
      session: oneIn(3, headerValue),
    })
    .map(({ body, accept, version, session }) => ({
      payload: body,
      contentType: "application/json",
      headers: {
        accept,
        ...(version ? { "mcp-protocol-version": version } : {}),
        ...(session ? { "mcp-session-id": session } : {}),
      },
    }));
}

/**
 * Bodies of the operations the document gives no JSON schema for. `none` = the operation takes
 * no body (one is still sent sometimes, as garbage).
 */
export function bodies(
  tools: { name: string; inputSchema?: Schema }[],
): Record<string, fc.Arbitrary<BodyPart> | "none"> {
  const tus = (extra: Record<string, fc.Arbitrary<string>>) =>
    fc.record({
      "tus-resumable": fc.constantFrom("1.0.0", "0.2.2", "x"),
      ...extra,
    });
  return {
    "POST /api/admin/claims/{id}/check": "none",
    "POST /api/admin/refunds/{id}/approve": "none",
    "POST /api/orders/{id}/refund-request/challenge": "none",
    "POST /api/stripe/webhook": fc
      .record({
        event: fc.record({
          id: fc.string({ maxLength: 30 }),
          type: fc.constantFrom("checkout.session.completed", "checkout.session.expired", "charge.refunded", "x"),
          data: fc.record({ object: fc.jsonValue({ maxDepth: 3 }) }),
        }),
        sig: fc.oneof(
          fc.tuple(fc.nat(), hex(64)).map(([t, v]) => `t=${t},v1=${v}`),
          headerValue,
        ),
      })
      .map(({ event, sig }) => ({
        payload: JSON.stringify(event),
        contentType: "application/json",
        headers: { "stripe-signature": sig },
      })),
    "PUT /api/jobs/{id}/input": fc
      .record({ body: bytes(4096), token: fc.option(headerValue, { nil: undefined }) })
      .map(({ body, token }) => ({
        payload: body,
        contentType: "application/octet-stream",
        headers: token ? { authorization: `Bearer ${token}` } : ({} as Record<string, string>),
      })),
    "POST /api/jobs/uploads": tus({
      "upload-length": fc.oneof(fc.nat().map(String), fc.constantFrom("-1", "1e12", "99999999999999999999", "x")),
      "upload-metadata": fc.oneof(
        fc
          .record({ job: fc.string({ maxLength: 20 }), token: fc.string({ maxLength: 40 }) })
          .map(
            ({ job, token }) =>
              `job_id ${Buffer.from(job).toString("base64")},job_token ${Buffer.from(token).toString("base64")}`,
          ),
        headerValue,
      ),
    }).map((headers) => ({ headers })),
    "PATCH /api/jobs/uploads/{upload_id}": fc
      .record({
        headers: tus({ "upload-offset": fc.oneof(fc.nat().map(String), fc.constantFrom("-1", "x")) }),
        body: bytes(2048),
      })
      .map(({ headers, body }) => ({ headers, payload: body, contentType: "application/offset+octet-stream" })),
    "POST /mcp": mcpBody(tools),
    "GET /mcp": fc
      .record({ session: headerValue })
      .map(({ session }) => ({ headers: { accept: "text/event-stream", "mcp-session-id": session } })),
    "DELETE /mcp": fc
      .record({ session: headerValue })
      .map(({ session }) => ({ headers: { "mcp-session-id": session } })),
    "POST /api/jobs/{id}/cancel": fc
      .record({
        token: fc.option(headerValue, { nil: undefined }),
        body: fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined }),
      })
      .map(({ token, body }) => ({
        payload: body === undefined ? "" : JSON.stringify(body),
        contentType: "application/json",
        headers: token ? { authorization: `Bearer ${token}` } : ({} as Record<string, string>),
      })),
  };
}

/** Operations that take a body but have no generator: must stay empty. */
export function missingGenerators(ops: Operation[], table: Record<string, unknown>): string[] {
  return ops
    .filter((o) => ["POST", "PUT", "PATCH"].includes(o.method) && !o.jsonBody && !(o.key in table))
    .map((o) => o.key)
    .concat(
      ops.filter((o) => o.bodyTypes.some((t) => t !== "application/json") && !(o.key in table)).map((o) => o.key),
    );
}

const CONTENT_TYPES = [
  "application/json; charset=utf-8",
  "text/plain",
  "application/octet-stream",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/xml",
  "garbage/??",
];
const ACCEPTS = [
  "text/html",
  "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
  "application/json",
  "application/json, text/html",
  "application/problem+json",
  "*/*",
  "image/png",
  "text/event-stream",
];
const SEGMENTS = ["..", "%00", "%", "ord_x", "x".repeat(300), "💥", "-1", "0", "null", "%2e%2e%2f", "a/b"];

function serialize(value: unknown, how: number): { payload: string; contentType?: string } {
  if (value === undefined) return { payload: "" };
  const json = JSON.stringify(value) ?? "null";
  switch (how) {
    case 0: // a form, as a browser posts it
      return {
        payload: new URLSearchParams(
          value && typeof value === "object" && !Array.isArray(value)
            ? Object.entries(value).map(([k, v]): [string, string] => [
                k,
                typeof v === "string" ? v : (JSON.stringify(v) ?? ""),
              ])
            : [["v", json]],
        ).toString(),
        contentType: "application/x-www-form-urlencoded",
      };
    case 1: // truncated JSON
      return { payload: json.slice(0, Math.max(1, Math.floor(json.length / 2))) };
    default:
      return { payload: json };
  }
}

export function requestFor(
  op: Operation,
  doc: Schema,
  table: Record<string, fc.Arbitrary<BodyPart> | "none">,
  admin: string,
): fc.Arbitrary<FuzzRequest> {
  const segment = (schema: Schema) =>
    fc.oneof(
      {
        weight: 3,
        arbitrary: fromSchema(schema, doc).map((v) => (typeof v === "string" ? v : (JSON.stringify(v) ?? ""))),
      },
      { weight: 2, arbitrary: fc.constantFrom(...SEGMENTS) },
      { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
    );
  const pathParams = op.params.filter((p) => p.in === "path");
  const queryParams = op.params.filter((p) => p.in === "query");
  const headerParams = op.params.filter((p) => p.in === "header");
  const path = fc.tuple(...pathParams.map((p) => segment(p.schema))).map((vals) => {
    let i = 0;
    return op.path.replace(/\{[A-Za-z_]+\}/g, () => encodeURIComponent(vals[i++] ?? ""));
  });
  const queryValue = (schema: Schema) =>
    fc.oneof(
      { weight: 4, arbitrary: fromSchema(schema, doc) },
      { weight: 1, arbitrary: fc.constantFrom("x".repeat(5000), "\u0000\r\n", "-1", "1e400", "[]", "true") },
      { weight: 1, arbitrary: fc.array(fromSchema(schema, doc), { minLength: 2, maxLength: 3 }) },
    );
  const query = fc
    .tuple(
      fc.tuple(...queryParams.map((p) => oneIn(2, queryValue(p.schema)))),
      oneIn(4, fc.dictionary(fc.string({ maxLength: 10 }), fc.string({ maxLength: 30 }), { maxKeys: 3 })),
    )
    .map(([vals, extra]) => {
      const q = new URLSearchParams();
      vals.forEach((v, i) => {
        if (v === undefined) return;
        const name = queryParams[i]!.name;
        for (const x of Array.isArray(v) ? v : [v])
          q.append(name, typeof x === "string" ? x : (JSON.stringify(x) ?? ""));
      });
      for (const [k, v] of Object.entries(extra ?? {})) q.append(k, v);
      const s = q.toString();
      return s ? `?${s}` : "";
    });
  const special = table[op.key];
  const body: fc.Arbitrary<BodyPart> =
    special && special !== "none"
      ? special
      : op.jsonBody && special !== "none"
        ? fc
            // pages (/pay, /pay/claim) take forms: half of their bodies are url-encoded
            .record({
              value: fromSchema(op.jsonBody, doc),
              m: mutation,
              how: fc.nat({ max: op.path.startsWith("/api/") ? 9 : 3 }),
            })
            .map(({ value, m, how }) => serialize(mutate(value, m), how))
        : fc.oneof(
            { weight: 6, arbitrary: fc.constant({}) },
            { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => ({ payload: JSON.stringify(v) })) },
            { weight: 1, arbitrary: bytes(300).map((b) => ({ payload: b })) },
          );
  return fc
    .record({
      path,
      query,
      body,
      otherMethod: oneIn(12, fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS")),
      contentType: oneIn(5, fc.constantFrom(...CONTENT_TYPES)),
      accept: oneIn(2, fc.constantFrom(...ACCEPTS)),
      auth: oneIn(
        2,
        fc.oneof(
          fc.constantFrom(`Bearer ${admin}`, "Bearer ", "Basic abc", "", `Bearer ${"A".repeat(5000)}`),
          headerValue.map((v) => `Bearer ${v}`),
        ),
      ),
      paymentSignature: oneIn(3, headerValue),
      xPayment: oneIn(4, headerValue),
      idempotencyKey: oneIn(3, headerValue),
      identity: oneIn(5, headerValue),
      headerParams: fc.tuple(...headerParams.map(() => fc.option(headerValue, { nil: undefined }))),
    })
    .map((r) => {
      const method = r.otherMethod ?? op.method;
      const headers: Record<string, string> = {};
      const contentType =
        r.contentType ?? r.body.contentType ?? (r.body.payload !== undefined ? "application/json" : undefined);
      if (contentType) headers["content-type"] = contentType;
      if (r.accept) headers.accept = r.accept;
      if (r.auth !== undefined) headers.authorization = r.auth;
      if (r.paymentSignature !== undefined) headers["payment-signature"] = r.paymentSignature;
      if (r.xPayment !== undefined) headers["x-payment"] = r.xPayment;
      if (r.idempotencyKey !== undefined) headers["idempotency-key"] = r.idempotencyKey;
      if (r.identity !== undefined) headers["x-identity-token"] = r.identity;
      r.headerParams.forEach((v, i) => {
        if (v !== undefined) headers[headerParams[i]!.name.toLowerCase()] = v;
      });
      Object.assign(headers, r.body.headers ?? {});
      const withBody = r.body.payload !== undefined && method !== "GET" && method !== "HEAD";
      return { method, url: r.path + r.query, headers, ...(withBody ? { payload: r.body.payload } : {}) };
    });
}

export type { Mutation };
