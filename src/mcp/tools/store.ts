import type { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { catalogEnvelopeFor, productRecord, productRecordSchema } from "../../catalog/routes.js";
import { plainText } from "../../http/text.js";
import { suitePricingRecord } from "../../jobs/pricing.js";
import { quoteRequestSchema, quoteViewSchema } from "../../jobs/quotes/schemas.js";
import { assertNotExpired } from "../../jobs/retention.js";
import { paymentsMatrixSchema } from "../../payments/matrix/schemas.js";
import { paymentsMatrix } from "../../payments/matrix/service.js";
import type { McpCaller, McpDeps } from "../deps.js";
import { outputOf, run } from "../results.js";

/** catalog, payments, quote_suite, job_status: what is sold, how to pay, what a suite job costs, a job's state. */

const skuArg = plainText(100).trim().min(1).optional().describe("a sku or alias (omit for every product)");

const catalogOut = z.looseObject({
  protocol: z.literal("x402"),
  configured: z.boolean(),
  count: z.number().int(),
  products: z.array(productRecordSchema),
});

const jobOut = z.looseObject({
  job_id: z.string(),
  state: z.string().describe("awaiting_input, uploading, queued, running, done, failed or cancelled"),
  bytes_quoted: z.number().int(),
  bytes_in: z.number().int(),
  bytes_out: z.number().int(),
  progress: z.number(),
  links: z.looseObject({ self: z.string(), input: z.string(), output: z.string() }),
});

export function registerStoreTools(server: McpServer, deps: McpDeps, caller?: McpCaller): void {
  const { config, catalog, quotes, identities, jobs, onError } = deps;
  const hasRoute = deps.hasRoute ?? (() => true);

  server.registerTool(
    "catalog",
    {
      title: "Product catalog",
      description:
        "Every product (or one, by sku or alias) with its price in cents and USD, and the x402 rails it can be paid on. Buy one with the `buy` tool.",
      inputSchema: z.object({ sku: skuArg }),
      outputSchema: outputOf(catalogOut),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ sku }) =>
      run(() => {
        const products = sku === undefined ? catalog.list() : [catalog.resolve(sku)];
        const records = products.map((p) => productRecord(p, config));
        return { ...catalogEnvelopeFor(config, catalog), count: records.length, products: records };
      }, onError),
  );

  server.registerTool(
    "payments",
    {
      title: "Payments matrix",
      description:
        "Every payment rail (x402 on Base and Solana, card checkout, manual rails), whether it is configured here, and how to pay each product (or one, by sku).",
      inputSchema: z.object({ sku: skuArg }),
      outputSchema: outputOf(paymentsMatrixSchema),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ sku }) =>
      run(
        () =>
          paymentsMatrix(
            { config, catalog, hasRoute, suitePricing: suitePricingRecord() },
            sku === undefined ? undefined : catalog.resolve(sku),
          ) as unknown as Record<string, unknown>,
        onError,
      ),
  );

  server.registerTool(
    "quote_suite",
    {
      title: "Quote a suite job",
      description:
        "Prices a metered suite job (compress, decompress or roundtrip of `bytes` bytes): the amount in USDC atomic units and USD, price tiers, the free part (a join-work identity's month, else this address's day), a time estimate. The quote is stored (quote_id, expires_at); pay it with POST /api/x402-suite or POST /api/ppp-checkout.",
      inputSchema: quoteRequestSchema,
      outputSchema: outputOf(quoteViewSchema),
      annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: false },
    },
    ({ identity: token, ...input }) =>
      run(async () => {
        const identity = token === undefined ? null : await identities.verify(token);
        // over /mcp the client's address counts its anonymous daily allowance, as over HTTP;
        // over stdio there is no address: nothing is free without an identity
        return quotes.quote(input, identity, { ip: caller?.ip ?? null });
      }, onError),
  );

  server.registerTool(
    "job_status",
    {
      title: "Suite job status",
      description:
        "A suite job's state, bytes in and out, progress, ratio and links, opened with the job token returned once when the job was bought.",
      inputSchema: z.object({
        job_id: plainText(100).trim().min(1).describe("the job's id (job_…)"),
        job_token: plainText(300).trim().min(1).describe("the job token returned with the job"),
      }),
      outputSchema: outputOf(jobOut),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ job_id, job_token }) =>
      run(async () => {
        const job = await jobs.authorize(job_id, `Bearer ${job_token}`);
        assertNotExpired(job);
        return jobs.view(job);
      }, onError),
  );
}
