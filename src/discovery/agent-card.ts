import { VERSIONS } from "../versions.js";
import { abs, type DiscoveryContext, link } from "./context.js";
import { SERVICE_NAME, SUMMARY } from "./documents.js";
import { MCP_TOOLS, mcpEndpoint } from "./mcp-card.js";

/**
 * The A2A agent card (/.well-known/agent-card.json, A2A v0.3 field names). Lab Phi is not an A2A
 * JSON-RPC agent: its interfaces are the HTTP+JSON API (OpenAPI) and MCP. The card lets A2A
 * indexers find it: `url` is the base URL of the HTTP+JSON API, every MCP tool is a skill, and
 * x402 is stated as the payment scheme of the paid skills.
 */

export const AGENT_CARD_PATH = "/.well-known/agent-card.json";
export const A2A_PROTOCOL_VERSION = "0.3.0";

/** Example requests per tool (what an agent might ask for). */
const EXAMPLES: Record<string, string[]> = {
  catalog: ["What does Lab Phi sell and at what price?"],
  payments: ["How can I pay for zrw-pro?"],
  quote_suite: ["Quote compressing 150 GB of sensor data."],
  buy: ['Buy the olympiad entry: POST /api/x402-products { "sku": "gao-entry" } and pay the 402 with x402.'],
  compress: ["Compress these int32 little-endian bytes losslessly."],
  decompress: ["Decompress this Lab Phi container."],
  profile: ["Which codec route fits this data?"],
  bench: ["Benchmark the codec on a 10,000-value random walk."],
  olympiad_register: ["Register me for the Great Agentic Olympiad with my entry order."],
  olympiad_vote: ["Vote yes on proposal 3."],
  olympiad_submit: ["Submit my predictions.csv to the olympiad event craft-compression-ratio."],
  job_status: ["Is suite job j_123 finished?"],
  buy_suite: ["Compress my 2 GB log archive as a suite job (free under the cap, else pay with x402)."],
  job_upload: ["Where do I upload the input of suite job j_123?"],
  job_cancel: ["Cancel suite job j_123."],
  job_download: ["Give me the download link of suite job j_123 and its SHA-256."],
};

export function agentCard(ctx: DiscoveryContext) {
  const mcp = mcpEndpoint(ctx);
  const networks = ctx.x402.rails.map((r) => r.network);
  return {
    protocolVersion: A2A_PROTOCOL_VERSION,
    name: SERVICE_NAME,
    description: SUMMARY,
    url: ctx.baseUrl,
    preferredTransport: "HTTP+JSON",
    version: VERSIONS.discovery,
    provider: { organization: SERVICE_NAME, url: ctx.baseUrl },
    documentationUrl: link(ctx, "/llms.txt") ?? link(ctx, "/api/agent") ?? ctx.baseUrl,
    capabilities: {
      streaming: false,
      pushNotifications: false,
      stateTransitionHistory: false,
      extensions: [
        {
          uri: "https://github.com/coinbase/x402",
          description: `Paid skills answer HTTP 402 (or an MCP tool error) with x402 v2 payment requirements: USDC on ${networks.join(" and ")}, scheme exact.`,
          required: false,
        },
        {
          uri: "https://paymentauth.org",
          description: `The same paid HTTP routes also answer 402 with MPP challenges (WWW-Authenticate: Payment, intent charge; methods evm on Base and solana, USDC): retry with Authorization: Payment <credential> (Payment-Authorization where Authorization carries a bearer token); the answer carries Payment-Receipt.`,
          required: false,
        },
      ],
    },
    securitySchemes: {
      x402Payment: {
        type: "apiKey" as const,
        in: "header" as const,
        name: "X-PAYMENT",
        description:
          "x402 payment proof (PAYMENT-SIGNATURE is accepted too). Only the paid operations need it; the first unpaid call answers 402 with the requirements.",
      },
    },
    defaultInputModes: ["application/json"],
    defaultOutputModes: ["application/json", "text/markdown"],
    skills: MCP_TOOLS.map((t) => ({
      id: t.name,
      name: t.name.replace(/_/g, " "),
      description: t.paid ? `${t.description} Paid with x402.` : t.description,
      tags: [t.paid ? "paid" : "free", ...tagsOf(t.name)],
      examples: EXAMPLES[t.name] ?? [],
      inputModes: ["application/json"],
      outputModes: ["application/json"],
      ...(t.paid ? { security: [{ x402Payment: [] as string[] }] } : {}),
    })),
    additionalInterfaces: [
      ...(ctx.hasRoute("GET", "/openapi.json") ? [{ url: abs(ctx, "/openapi.json"), transport: "HTTP+JSON" }] : []),
      ...(mcp ? [{ url: mcp, transport: "MCP" }] : []),
    ],
  };
}

function tagsOf(name: string): string[] {
  if (name === "buy" || name === "catalog" || name === "payments") return ["commerce", "x402"];
  if (name === "quote_suite" || name === "buy_suite" || name.startsWith("job_")) return ["suite", "compression"];
  if (name.startsWith("olympiad")) return ["olympiad"];
  return ["codec", "compression"];
}

export type AgentCard = ReturnType<typeof agentCard>;
