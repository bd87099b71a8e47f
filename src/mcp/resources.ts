import type { McpServer } from "@modelcontextprotocol/server";
import { catalogEnvelopeFor, productRecord } from "../catalog/routes.js";
import type { McpDeps } from "./deps.js";

/** Read-only resources: the catalog, the olympiad record and the standings (the HTTP documents' JSON). */

export const RESOURCES = {
  catalog: "labphi://catalog",
  olympiad: "labphi://olympiad/record",
  standings: "labphi://olympiad/standings",
} as const;

const json = (uri: string, value: unknown) => ({
  contents: [{ uri, mimeType: "application/json", text: JSON.stringify(value) }],
});

export function registerResources(server: McpServer, deps: McpDeps): void {
  const { config, catalog, olympiad, olympiadRecords } = deps;
  server.registerResource(
    "catalog",
    RESOURCES.catalog,
    {
      title: "Product catalog",
      description: "Every product with its price and the x402 rails (as GET /api/x402-products).",
      mimeType: "application/json",
    },
    async (uri) => {
      const products = catalog.list().map((p) => productRecord(p, config));
      return json(uri.href, { ...catalogEnvelopeFor(config, catalog), count: products.length, products });
    },
  );
  server.registerResource(
    "olympiad-record",
    RESOURCES.olympiad,
    {
      title: "Olympiad record",
      description: "The agent olympiad's season, events, entry and rules (as GET /api/olympiad).",
      mimeType: "application/json",
    },
    async (uri) => json(uri.href, await olympiad.record()),
  );
  server.registerResource(
    "olympiad-standings",
    RESOURCES.standings,
    {
      title: "Olympiad standings",
      description: "The season's standings on the olympiad hash chain (as GET /standings.json).",
      mimeType: "application/json",
    },
    async (uri) => json(uri.href, await olympiadRecords.standingsDocument()),
  );
}
