import { createHash } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import { stringify } from "yaml";
import { z } from "zod";
import type { Catalog } from "../catalog/service.js";
import type { Config } from "../config.js";
import type { RouteTable } from "../http/route-table.js";
import type { App } from "../http/types.js";
import { routeTableLookup } from "../payments/matrix/routes.js";
import { AGENT_CARD_PATH, agentCard } from "./agent-card.js";
import { API_CATALOG_PATH, API_CATALOG_TYPE, apiCatalogDocument } from "./api-catalog.js";
import { buildContext, type DiscoveryContext } from "./context.js";
import { agentDocument, agentsJsonDocument, platformDocument, welcomeDocument } from "./documents.js";
import { ideasDocument } from "./ideas.js";
import { jsonToMarkdown, wantsMarkdown, wellKnownX402Markdown } from "./markdown.js";
import { MCP_CARD_PATHS, mcpServerCard } from "./mcp-card.js";
import { enrichOpenApi } from "./openapi.js";
import { PRICING_PATH, pricingMarkdown } from "./pricing-md.js";
import {
  agentSchema,
  agentsJsonSchema,
  apiCatalogSchema,
  ideasSchema,
  platformSchema,
  toysSchema,
  welcomeSchema,
} from "./schemas.js";
import { agentsTxt, llmsFullTxt, llmsTxt } from "./text.js";
import { toysDocument } from "./toys.js";

/** How long clients and proxies may reuse a discovery document (seconds). */
export const DISCOVERY_MAX_AGE = 300;

function etagOf(payload: string): string {
  return `"${createHash("sha256").update(payload).digest("base64url").slice(0, 32)}"`;
}

