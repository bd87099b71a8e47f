import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MCP_TOOL_ROUTES, RATE_LIMITED_ROUTES, rateGroup } from "../../src/http/rate-limit.js";
import type { App } from "../../src/http/types.js";
import { type TestApp, testApp } from "../support/app.js";
import { httpClient, type McpClient, problemCode, TOOLS } from "./helpers.js";

/**
 * Issue #21 item 6: MCP batches cannot multiply limits. One POST /mcp with a JSON-RPC batch is
 * refused before any tool runs, and every tool call counts against the per-IP budget of the HTTP
 * route it stands for (docs/mcp.md "Limits").
 */

const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

/** A 2025-era (no per-request envelope) tools/call message. */
const call = (id: number, name: string, args: Record<string, unknown>) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args },
});

const register = (i: number) =>
  call(i, "olympiad_register", { who: "agent_self", name: `Sybil ${i}`, agent_id: `sybil-${i}-${Date.now()}` });

async function participants(app: App): Promise<number> {
  const r = await app.services.db.kysely
    .selectFrom("olympiad_participants")
    .select((eb) => eb.fn.countAll<number | string>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** The JSON-RPC answer of a POST /mcp, whether sent as JSON or as one SSE event. */
function rpcAnswer(body: string): { result?: Record<string, unknown>; error?: { code: number } } {
  const trimmed = body.trim();
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) return JSON.parse(trimmed);
  const data = trimmed
    .split("\n")
    .filter((l) => l.startsWith("data:"))
    .map((l) => l.slice(5).trim())
    .filter((l) => l.length > 0);
  return JSON.parse(data.at(-1) ?? "null");
}

describe("the tool → route table", () => {
  it("classifies every tool, by the HTTP route it stands for", () => {
    expect(Object.keys(MCP_TOOL_ROUTES).sort()).toEqual(TOOLS);
    expect(rateGroup("POST", MCP_TOOL_ROUTES.compress ?? "")).toBe("codec");
    expect(rateGroup("POST", MCP_TOOL_ROUTES.bench ?? "")).toBe("codec");
    expect(rateGroup("POST", MCP_TOOL_ROUTES.olympiad_register ?? "")).toBe(rateGroup("POST", "/api/olympiad"));
    expect(rateGroup("POST", MCP_TOOL_ROUTES.olympiad_vote ?? "")).toBe(rateGroup("POST", "/api/olympiad"));
    expect(rateGroup("POST", MCP_TOOL_ROUTES.buy ?? "")).toBe("paid");
    expect(rateGroup("POST", MCP_TOOL_ROUTES.quote_suite ?? "")).toBe("paid");
    // a suite job bought over MCP counts as POST /api/x402-suite (issue #23 item 3)
    expect(rateGroup("POST", MCP_TOOL_ROUTES.buy_suite ?? "")).toBe("paid");
    expect(MCP_TOOL_ROUTES.job_download).toBeNull();
    // Reads stand for GET routes, which are not limited.
    expect(MCP_TOOL_ROUTES.catalog).toBeNull();
    // Every named route is one of the limited ones.
    for (const route of Object.values(MCP_TOOL_ROUTES)) {
      if (route !== null) expect(RATE_LIMITED_ROUTES.some((r) => r.path === route)).toBe(true);
    }
  });
});

describe("MCP batches and per-tool limits", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp("sqlite", {
      RATE_LIMIT_ENABLED: "true",
      RATE_LIMIT_PAID_PER_MINUTE: "10",
      RATE_LIMIT_CODEC_PER_MINUTE: "3",
    });
  });
  afterAll(async () => t?.close());

  let ipSeq = 10;
  const nextIp = () => `198.51.100.${ipSeq++}`;
  const post = (payload: unknown, ip: string) =>
    t.app.inject({ method: "POST", url: "/mcp", headers: HEADERS, payload: payload as object, remoteAddress: ip });

  it("a batch of 100 registrations is refused with a JSON-RPC invalid request and creates no participant", async () => {
    const before = await participants(t.app);
    const res = await post(
      Array.from({ length: 100 }, (_, i) => register(i + 1)),
      nextIp(),
    );
    expect(res.statusCode, res.body.slice(0, 300)).toBe(400);
    expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({
      status: 400,
      code: "mcp_batch_not_supported",
      jsonrpc: "2.0",
      error: { code: -32600 },
      id: null,
    });
    expect(await participants(t.app)).toBe(before);
    // A batch of one is a batch too; so is a batch of compressions.
    expect((await post([register(1)], nextIp())).json().code).toBe("mcp_batch_not_supported");
    const codec = await post(
      Array.from({ length: 20 }, (_, i) => call(i + 1, "compress", { data: "hello hello hello" })),
      nextIp(),
    );
    expect(codec.json().code).toBe("mcp_batch_not_supported");
    expect(await participants(t.app)).toBe(before);
  });

  it("100 single registrations from one address in a minute create at most the per-minute allowance", async () => {
    const ip = nextIp();
    const before = await participants(t.app);
    const outcomes: string[] = [];
    for (let i = 0; i < 100; i++) {
      const res = await post(register(1000 + i), ip);
      if (res.statusCode === 429) {
        outcomes.push(`http:${res.json().code}`);
        continue;
      }
      const answer = rpcAnswer(res.body);
      const sc = answer.result?.structuredContent as { code?: string } | undefined;
      outcomes.push(answer.result?.isError ? `tool:${sc?.code}` : "ok");
    }
    const created = (await participants(t.app)) - before;
    expect(created).toBeGreaterThan(0);
    expect(created).toBeLessThanOrEqual(10);
    expect(outcomes.filter((o) => o === "ok").length).toBe(created);
    expect(outcomes.every((o) => o === "ok" || o.endsWith("rate_limited"))).toBe(true);
    // Another address still has its own budget.
    const other = rpcAnswer((await post(register(5000), nextIp())).body);
    expect(other.result?.isError).toBeFalsy();
  });

  it("codec tools count against the codec budget, like POST /api/omni: over it a tool error with the rate_limited problem", async () => {
    const ip = nextIp();
    // Two codec requests over HTTP, then the MCP calls share the same budget of 3.
    for (let i = 0; i < 2; i++) {
      const r = await t.app.inject({
        method: "POST",
        url: "/api/omni",
        payload: { op: "profile", data: "aGVsbG8=" },
        remoteAddress: ip,
      });
      expect(r.statusCode).toBe(200);
    }
    const first = rpcAnswer((await post(call(1, "compress", { data: "hello hello hello hello" }), ip)).body);
    expect(first.result?.isError, JSON.stringify(first)).toBeFalsy();
    const second = rpcAnswer((await post(call(2, "compress", { data: "hello hello hello hello" }), ip)).body);
    expect(second.result?.isError).toBe(true);
    expect(second.result?.structuredContent).toMatchObject({
      status: 429,
      code: "rate_limited",
      group: "codec",
      limit: 3,
      window_seconds: 60,
    });
    const limited = (second.result?.structuredContent ?? {}) as Record<string, unknown>;
    expect(Number(limited.retry_after)).toBeGreaterThan(0);
    // And the HTTP route sees the calls the tool made: over its budget too.
    const omni = await t.app.inject({
      method: "POST",
      url: "/api/omni",
      payload: { op: "profile", data: "aGVsbG8=" },
      remoteAddress: ip,
    });
    expect(omni.statusCode).toBe(429);
    // Reads are not limited beyond the transport's own budget.
    const cat = rpcAnswer((await post(call(3, "catalog", {}), ip)).body);
    expect(cat.result?.isError).toBeFalsy();
  });
});

describe.each(["v1", "v2"] as const)("per-tool limits through the %s SDK client (streamable HTTP)", (generation) => {
  let t: TestApp;
  let client: McpClient;
  beforeAll(async () => {
    t = await testApp("sqlite", { RATE_LIMIT_ENABLED: "true", RATE_LIMIT_CODEC_PER_MINUTE: "2" });
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    const address = t.app.server.address() as AddressInfo;
    client = await httpClient(generation, `http://127.0.0.1:${address.port}/mcp`);
  });
  afterAll(async () => {
    await client?.close();
    await t?.close();
  });

  it("the third codec call of the minute is a rate_limited tool error; reads still answer", async () => {
    for (let i = 0; i < 2; i++) {
      const ok = await client.call("profile", { data: "hello hello hello" });
      expect(ok.isError, JSON.stringify(ok.content)).toBeFalsy();
    }
    const over = await client.call("compress", { data: "hello hello hello" });
    expect(problemCode(over)).toBe("rate_limited");
    expect(over.structuredContent).toMatchObject({ status: 429, group: "codec", limit: 2 });
    expect((await client.call("catalog", {})).isError).toBeFalsy();
  });
});
