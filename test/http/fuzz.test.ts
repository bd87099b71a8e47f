import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { wantsHtml } from "../../src/web/html.js";
import { testApp } from "../support/app.js";
import { fuzzRuns } from "../support/fuzz.js";
import { BASE_SETTLEMENT, SOLANA_SETTLEMENT } from "../support/rails.js";
import { bodies, type FuzzRequest, listOperations, missingGenerators, requestFor } from "./fuzz-operations.js";
import { addWords, type Schema } from "./fuzz-schema.js";

/**
 * Property: whatever a client sends to any operation of the OpenAPI document (and to the routes
 * it does not list), with bodies generated from the operation's schema and then mutated (wrong
 * types, huge strings, control characters, deep nesting, hostile keys, wrong content types),
 * bogus Authorization, PAYMENT-SIGNATURE / X-PAYMENT, Idempotency-Key and identity headers,
 * Accept variants and random query strings:
 *
 * - the answer is never a 5xx, except a 503 whose problem code says a rail, feature or capacity is
 *   not available here (`…_not_configured`, `…_unavailable`, `…_disabled`; docs/errors.md);
 * - every 4xx is application/problem+json with a string `code`, or an HTML page when the client
 *   prefers text/html, or the x402 challenge (a 402 with PAYMENT-REQUIRED and `{ x402Version,
 *   accepts }`, which x402 clients parse);
 * - every request is answered within REQUEST_TIMEOUT_MS;
 * - the heap after the run (after a GC) is within HEAP_BOUND_MB of the heap before it.
 *
 * Runs: FUZZ_RUNS requests in total (test/support/fuzz.ts; default 1500, ≈ 15 per operation, at
 * least 3 each), spread evenly over the operations. A long session:
 * `FUZZ_RUNS=5000 npx vitest run test/http/fuzz.test.ts` (or `FUZZ_RUNS=10x`).
 */
const DESIGNED_503 = /(_not_configured|_unavailable|_disabled)$/;
const REQUEST_TIMEOUT_MS = 10_000;
const HEAP_BOUND_MB = 64;
const ADMIN = "f".repeat(32);

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
function heapUsedMb(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

const t = await testApp("sqlite", {
  ADMIN_TOKEN: ADMIN,
  PAY_TO_BASE: "0x2222222222222222222222222222222222222222",
  ...BASE_SETTLEMENT,
  PAY_TO_SOLANA: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
  ...SOLANA_SETTLEMENT,
  CONTACT_EMAIL: "ops@lab.test",
  BODY_LIMIT_BYTES: "65536",
});
const { doc, operations } = await listOperations(t.app);
addWords(await catalogWords());
const tools = await mcpTools();
const table = bodies(tools);
const perOperation = Math.max(3, Math.ceil(fuzzRuns(1500) / operations.length));
/** status codes seen per operation */
const seen = new Map<string, Map<number, number>>();

/** The skus and aliases of this instance's catalog, so that generated bodies name real products. */
async function catalogWords(): Promise<string[]> {
  const res = await t.app.inject({ method: "GET", url: "/api/x402-products" });
  const words: string[] = [];
  const walk = (v: unknown, key: string): void => {
    if (typeof v === "string" && (key === "sku" || key === "aliases")) words.push(v);
    else if (Array.isArray(v)) for (const x of v) walk(x, key);
    else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) walk(x, k);
  };
  walk(res.json(), "");
  if (words.length === 0) throw new Error(`no skus in GET /api/x402-products: ${res.body.slice(0, 200)}`);
  return words;
}

/** The MCP tools and their input schemas, from the server itself (tools/list). */
async function mcpTools(): Promise<{ name: string; inputSchema?: Schema }[]> {
  const res = await t.app.inject({
    method: "POST",
    url: "/mcp",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    payload: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });
  const text = String(res.headers["content-type"] ?? "").startsWith("text/event-stream")
    ? res.body
        .split("\n")
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5))
        .join("")
    : res.body;
  const list = (JSON.parse(text) as { result?: { tools?: { name: string; inputSchema?: Schema }[] } }).result?.tools;
  if (!list?.length) throw new Error(`tools/list gave no tools: ${res.statusCode} ${res.body.slice(0, 300)}`);
  return list;
}