function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch
    .split(",")
    .map((t) => t.trim().replace(/^W\//, ""))
    .some((t) => t === etag || t === "*");
}

/**
 * The JSON documents that answer `Accept: text/markdown` with Markdown (path → title). The
 * discovery documents, the catalog, the payments matrix and /.well-known/x402; not the OpenAPI
 * description (it has YAML), the linkset, nor the olympiad's documents (their module's own).
 */
export const MARKDOWN_DOCUMENTS: Record<string, string> = {
  "/api/agent": "Agent discovery",
  "/api/welcome": "Welcome",
  "/platform.json": "Platform map",
  "/agents.json": "agents.json",
  "/toys.json": "Toy store",
  "/ideas.json": "Idea lab",
  "/api/x402-products": "Product catalog",
  "/api/payments": "Payments matrix",
  "/.well-known/x402": "x402 resources",
  [AGENT_CARD_PATH]: "A2A agent card",
  [MCP_CARD_PATHS[0]]: "MCP server card",
  [MCP_CARD_PATHS[1]]: "MCP server card",
};

/** RFC 8631 `Link` relations to the other descriptions, for the served ones. */
export function linkHeader(ctx: DiscoveryContext): string {
  const rels: [string, string][] = [
    ["service-desc", "/openapi.yaml"],
    ["service-doc", "/api/agent"],
    ["describedby", "/platform.json"],
    ["api-catalog", API_CATALOG_PATH],
  ];
  return rels
    .filter(([, path]) => ctx.hasRoute("GET", path))
    .map(([rel, path]) => `<${ctx.baseUrl}${path}>; rel="${rel}"`)
    .join(", ");
}

/** onSend hook: Cache-Control, a strong ETag of the exact bytes, and 304 for a matching If-None-Match. */
async function cacheable(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
  if (reply.statusCode !== 200 || typeof payload !== "string") return payload;
  const etag = etagOf(payload);
  reply.header("ETag", etag);
  reply.header("Cache-Control", `public, max-age=${DISCOVERY_MAX_AGE}`);
  if (matches(request.headers["if-none-match"], etag)) {
    reply.code(304);
    reply.removeHeader("content-type");
    reply.removeHeader("content-length");
    return "";
  }
  return payload;
}

const text = (description: string, type: string) => ({
  description,
  content: { [type]: { schema: z.string() } },
});

const openApiObjectSchema = z
  .object({ openapi: z.string(), info: z.object({ title: z.string(), version: z.string() }).catchall(z.unknown()) })
  .catchall(z.unknown())
  .describe("OpenAPI 3.1 document");

/**
 * The discovery documents. Each is built on first request (the app is ready by then, so the
 * route table is complete) and kept: every input (config, catalog, routes) is fixed for the
 * life of the process.
 */
export function discoveryRoutes(app: App, deps: { config: Config; catalog: Catalog; routes: RouteTable }) {
  const hasRoute = routeTableLookup(deps.routes);
  let ctx: DiscoveryContext | undefined;
  const context = (): DiscoveryContext => {
    ctx ??= buildContext({ config: deps.config, catalog: deps.catalog, routes: () => deps.routes.public(), hasRoute });
    return ctx;
  };
  const memo = <T>(build: (c: DiscoveryContext) => T): (() => T) => {
    let value: T | undefined;
    return () => {
      value ??= build(context());
      return value;
    };
  };

  const links = memo(linkHeader);
  const withLinks = async (_request: FastifyRequest, reply: FastifyReply) => {
    const value = links();
    if (value) reply.header("Link", value);
  };
  const welcome = memo(welcomeDocument);
  const agent = memo(agentDocument);
  const platform = memo(platformDocument);
  const agentsJson = memo(agentsJsonDocument);
  const toys = memo(toysDocument);
  const ideas = memo(ideasDocument);
  const apiCatalog = memo(apiCatalogDocument);
  const llms = memo(llmsTxt);
  const llmsFull = memo(llmsFullTxt);
  const agentsText = memo(agentsTxt);
  const openapi = memo((c) => enrichOpenApi(app.swagger() as unknown as Record<string, unknown>, c));
  const openapiYaml = memo(() => stringify(openapi(), { aliasDuplicateObjects: false, lineWidth: 0 }));

  // Accept: text/markdown → the same document as Markdown (applies to the routes in MARKDOWN_DOCUMENTS,
  // whichever module registered them); every such route says Vary: Accept.
  app.addHook("onSend", async (request, reply, payload) => {
    const url = request.routeOptions.url;
    if (url === undefined || !(url in MARKDOWN_DOCUMENTS) || request.method !== "GET") return payload;
    const vary = String(reply.getHeader("vary") ?? "");
    if (!/\baccept\b/i.test(vary)) reply.header("Vary", vary ? `${vary}, Accept` : "Accept");
    if (reply.statusCode !== 200 || typeof payload !== "string" || !wantsMarkdown(request.headers.accept)) {
      return payload;
    }
    let doc: unknown;
    try {
      doc = JSON.parse(payload);
    } catch {
      return payload;
    }
    reply.type("text/markdown; charset=utf-8");
    const self = `${deps.config.baseUrl}${request.url}`;
    if (url === "/.well-known/x402") return wellKnownX402Markdown(doc as { resources: string[]; instructions: string });
    return jsonToMarkdown(MARKDOWN_DOCUMENTS[url] ?? url, doc, self);
  });

  const tags = ["discovery"];
  // Each builder's return type is inferred from its schema (schemas.ts); the serializer checks it again at run time.
  const json = (path: string, summary: string, schema: z.ZodType, build: () => unknown) => {
    app.get(
      path,
      { schema: { summary, tags, response: { 200: schema } }, onRequest: withLinks, onSend: cacheable },
      async () => build(),
    );
  };

  json("/api/welcome", "Orientation for both surfaces: where humans and agents start", welcomeSchema, welcome);
  json(
    "/api/agent",
    "Agent discovery (source of truth): platform map, rails, catalog, buy examples",
    agentSchema,
    agent,
  );
  json("/platform.json", "Platform map: surfaces, modules and discovery URLs", platformSchema, platform);
  json(
    "/agents.json",
    "SKUs with both x402 rails' requirements, headers, flow steps and caps",
    agentsJsonSchema,
    agentsJson,
  );
  const card = memo(agentCard);
  const mcpCard = memo(mcpServerCard);
  const loose = (describe: string) =>
    z.object({ name: z.string(), description: z.string() }).catchall(z.unknown()).describe(describe);
  json(
    AGENT_CARD_PATH,
    "A2A agent card: the service's skills (its MCP tools), interfaces and x402 security scheme",
    loose("A2A AgentCard (v0.3 field names)"),
    card,
  );
  for (const path of MCP_CARD_PATHS) {
    json(
      path,
      "MCP server card: streamable HTTP endpoint, stdio command, tools and resources",
      loose("MCP server card"),
      mcpCard,
    );
  }
  json("/toys.json", "Toy store (aisles fun, theory, artifact, history); free, not commercial SKUs", toysSchema, toys);
  json("/ideas.json", "Idea lab: ideas and whether this deployment serves them yet", ideasSchema, ideas);

  app.get(
    API_CATALOG_PATH,
    {
      schema: {
        summary: "API catalog (RFC 9727): linkset to the OpenAPI description, documentation and metadata",
        tags,
        response: { 200: apiCatalogSchema },
      },
      onRequest: withLinks,
      onSend: cacheable,
    },
    async (_request, reply) => {
      reply.type(API_CATALOG_TYPE);
      return apiCatalog();
    },
  );

  const plain = (path: string, summary: string, type: string, build: () => string) => {
    app.get(
      path,
      { schema: { summary, tags, response: { 200: text(summary, type) } }, onRequest: withLinks, onSend: cacheable },
      async (_request, reply) => reply.type(`${type}; charset=utf-8`).send(build()),
    );
  };
  plain("/llms.txt", "llms.txt: short index for language models (llmstxt.org)", "text/markdown", llms);
  plain("/llms-full.txt", "llms-full.txt: every product, price and flow in one text", "text/markdown", llmsFull);
  plain(
    PRICING_PATH,
    "Pricing in Markdown: every product and the metered suite prices",
    "text/markdown",
    memo(pricingMarkdown),
  );
  plain("/agents.txt", "agents.txt: plain-text twin of agents.json", "text/plain", agentsText);
  plain(
    "/openapi.yaml",
    "OpenAPI 3.1 description (YAML), generated from the route schemas",
    "application/yaml",
    openapiYaml,
  );

  app.get(
    "/openapi.json",
    {
      schema: {
        summary: "OpenAPI 3.1 description (JSON), generated from the route schemas",
        tags,
        response: { 200: openApiObjectSchema },
      },
      onRequest: withLinks,
      onSend: cacheable,
    },
    async () => openapi() as z.infer<typeof openApiObjectSchema>,
  );
}
