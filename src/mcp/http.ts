import { AsyncLocalStorage } from "node:async_hooks";
import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import { toWebRequest } from "@modelcontextprotocol/node";
import { createMcpHandler, validateHostHeader, validateOriginHeader } from "@modelcontextprotocol/server";
import { MCP_PATH } from "../discovery/mcp-card.js";
import { Problem } from "../http/problem.js";
import type { App } from "../http/types.js";
import type { McpCaller, McpDeps } from "./deps.js";
import { mcpFactory } from "./server.js";

/**
 * `/mcp`: the MCP server over streamable HTTP, stateless (a fresh server instance per request,
 * from the same factory as `labphi mcp`), for 2025-era and 2026-07-28 clients.
 *
 * DNS-rebinding guard, with the SDK's own validators (`validateHostHeader`, `validateOriginHeader`,
 * the checks behind its Fastify hooks): the Host header, and a browser's Origin when sent, must name
 * BASE_URL's host or a loopback form (any port); anything else is a 403 problem before MCP sees
 * the request. Like every route here, a refused request answers application/problem+json with a
 * stable code; the SDK's JSON-RPC error (`jsonrpc`, `error`, `id`) rides along in the same body.
 *
 * Limits (issue #21 item 6, docs/mcp.md "Limits"): a JSON-RPC batch (a JSON array body) is refused
 * (400 `mcp_batch_not_supported`, JSON-RPC -32600 invalid request) before any message in it is
 * read: MCP since 2025-06-18 has no batches, and one POST must not carry many calls past the
 * per-request limit. Each tool call then counts against the per-IP group of the route it stands
 * for: the client address reaches the per-request server through the factory (`McpCaller`).
 */

export { MCP_PATH } from "../discovery/mcp-card.js";

/** BASE_URL's hostname plus the loopback forms (hostnames only, IPv6 in brackets: the SDK's format). */
export function allowedHostnames(baseUrl: string): string[] {
  const host = new URL(baseUrl).hostname.toLowerCase();
  return [...new Set([host, "localhost", "127.0.0.1", "[::1]"])];
}

/** Problem codes for the transport's own refusals (by HTTP status). */
const TRANSPORT_CODES: Record<number, string> = {
  400: "mcp_bad_request",
  404: "mcp_session_not_found",
  405: "method_not_allowed",
  406: "mcp_not_acceptable",
  413: "body_too_large",
  415: "unsupported_media_type",
};

/** JSON-RPC 2.0 "Invalid Request". */
export const JSONRPC_INVALID_REQUEST = -32600;

export function mcpRoutes(app: App, deps: McpDeps): void {
  // The caller of the request being served, read by the factory the SDK calls inside `fetch`.
  const callers = new AsyncLocalStorage<McpCaller>();
  const handler = createMcpHandler(
    mcpFactory(deps, () => callers.getStore()),
    { onerror: (err) => deps.onError?.(err) },
  );
  const hosts = allowedHostnames(deps.config.baseUrl);
  app.addHook("onClose", async () => handler.close());

  app.register(async (scope) => {
    scope.addHook("onRequest", async (request) => {
      const host = validateHostHeader(request.headers.host, hosts);
      if (!host.ok) {
        throw new Problem(
          403,
          "mcp_host_not_allowed",
          `This Host is not served at /mcp (DNS-rebinding guard): ${host.message}. Use ${deps.config.baseUrl}${MCP_PATH} or a loopback address.`,
        );
      }
      const origin = request.headers.origin;
      if (origin !== undefined) {
        const checked = validateOriginHeader(origin, hosts);
        if (!checked.ok) {
          throw new Problem(
            403,
            "mcp_origin_not_allowed",
            `Browser pages from this Origin may not call /mcp (DNS-rebinding guard): ${checked.message}.`,
          );
        }
      }
    });
    scope.route({
      method: ["POST", "GET", "DELETE"],
      url: MCP_PATH,
      schema: {
        summary: "MCP server (streamable HTTP, stateless): tools, resources, paid tools over the x402 MCP transport",
        description:
          "JSON-RPC over streamable HTTP for MCP clients (2025-era and 2026-07-28). Tools: catalog, payments, quote_suite, buy and buy_suite (x402 MCP transport), compress, decompress, profile, bench, olympiad_register, olympiad_vote, job_status, job_upload, job_cancel, job_download. Host (and Origin, when sent) must be BASE_URL's host or loopback: 403 otherwise. GET and DELETE: 405 (stateless). One JSON-RPC message per POST: a batch (JSON array) is refused whole, 400 mcp_batch_not_supported (JSON-RPC -32600). Each tool call counts against the per-IP limit of the HTTP route it stands for (a rate_limited tool error over it). See docs/mcp.md.",
        tags: ["mcp"],
      },
      handler: async (request, reply) => {
        if (request.method === "POST" && Array.isArray(request.body)) throw batchRefused();
        // Cancel the exchange when the client goes away before the answer is written.
        const abort = new AbortController();
        reply.raw.on("close", () => {
          if (!reply.raw.writableFinished) abort.abort();
        });
        const web = await toWebRequest(request.raw, request.method === "POST" ? request.body : undefined, {
          signal: abort.signal,
        });
        const res = await callers.run({ ip: request.ip }, () => handler.fetch(web));
        if (res.status >= 400) throw await transportProblem(res);
        reply.code(res.status);
        res.headers.forEach((value, key) => {
          reply.header(key, value);
        });
        if (!res.body) return reply.send();
        return reply.send(Readable.fromWeb(res.body as unknown as NodeReadableStream));
      },
    });
  });
}

/** A JSON-RPC batch: refused whole, nothing in it runs. */
function batchRefused(): Problem {
  const message =
    "JSON-RPC batches are not supported: send one JSON-RPC message per POST (MCP has no batches since 2025-06-18).";
  return new Problem(400, "mcp_batch_not_supported", message, {
    jsonrpc: "2.0",
    error: { code: JSONRPC_INVALID_REQUEST, message },
    id: null,
  });
}

/** The transport's refusal (a JSON-RPC error answer) as a problem that still carries the JSON-RPC error. */
async function transportProblem(res: Response): Promise<Problem> {
  const text = await res.text();
  let rpc: { jsonrpc?: unknown; error?: { code?: unknown; message?: unknown }; id?: unknown } | undefined;
  try {
    rpc = JSON.parse(text);
  } catch {
    rpc = undefined;
  }
  const message = typeof rpc?.error?.message === "string" ? rpc.error.message : text.slice(0, 300);
  const status = Math.min(res.status, 500);
  const code = status === 500 ? "internal_error" : (TRANSPORT_CODES[status] ?? "mcp_request_rejected");
  const headers: Record<string, string> = {};
  const allow = res.headers.get("allow");
  if (allow) headers.Allow = allow;
  return new Problem(
    status,
    code,
    `MCP transport: ${message || "request refused"}`,
    rpc && typeof rpc === "object" && rpc.error ? { jsonrpc: "2.0", error: rpc.error, id: rpc.id ?? null } : {},
    headers,
  );
}
