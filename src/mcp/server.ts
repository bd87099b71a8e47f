import { McpServer, type McpServerFactory } from "@modelcontextprotocol/server";
import { MCP_SERVER_NAME, MCP_TOOLS } from "../discovery/mcp-card.js";
import { VERSIONS } from "../versions.js";
import type { McpDeps } from "./deps.js";
import { registerResources } from "./resources.js";
import { registerBuyTool } from "./tools/buy.js";
import { registerCodecTools } from "./tools/codec.js";
import { registerOlympiadTools } from "./tools/olympiad.js";
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
  "compress/decompress/profile/bench are free within the HTTP input limits; larger data: `quote_suite`, then POST /api/x402-suite.";

export function createMcpServer(deps: McpDeps): McpServer {
  const server = new McpServer(
    { name: MCP_SERVER_NAME, title: "Lab Phi", version: VERSIONS.api },
    { capabilities: { tools: {}, resources: {} }, instructions: INSTRUCTIONS },
  );
  registerStoreTools(server, deps);
  registerBuyTool(server, deps);
  registerCodecTools(server, deps);
  registerOlympiadTools(server, deps);
  registerResources(server, deps);
  return server;
}

export function mcpFactory(deps: McpDeps): McpServerFactory {
  return () => createMcpServer(deps);
}
