import { VERSIONS } from "../versions.js";
import { abs, type DiscoveryContext } from "./context.js";

/**
 * The MCP server's public face: the one list of its tools and resources (names, one-line
 * descriptions, whether a call costs money), and the server card served at
 * /.well-known/mcp.json and /.well-known/mcp/server-card.json. The MCP server (src/mcp) and
 * every discovery document read the names here, so they cannot drift apart.
 */

export const MCP_PATH = "/mcp";
export const MCP_STDIO_COMMAND = "labphi mcp";
export const MCP_SERVER_NAME = "labphi";
export const MCP_CARD_PATHS = ["/.well-known/mcp.json", "/.well-known/mcp/server-card.json"] as const;

export interface McpToolInfo {
  name: string;
  description: string;
  /** A call may answer with x402 payment requirements (x402 MCP transport, `_meta["x402/payment"]`). */
  paid: boolean;
}

export const MCP_TOOLS: readonly McpToolInfo[] = [
  { name: "catalog", description: "List the products, prices (cents and USDC atomic units) and aliases.", paid: false },
  {
    name: "payments",
    description: "The payments matrix: every rail, whether it is configured, how to pay.",
    paid: false,
  },
  {
    name: "quote_suite",
    description: "Price a metered compression suite job (free up to the cap, then per GB).",
    paid: false,
  },
  {
    name: "buy",
    description: "Buy one SKU with x402: unpaid → payment requirements; retry with _meta x402/payment → the order.",
    paid: true,
  },
  {
    name: "compress",
    description: "Compress bytes (base64) with the lossless codec; returns the container.",
    paid: false,
  },
  { name: "decompress", description: "Decompress a codec container (base64) back to the original bytes.", paid: false },
  { name: "profile", description: "Profile data: its class and the codec route the router would pick.", paid: false },
  { name: "bench", description: "Benchmark the codec on a small input or generated corpus.", paid: false },
  {
    name: "olympiad_register",
    description: "Register as an olympiad participant (needs a paid entry order).",
    paid: false,
  },
  { name: "olympiad_vote", description: "Vote on an olympiad governance proposal as a participant.", paid: false },
  {
    name: "olympiad_submit",
    description: "Submit a prediction file (CSV or JSON lines) to a scored olympiad event as an entered participant.",
    paid: false,
  },
  { name: "job_status", description: "Read a suite job's state with its job token.", paid: false },
  {
    name: "buy_suite",
    description: "Buy a suite job: free under the cap, else x402 requirements; retry with x402/payment → the job.",
    paid: true,
  },
  { name: "job_upload", description: "Where to PUT (or tus-upload) a suite job's input over HTTP.", paid: false },
  { name: "job_cancel", description: "Cancel a suite job with its job token.", paid: false },
  { name: "job_download", description: "A done job's download URL, header, size and SHA-256.", paid: false },
];

export const MCP_RESOURCES: readonly { uri: string; name: string; description: string; mimeType: string }[] = [
  {
    uri: "labphi://catalog",
    name: "catalog",
    description: "The product catalog with prices.",
    mimeType: "application/json",
  },
  {
    uri: "labphi://olympiad/record",
    name: "olympiad record",
    description: "The olympiad's public record.",
    mimeType: "application/json",
  },
  {
    uri: "labphi://olympiad/standings",
    name: "standings",
    description: "The public standings with proof.",
    mimeType: "application/json",
  },
];

/** The streamable-HTTP endpoint when this deployment serves it, else null. */
export function mcpEndpoint(ctx: DiscoveryContext): string | null {
  return ctx.hasRoute("POST", MCP_PATH) ? abs(ctx, MCP_PATH) : null;
}

/** Facts about the MCP server listed by /api/agent, /agents.json and /llms.txt. */
export function mcpFacts(ctx: DiscoveryContext) {
  return {
    endpoint: mcpEndpoint(ctx),
    transport: "streamable-http" as const,
    stdio: MCP_STDIO_COMMAND,
    server_card: ctx.hasRoute("GET", MCP_CARD_PATHS[0]) ? abs(ctx, MCP_CARD_PATHS[0]) : null,
    payments:
      'x402 MCP transport: a paid tool answers a tool error carrying the payment requirements; retry with _meta["x402/payment"]; the result carries _meta["x402/payment-response"].',
    tools: MCP_TOOLS.map((t) => ({ name: t.name, description: t.description, paid: t.paid })),
  };
}

/** The MCP server card (served at both proposed well-known paths). */
export function mcpServerCard(ctx: DiscoveryContext) {
  const endpoint = mcpEndpoint(ctx);
  return {
    $schema: "https://static.modelcontextprotocol.io/schemas/mcp-server-card/v1.json",
    version: "1.0",
    protocolVersion: "2025-06-18",
    serverInfo: {
      name: MCP_SERVER_NAME,
      title: "Lab Phi",
      /** What the server reports in its initialize answer (src/mcp/server.ts). */
      version: VERSIONS.api,
    },
    name: MCP_SERVER_NAME,
    description:
      "Lab Phi for agents: the catalog and payments matrix, x402-paid purchases (USDC on Base and Solana), the lossless codec (compress, decompress, profile, bench), metered suite quotes and jobs, and the olympiad.",
    websiteUrl: ctx.baseUrl,
    documentationUrl: ctx.hasRoute("GET", "/llms.txt") ? abs(ctx, "/llms.txt") : null,
    transport: endpoint ? { type: "streamable-http" as const, url: endpoint } : null,
    remotes: endpoint ? [{ type: "streamable-http" as const, url: endpoint }] : [],
    /** The package is not on a registry: run it from a checkout (`npm link` puts `labphi` on PATH). */
    stdio: { command: "labphi", args: ["mcp"] },
    capabilities: { tools: { listChanged: false }, resources: { listChanged: false } },
    authentication: { required: false, schemes: [] as string[] },
    payments: {
      protocol: "x402",
      x402Version: 2,
      transport: "mcp",
      request_meta: "x402/payment",
      response_meta: "x402/payment-response",
      networks: ctx.x402.rails.map((r) => r.network),
      paid_tools: MCP_TOOLS.filter((t) => t.paid).map((t) => t.name),
    },
    tools: MCP_TOOLS.map((t) => ({ name: t.name, description: t.description, paid: t.paid })),
    resources: MCP_RESOURCES.map((r) => ({ ...r })),
  };
}

export type McpServerCard = ReturnType<typeof mcpServerCard>;
