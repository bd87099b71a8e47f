import { z } from "zod";
import { problemSchema } from "../http/problem.js";
import type { App } from "../http/types.js";
import type { OrderService } from "../orders/service.js";
import type { OrderRow } from "../orders/tables.js";
import type { Receipts } from "./service.js";

/** Verifiers cache the key set this long; a rotated-in key is found within it (docs/receipts.md). */
export const JWKS_MAX_AGE_SECONDS = 300;

const jwkSchema = z.object({
  kty: z.literal("OKP"),
  crv: z.literal("Ed25519"),
  x: z.string().describe("the public key, base64url"),
  kid: z.string().describe("RFC 7638 thumbprint of the key"),
  alg: z.literal("EdDSA"),
  use: z.literal("sig"),
});

export const jwksSchema = z
  .object({ keys: z.array(jwkSchema) })
  .describe("Public keys of the receipts (the current signing key first, then retired ones)");

/** Receipts over HTTP: the public keys, and an order's receipt as a file from its access URL. */
export function receiptRoutes(
  app: App,
  deps: { receipts: Receipts; orders: OrderService; orderReceipt: (order: OrderRow) => string },
) {
  app.get(
    "/.well-known/jwks.json",
    {
      schema: {
        summary: "Public keys that verify the service's signed receipts (JWKS, Ed25519)",
        description:
          "Verify a receipt (compact JWS, `typ` labphi-receipt+jwt, `alg` EdDSA) with the key whose `kid` its header names; see docs/receipts.md or `labphi verify-receipt`.",
        tags: ["orders"],
        response: { 200: jwksSchema },
      },
    },
    async (_request, reply) => {
      reply.header("Cache-Control", `public, max-age=${JWKS_MAX_AGE_SECONDS}`);
      reply.header("Access-Control-Allow-Origin", "*");
      return deps.receipts.jwks();
    },
  );

  app.get(
    "/access/:token/receipt.jws",
    {
      schema: {
        summary: "Download the order's signed receipt (compact JWS)",
        tags: ["orders"],
        params: z.object({ token: z.string().min(16).max(128) }),
        response: {
          200: {
            description: "The receipt: a compact JWS (docs/receipts.md)",
            content: { "application/jose": { schema: z.string() } },
          },
          404: problemSchema,
          410: problemSchema,
        },
      },
    },
    async (request, reply) => {
      const order = await deps.orders.open(request.params.token);
      return reply
        .header("Cache-Control", "private, no-store")
        .header("Content-Disposition", `attachment; filename="receipt-${order.id}.jws"`)
        .type("application/jose")
        .serializer(String)
        .send(`${deps.orderReceipt(order)}\n` as never);
    },
  );
}
