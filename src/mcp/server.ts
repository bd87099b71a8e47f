import { type CallToolResult, McpServer, type McpServerFactory } from "@modelcontextprotocol/server";
import { MCP_PATH, MCP_SERVER_NAME, MCP_TOOLS } from "../discovery/mcp-card.js";
import { rateGroup, toolGroup } from "../http/rate-limit.js";
import { VERSIONS } from "../versions.js";
import type { McpCaller, McpDeps } from "./deps.js";
import { inBinding } from "./payment.js";
import { registerResources } from "./resources.js";
import { problemResult } from "./results.js";
import { registerBuyTool } from "./tools/buy.js";
import { registerCodecTools } from "./tools/codec.js";
import { registerJobTools } from "./tools/jobs.js";
import { registerOlympiadTools } from "./tools/olympiad.js";
import { registerOlympiadSubmitTool } from "./tools/olympiad-submit.js";
import { registerStoreTools } from "./tools/store.js";

/**
 * The Lab Phi MCP server, built from the services (src/services.ts) with no HTTP in between. One
 * factory serves stdio (`labphi mcp`) and streamable HTTP (`/mcp`), for both protocol eras (2025
 * clients such as @modelcontextprotocol/sdk 1.x, and 2026-07-28 clients).
 */

/** The server's name and tools: one list (src/discovery/mcp-card.ts), also published in the cards. */
export { MCP_SERVER_NAME } from "../discovery/mcp-card.js";
export const TOOL_NAMES = MCP_TOOLS.map((t) => t.name);

export const INSTRUCTIONS =
  "Lab Phi sells licences, services and olympiad entries to agents for USDC over x402, and runs a lossless codec. " +
  'Start with `catalog`; `buy` follows the x402 MCP transport (pay the PaymentRequired it answers, then call again with _meta["x402/payment"]). ' +
  "compress/decompress/profile/bench are free within the HTTP input limits; larger data is a suite job: `quote_suite`, `buy_suite` (free under the cap, else paid like `buy`), then `job_upload` (PUT the bytes over HTTP with the job token), `job_status`, `job_download` (GET them), `job_cancel`.";

/**
 * Each tool call from `caller` counts against the per-IP group of the HTTP route the tool stands
 * for (`MCP_TOOL_ROUTES`, docs/mcp.md "Limits"), in the same counters as that route, before the
 * tool's body runs; over the budget the call is a tool error carrying the `rate_limited` problem.
 * A group the `/mcp` POST itself already counted in (`paid`: one POST carries one message, batches
 * are refused) is not counted twice. No caller (stdio) or no limiter (limits off): nothing counted.
 */
function limitToolCalls(server: McpServer, deps: McpDeps, caller: McpCaller | undefined): void {
  const limiter = deps.rateLimiter;
  if (!limiter || !caller) return;
  const transportGroup = rateGroup("POST", MCP_PATH);
  const register = server.registerTool.bind(server);
  const limited = (name: string, config: unknown, cb: (...args: unknown[]) => unknown) => {
    const group = toolGroup(name);
    if (!group || group === transportGroup) return register(name, config as never, cb as never);
    return register(
      name,
      config as never,
      (async (...args: unknown[]) => {
        const refused = await limiter.take(caller.ip, group);
        if (refused) return problemResult(refused);
        return cb(...args);
      }) as never,
    );
  };
  server.registerTool = limited as unknown as typeof server.registerTool;
}

/**
 * Every tool answer goes out in the payment binding the request asked for (src/mcp/payment.ts
 * `inBinding`): a payment-required result becomes the `org.x402/payment` extension's
 * `resultType: "payment_required"` for a 2026-07-28 client that advertises it; anything else is
 * unchanged. One wrapper, so `buy` and `buy_suite` cannot differ.
 */
function bindPayments(server: McpServer): void {
  const register = server.registerTool.bind(server);
  const bound = (name: string, config: unknown, cb: (...args: unknown[]) => unknown) =>
    register(
      name,
      config as never,
      (async (...args: unknown[]) => {
        const result = (await cb(...args)) as CallToolResult;
        const ctx = args.at(-1) as { mcpReq?: { envelope?: unknown } } | undefined;
        return inBinding(result, ctx?.mcpReq?.envelope);
      }) as never,
    );
  server.registerTool = bound as unknown as typeof server.registerTool;
}

export function createMcpServer(deps: McpDeps, caller?: McpCaller): McpServer {
  const server = new McpServer(
    { name: MCP_SERVER_NAME, title: "Lab Phi", version: VERSIONS.api },
    { capabilities: { tools: {}, resources: {} }, instructions: INSTRUCTIONS },
  );
  bindPayments(server);
  limitToolCalls(server, deps, caller);
  registerStoreTools(server, deps, caller);
  registerBuyTool(server, deps);
  registerJobTools(server, deps, caller);
  registerCodecTools(server, deps);
  registerOlympiadTools(server, deps, caller);
  registerOlympiadSubmitTool(server, deps);
  registerResources(server, deps);
  return server;
}

/** The per-request factory; `callerOf` names the client of the request being served (HTTP only). */
export function mcpFactory(deps: McpDeps, callerOf: () => McpCaller | undefined = () => undefined): McpServerFactory {
  return () => createMcpServer(deps, callerOf());
}
