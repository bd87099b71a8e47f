import { z } from "zod";
import { problemSchema } from "../../http/problem.js";
import { emailText, idText, multiLineText, plainText } from "../../http/text.js";
import type { App } from "../../http/types.js";
import type { ClaimService } from "./service.js";

export const claimReceiptSchema = z.object({
  claim_id: z.string(),
  state: z.enum(["submitted", "approved", "rejected", "revoked", "closed"]),
  rail: z.string(),
  sku: z.string(),
  amount_cents: z.number().int(),
  amount_usd: z.string(),
  tx: z.string().nullable(),
  terms: z.string().nullable(),
  pay_to: z.string().nullable(),
  network: z.string().nullable(),
  asset_hint: z.string().nullable(),
  next_steps: z.array(z.string()),
  mailto: z.string().nullable().describe("mail link to the operator carrying the claim id"),
  status_url: z.string(),
  sender: z.string().nullable().describe("the wallet that sent the transfer (read from the chain where possible)"),
  sender_source: z.enum(["chain", "claimant"]).nullable(),
  sender_proven: z.boolean().describe("whether the claimant signed for the sending wallet"),
  prove_sender: z
    .object({ message: z.string(), how: z.string() })
    .nullable()
    .describe("what the sending wallet signs to prove this claim is its own"),
});

/** HTTP face of the manual rails: file a claim, read its state. Operator decisions live in src/admin. */
export function claimRoutes(app: App, deps: { claims: ClaimService }) {
  const { claims } = deps;

  app.post(
    "/api/claims",
    {
      schema: {
        summary: "Claim a manual payment: a crypto transfer (tx) or a wire/ACH invoice request (net-15)",
        tags: ["payments"],
        body: z.object({
          sku: idText(100),
          email: emailText(),
          rail: plainText(64).describe(
            "crypto_manual_solana | crypto_manual_evm | crypto_manual_btc | wire_invoice_ach",
          ),
          tx: plainText(200).nullish().describe("transaction signature or hash (crypto rails: required)"),
          company: plainText(200).nullish().describe("wire: company legal name"),
          billing_address: multiLineText(1000).nullish().describe("wire: billing address"),
          currency: plainText(8).nullish().describe("wire: preferred invoice currency (default USD)"),
          sender: plainText(64).nullish().describe("crypto: the wallet that sent the transfer"),
          sender_signature: plainText(8192)
            .nullish()
            .describe(
              "crypto: the sending wallet's signature over prove_sender.message (EIP-191 hex, or ed25519 base58)",
            ),
        }),
        response: {
          201: claimReceiptSchema,
          400: problemSchema,
          404: problemSchema,
          409: problemSchema,
          410: problemSchema,
          503: problemSchema,
        },
      },
    },
    async (request, reply) => {
      const receipt = await claims.submit(request.body);
      reply.code(201).header("Location", `/api/claims/${receipt.claim_id}`);
      return receipt;
    },
  );

  app.get(
    "/api/claims/:id",
    {
      schema: {
        summary: "State of a claim (the claim id is the buyer's handle); the access URL once approved",
        tags: ["payments"],
        params: z.object({ id: z.string().regex(/^clm_[A-Za-z0-9_-]{10,40}$/, "a claim id (clm_…)") }),
        response: {
          200: claimReceiptSchema.extend({
            order_id: z.string().nullable(),
            order_status: z.string().nullable(),
            access_url: z.string().nullable(),
            receipt: z
              .string()
              .nullable()
              .describe("the signed purchase receipt (JWS, EdDSA) once approved (docs/receipts.md)"),
            reason: z.string().nullable(),
          }),
          400: problemSchema,
          404: problemSchema,
        },
      },
    },
    async (request, reply) => {
      reply.header("Cache-Control", "no-store");
      return claims.publicStatus(request.params.id);
    },
  );
}
