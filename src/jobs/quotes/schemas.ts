import { z } from "zod";
import { DATA_CLASSES, LEVELS } from "../../codec/index.js";
import { PATHS } from "../../engine/service.js";
import { controlFree, plainText } from "../../http/text.js";
import { MAX_JOB_BYTES_NUMBER } from "../pricing.js";

/**
 * Wire shapes of suite quotes and suite job requests (POST /api/ppp-quote; POST /api/x402-suite
 * takes the same request fields). The enums are the single list of accepted values.
 */

/** `auto` (the router picks a path per segment) or a codec path (src/engine/service.ts PATHS). */
export const SUITE_PRODUCTS = ["auto", ...PATHS] as const;
export type SuiteProduct = (typeof SUITE_PRODUCTS)[number];

/** `zeros` (the spec's example) and the codec's data classes (src/codec/router/profile.ts), except `empty`: a job has at least one byte. */
export const SUITE_DATA_CLASSES = [
  "zeros",
  ...(DATA_CLASSES.filter((c) => c !== "empty") as Exclude<(typeof DATA_CLASSES)[number], "empty">[]),
] as const;
export type SuiteDataClass = (typeof SUITE_DATA_CLASSES)[number];

export const SUITE_OPS = ["compress", "decompress", "roundtrip"] as const;
export const SUITE_LEVELS = LEVELS;

/** The fields of a suite job request (a quote, or a job on POST /api/x402-suite). */
export const suiteRequestFields = {
  product: z.enum(SUITE_PRODUCTS).describe("`auto` (the router picks per segment) or a codec path"),
  dataClass: z
    .enum(SUITE_DATA_CLASSES as unknown as [SuiteDataClass, ...SuiteDataClass[]])
    .describe("what the data is: `zeros` or a codec data class (a hint; the router still profiles each segment)"),
  op: z
    .enum(SUITE_OPS)
    .describe(
      "compress, decompress (bytes = the DECOMPRESSED size: the output the job may write) or roundtrip (compress then verify)",
    ),
  bytes: z
    .number()
    .int()
    .min(1)
    .max(MAX_JOB_BYTES_NUMBER)
    .describe(
      `bytes the job is priced on, an integer from 1 to ${MAX_JOB_BYTES_NUMBER} (10^15 = 1 PB): for compress and roundtrip the size of the input; for decompress the decompressed size (the sum of the sizes the input's stream records declare: a job whose records declare more is refused before decoding with 409 output_exceeds_quote and a quote for the declared size; the output never exceeds it). The upload (the input, or the compressed stream) may not exceed it either`,
    ),
  level: z
    .enum(LEVELS)
    .optional()
    .describe("codec level: fast (default for jobs), balanced or max; the price is the same"),
  email: controlFree(z.email().max(254)).optional().describe("optional: where a receipt or job notice may be sent"),
  callback_url: controlFree(z.string().min(1).max(2048))
    .optional()
    .describe(
      'optional: an https URL the job\'s events (job.done, job.failed, job.cancelled, job.expired) are POSTed to, signed per Standard Webhooks with the `webhook_secret` returned with the job (docs/suite.md "Webhooks"). Its host must resolve only to public addresses: otherwise 400 callback_url_refused',
    ),
};

export const suiteRequestSchema = z.object(suiteRequestFields);
export type SuiteRequest = z.infer<typeof suiteRequestSchema>;

export const quoteRequestSchema = z.object({
  ...suiteRequestFields,
  identity: plainText(200)
    .min(1)
    .optional()
    .describe("a join-work identity token (or send it as X-Identity-Token): its monthly free cap applies"),
});

export const priceTierSchema = z.object({
  tier: z.enum(["free", "standard", "bulk", "minimum"]),
  bytes: z.number().int().describe("bytes priced in this tier (free bytes, or billable whole-MB bytes)"),
  limit_bytes: z.number().int().nullable().describe("most bytes this tier takes in this quote; null: no limit"),
  units_per_gb: z.number().int().nullable().describe("USDC atomic units per GB (10^9 bytes)"),
  usd_per_gb: z.string().nullable().describe("USD per GB (10^9 bytes)"),
  amount_units: z.string().describe("USDC atomic units (6 decimals), integer string"),
  amount_usd: z.string(),
  rule: z.string(),
});

export const quoteViewSchema = z.object({
  quote_id: z.string(),
  state: z.enum(["open", "paid", "used", "expired"]),
  created_at: z.string(),
  expires_at: z.string().describe("after this the quote cannot be paid (410 quote_expired): ask for a new one"),
  product: z.string(),
  dataClass: z.string(),
  op: z.string(),
  level: z.string(),
  bytes: z
    .number()
    .int()
    .describe(
      "the bytes priced: the input's size, or for decompress the decompressed size (the most output the job may write)",
    ),
  billable_bytes: z.number().int().describe("bytes beyond the free part, rounded up to whole MB (10^6 bytes)"),
  free_bytes: z.number().int().describe("bytes of this job covered by the free cap"),
  free_cap_remaining_bytes: z
    .number()
    .int()
    .nullable()
    .describe("with an identity: what is left of its monthly free cap before this job; null without identity"),
  free_cap_remaining_after_bytes: z
    .number()
    .int()
    .nullable()
    .describe("with an identity: what would be left after this job; null without identity"),
  free_cap_period: z.string().nullable().describe("the calendar month (UTC, YYYY-MM) of the identity's free cap"),
  amount_units: z.string().describe("USDC atomic units (6 decimals), integer string; x402 maxAmountRequired"),
  amount_usd: z.string().describe("exact decimal USD of amount_units"),
  amount_cents: z.number().int().describe("card charge: amount_units rounded up to the cent"),
  currency: z.literal("usd"),
  free: z.boolean().describe("true when nothing is to be paid"),
  tiers: z.array(priceTierSchema),
  estimate: z.object({
    seconds: z.number().int().describe("estimated codec time for one worker thread at this level"),
    level_note: z.string(),
    by_level: z.object({ fast: z.number().int(), balanced: z.number().int(), max: z.number().int() }),
  }),
  pay: z.object({ x402: z.string(), card: z.string() }),
  pricing_model: z.string(),
  callback_url: z.string().nullable().optional().describe("where the job's signed events will be POSTed; null: none"),
});
export type QuoteView = z.infer<typeof quoteViewSchema>;
