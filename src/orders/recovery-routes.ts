import { z } from "zod";
import { problemSchema } from "../http/problem.js";
import type { App } from "../http/types.js";
import type { OrderRecovery } from "./recovery.js";

const challengeSchema = z.object({
  nonce: z.string(),
  chain: z.enum(["base", "solana"]),
  address: z.string(),
  message: z.string().describe("the exact text to sign (EIP-4361 / CAIP-122)"),
  expires_at: z.string(),
  how: z.string(),
});

const recoveredSchema = z.object({
  chain: z.enum(["base", "solana"]),
  address: z.string(),
  orders: z.array(
    z.object({
      order_id: z.string(),
      sku: z.string(),
      name: z.string(),
      status: z.enum(["active", "revoked", "refunded"]),
      amount_usd: z.string(),
      rail: z.string(),
      transaction: z.string().nullable(),
      license_key: z.string().nullable(),
      access_url: z.string().nullable(),
      receipt: z
        .string()
        .nullable()
        .describe("the order's receipt signed by the service (compact JWS, docs/receipts.md); null unless active"),
      created_at: z.string(),
    }),
  ),
});

/** Order recovery by wallet signature (a buyer that lost its purchase answer). */
export function recoveryRoutes(app: App, deps: { recovery: OrderRecovery }) {
  app.post(
    "/api/orders/recover/challenge",
    {
      schema: {
        summary: "Start recovering the orders a wallet paid for: get a message to sign",
        tags: ["orders", "x402"],
        body: z.object({
          chain: z.enum(["base", "solana"]),
          address: z
            .string()
            .min(32)
            .max(64)
            .regex(/^[0-9A-Za-z]+$/, "an EVM (0x…) or Solana (base58) address"),
        }),
        response: { 201: challengeSchema, 400: problemSchema },
      },
    },
    async (request, reply) => {
      reply.code(201).header("Cache-Control", "no-store");
      return deps.recovery.challenge(request.body);
    },
  );

  app.post(
    "/api/orders/recover",
    {
      schema: {
        summary: "Recover a wallet's orders with its signature over the challenge",
        description:
          "Returns every order the wallet paid for on chain (x402 on Base or Solana), with access URLs and licence keys of the active ones. A challenge is single use and expires after ten minutes.",
        tags: ["orders", "x402"],
        body: z.object({
          nonce: z.string().regex(/^[0-9a-f]{32}$/, "the challenge nonce"),
          signature: z
            .string()
            .min(64)
            .max(8192)
            .regex(/^[0-9A-Za-z+/=x]+$/, "hex (EVM) or base58/base64 (Solana)"),
        }),
        response: {
          200: recoveredSchema,
          400: problemSchema,
          401: problemSchema,
          404: problemSchema,
          409: problemSchema,
          410: problemSchema,
        },
      },
    },
    async (request, reply) => {
      reply.header("Cache-Control", "private, no-store");
      return deps.recovery.recover(request.body);
    },
  );
}
