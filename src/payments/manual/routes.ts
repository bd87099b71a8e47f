import { z } from "zod";
import { problemSchema } from "../../http/problem.js";
import type { App } from "../../http/types.js";
import type { ClaimService } from "./service.js";

export const claimReceiptSchema = z.object({
  claim_id: z.string(),
  state: z.enum(["submitted", "approved", "rejected", "revoked"]),
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
          sku: z.string().min(1).max(100),
          email: z.string().max(254),
          rail: z
            .string()
            .max(64)
            .describe("crypto_manual_solana | crypto_manual_evm | crypto_manual_btc | wire_invoice_ach"),
          tx: z.string().max(200).nullish().describe("transaction signature or hash (crypto rails: required)"),
          company: z.string().max(200).nullish().describe("wire: company legal name"),
          billing_address: z.string().max(1000).nullish().describe("wire: billing address"),
          currency: z.string().max(8).nullish().describe("wire: preferred invoice currency (default USD)"),
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
