import fastifySwagger from "@fastify/swagger";
import { jsonSchemaTransform, jsonSchemaTransformObject } from "fastify-type-provider-zod";
import type { Config } from "../config.js";
import { VERSIONS } from "../versions.js";
import { operationIdOf } from "./operation-ids.js";
import type { App } from "./types.js";

const HTTP_METHODS = new Set(["get", "put", "post", "delete", "options", "head", "patch", "trace"]);

/**
 * Gives every operation its `operationId` (src/http/operation-ids.ts). Done on the whole document,
 * per method and path: a route serving several methods shares one operation object, so each method
 * gets its own copy with its own id.
 */
export function withOperationIds<T>(doc: T): T {
  const paths = (doc as { paths?: Record<string, Record<string, unknown>> }).paths ?? {};
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!HTTP_METHODS.has(method) || !op || typeof op !== "object") continue;
      const { operationId: _schemaId, ...rest } = op as Record<string, unknown>;
      item[method] = { operationId: operationIdOf(method, path), ...rest };
    }
  }
  return doc;
}

/**
 * OpenAPI 3.1 generated from the routes' own zod schemas. Registered before any
 * route so every route is collected; served by discovery as /openapi.yaml and /openapi.json.
 */
export async function registerOpenApi(app: App, config: Config): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Lab Phi",
        version: VERSIONS.api,
        description:
          "Sell to AI agents (x402, USDC on Base and Solana) and humans (Stripe) side by side; a lossless codec engine; metered suite jobs; the agent olympiad. Errors are RFC 9457 problem details with a stable `code`.",
      },
      servers: [{ url: config.baseUrl }],
      components: {
        securitySchemes: {
          x402Payment: {
            type: "apiKey",
            in: "header",
            name: "X-PAYMENT",
            description:
              "x402 payment proof (base64 JSON payload, v1 or v2). PAYMENT-SIGNATURE (v2) is accepted too. Optional on the first call, which answers 402 with the requirements.",
          },
          adminBearer: { type: "http", scheme: "bearer", description: "Operator token (ADMIN_TOKEN)." },
          participantBearer: {
            type: "http",
            scheme: "bearer",
            description: "Olympiad participant token (from POST /api/olympiad { action: register }).",
          },
          jobBearer: { type: "http", scheme: "bearer", description: "Suite job token (from POST /api/x402-suite)." },
          identityBearer: {
            type: "http",
            scheme: "bearer",
            description: "Join-work identity token (from POST /api/join-work); X-Identity-Token is accepted too.",
          },
        },
      },
    },
    transform: jsonSchemaTransform,
    transformObject: (documentObject) => withOperationIds(jsonSchemaTransformObject(documentObject)),
  });
}
