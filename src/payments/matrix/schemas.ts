import { z } from "zod";

/** Wire shapes of the payments matrix (GET /api/payments). Types are inferred from these. */

export const AUDIENCES = ["humans", "agents", "agents_via_browser", "enterprise"] as const;

export const RAIL_IDS = [
  "card_checkout",
  "card_payment_link",
  "x402_solana_usdc",
  "x402_base_usdc",
  "crypto_manual_solana",
  "crypto_manual_evm",
  "crypto_manual_btc",
  "redirect_link_checkout",
  "wire_invoice_ach",
  "suite_metered",
] as const;
export type RailId = (typeof RAIL_IDS)[number];

export const suitePricingSchema = z.object({
  free_cap_gb: z.number().int(),
  usd_per_gb_after_free: z.number(),
  usd_per_gb_bulk: z.number(),
  min_paid_usd: z.number(),
  first_paid_egress_ref_usd: z.number(),
  model: z.string(),
  try_gate: z.literal("retired"),
  cents_per_gb_after_free: z.number().int(),
  cents_per_gb_bulk: z.number().int(),
  min_paid_cents: z.number().int(),
  first_paid_egress_ref_cents_per_gb: z.number().int(),
  note: z.string(),
});
export type SuitePricing = z.infer<typeof suitePricingSchema>;

export const railSchema = z.object({
  id: z.enum(RAIL_IDS),
  name: z.string(),
  kind: z.enum(["card", "x402", "crypto_manual", "offline", "redirect", "metered"]),
  audience: z.array(z.enum(AUDIENCES)),
  configured: z
    .boolean()
    .describe("true only when this rail can verify and settle a payment with the current settings"),
  missing: z.array(z.string()).describe("settings still needed before the rail can settle (empty when configured)"),
  note: z.string(),
  how: z.array(z.string()).describe("steps, in order"),
  /** Endpoints of this rail that this deployment serves ("METHOD /path"), from the route table. */
  endpoints: z.array(z.string()),
  // crypto rails (x402 and manual)
  network: z.string().nullable().optional(),
  asset: z.string().nullable().optional(),
  payTo: z.string().nullable().optional(),
  header: z.string().nullable().optional(),
  asset_hint: z.string().nullable().optional(),
  chains: z.array(z.string()).optional(),
  claim: z.string().nullable().optional().describe("mailto link to the contact address, carrying the sku"),
  claim_api: z.string().nullable().optional(),
  // card checkout
  payment_methods: z.array(z.string()).optional(),
  // wire / invoice
  terms: z.string().nullable().optional(),
  // metered suite
  pricing: suitePricingSchema.optional(),
});

export const matrixProductSchema = z.object({
  sku: z.string(),
  name: z.string(),
  kind: z.string(),
  amount_cents: z.number().int(),
  amount_usd: z.string(),
  max_amount_required: z.string().describe("x402 price in USDC atomic units (cents × 10,000)"),
  checkout: z.string(),
  agent_x402: z.string(),
  human_payment_link: z.string().nullable(),
  claim: z.string().nullable(),
});

export const paymentsMatrixSchema = z.object({
  service: z.string(),
  version: z.string(),
  policy: z.string(),
  currency: z.literal("usd"),
  contact: z.string().nullable(),
  settlement: z.object({ card: z.string(), crypto: z.string() }),
  endpoints: z.record(z.string(), z.string()),
  rails: z.array(railSchema),
  payment_methods: z.object({
    mode: z.enum(["dynamic", "allow_list"]),
    methods: z.array(z.string()),
    note: z.string(),
  }),
  configured_rails: z.array(z.enum(RAIL_IDS)),
  missing_or_optional: z.array(z.enum(RAIL_IDS)),
  products: z.array(matrixProductSchema),
  preferred: z.object({ human: z.enum(RAIL_IDS), agent: z.enum(RAIL_IDS), enterprise: z.enum(RAIL_IDS) }),
  suite_pricing: suitePricingSchema,
  manual_crypto: z.string(),
  wire_invoice: z.string(),
  sku: z.string().optional(),
  product: matrixProductSchema.optional(),
});

export type PaymentRail = z.infer<typeof railSchema>;
export type MatrixProduct = z.infer<typeof matrixProductSchema>;
export type PaymentsMatrix = z.infer<typeof paymentsMatrixSchema>;
