import { abs, type DiscoveryContext } from "./context.js";
import type { ApiCatalog } from "./schemas.js";

/**
 * /.well-known/api-catalog (RFC 9727): a linkset (RFC 9264) naming this service's API and, for it,
 * the descriptions (service-desc), documentation (service-doc), metadata (service-meta) and status
 * (RFC 8631 relations). Only served routes are listed.
 */

export const API_CATALOG_PATH = "/.well-known/api-catalog";
export const API_CATALOG_TYPE = 'application/linkset+json; profile="https://www.rfc-editor.org/info/rfc9727"';

const RELATIONS: [rel: string, path: string, type: string][] = [
  ["service-desc", "/openapi.yaml", "application/yaml"],
  ["service-desc", "/openapi.json", "application/json"],
  ["service-doc", "/llms.txt", "text/markdown"],
  ["service-doc", "/llms-full.txt", "text/markdown"],
  ["service-doc", "/api/agent", "application/json"],
  ["service-meta", "/agents.json", "application/json"],
  ["service-meta", "/platform.json", "application/json"],
  ["service-doc", "/pricing.md", "text/markdown"],
  ["service-meta", "/.well-known/x402", "application/json"],
  ["service-meta", "/.well-known/agent-card.json", "application/json"],
  ["service-meta", "/.well-known/mcp.json", "application/json"],
  ["status", "/readyz", "application/json"],
];

export function apiCatalogDocument(ctx: DiscoveryContext): ApiCatalog {
  const relations: Record<string, { href: string; type: string }[]> = {};
  for (const [rel, path, type] of RELATIONS) {
    if (!ctx.hasRoute("GET", path)) continue;
    relations[rel] = [...(relations[rel] ?? []), { href: abs(ctx, path), type }];
  }
  // The API is identified by its entry point for agents, the agent discovery document.
  const entry = abs(ctx, "/api/agent");
  const api: ApiCatalog["linkset"][number] = { anchor: entry, ...relations };
  return {
    linkset: [{ anchor: abs(ctx, API_CATALOG_PATH), item: [{ href: entry, type: "application/json" }] }, api],
  };
}