async function send(r: FuzzRequest) {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)), REQUEST_TIMEOUT_MS);
  });
  try {
    return await Promise.race([t.app.inject(r), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function problemCode(body: string, html: boolean): string | undefined {
  // an error page (src/web/problem-page.ts), or a form page re-rendered with its inline error
  // (src/web/pages/pay-product.ts: "Error 503 · code <code>…</code>")
  if (html) return (/id="problem-code">([^<]*)</.exec(body) ?? /Error \d{3} · code <code>([^<]*)</.exec(body))?.[1];
  try {
    const code = (JSON.parse(body) as { code?: unknown }).code;
    return typeof code === "string" ? code : undefined;
  } catch {
    return undefined;
  }
}

function check(r: FuzzRequest, res: Awaited<ReturnType<typeof send>>): void {
  const info = `${r.method} ${r.url.slice(0, 300)} [${JSON.stringify(r.headers).slice(0, 400)}] → ${res.statusCode} ${res.body.slice(0, 400)}`;
  const type = String(res.headers["content-type"] ?? "");
  const html = type.startsWith("text/html") && wantsHtml(r.headers.accept);
  if (res.statusCode >= 500) {
    expect(res.statusCode, info).toBe(503);
    expect(problemCode(res.body, html) ?? "", info).toMatch(DESIGNED_503);
  }
  if (res.statusCode < 400 || r.method === "HEAD") return;
  if (html) {
    expect(res.body.slice(0, 20).toLowerCase(), info).toMatch(/^<!doctype html>/);
  } else if (
    res.statusCode === 402 &&
    res.headers["payment-required"] !== undefined &&
    type.startsWith("application/json")
  ) {
    const challenge = res.json() as { x402Version?: unknown; accepts?: unknown };
    expect(typeof challenge.x402Version, info).toBe("number");
    expect(Array.isArray(challenge.accepts), info).toBe(true);
  } else {
    expect(type, info).toMatch(/^application\/problem\+json/);
    expect(problemCode(res.body, false), info).toEqual(expect.any(String));
  }
}

describe("HTTP fuzz over every operation of the OpenAPI document", () => {
  let heapBefore = 0;
  beforeAll(() => {
    heapBefore = heapUsedMb();
  });
  afterAll(() => t.close());

  it("has a request generator for every operation", () => {
    expect(operations.filter((o) => o.documented).length).toBeGreaterThan(50);
    expect(
      missingGenerators(operations, table),
      "add the operation's body to bodies() in test/http/fuzz-operations.ts",
    ).toEqual([]);
    const unused = Object.keys(table).filter((k) => !operations.some((o) => o.key === k));
    expect(unused, "a generator for an operation that no longer exists").toEqual([]);
  });

  it("includes the olympiad, suite-job, MCP and page operations", () => {
    const keys = operations.map((o) => o.key);
    for (const k of [
      "POST /api/olympiad",
      "GET /api/olympiad/proposals/{id}",
      "POST /api/x402-suite",
      "GET /api/jobs/{id}",
      "PUT /api/jobs/{id}/input",
      "POST /api/jobs/uploads",
      "POST /mcp",
      "GET /pay",
      "POST /pay",
      "POST /pay/claim",
      "GET /web",
      "GET /jobs",
      "GET /olympiad",
      "GET /standings",
      "GET /access/{token}",
    ])
      expect(keys).toContain(k);
  });

  for (const op of operations) {
    it(`${op.key}${op.documented ? "" : " (not in the document)"}`, { timeout: 120_000 }, async () => {
      const statuses = new Map<number, number>();
      seen.set(op.key, statuses);
      await fc.assert(
        fc.asyncProperty(requestFor(op, doc, table, ADMIN), async (r) => {
          const res = await send(r);
          statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
          check(r, res);
        }),
        {
          numRuns: perOperation,
          // Keep the report readable: the generated bodies can be 70 kB.
          reporter: (out) => {
            if (!out.failed) return;
            const example = JSON.stringify(out.counterexample).slice(0, 1500);
            throw new Error(
              `${String(out.errorInstance).slice(0, 2000)}\ncounterexample: ${example}\nreplay: { seed: ${out.seed}, path: "${out.counterexamplePath}" }`,
            );
          },
        },
      );
    });
  }

  it("covered every operation, within the heap bound", () => {
    const lines = operations.map((o) => {
      const s = seen.get(o.key);
      const dist = s
        ? [...s]
            .sort((a, b) => a[0] - b[0])
            .map(([code, n]) => `${code}×${n}`)
            .join(" ")
        : "not run";
      return `${o.key.padEnd(48)} ${dist}`;
    });
    console.log(`HTTP fuzz: ${operations.length} operations, ${perOperation} requests each\n${lines.join("\n")}`);
    expect(operations.filter((o) => !seen.has(o.key)).map((o) => o.key)).toEqual([]);
    const growth = heapUsedMb() - heapBefore;
    console.log(`heap: ${heapBefore.toFixed(1)} MiB before, ${(heapBefore + growth).toFixed(1)} MiB after`);
    expect(growth, `heap grew by ${growth.toFixed(1)} MiB`).toBeLessThan(HEAP_BOUND_MB);
  });
});
