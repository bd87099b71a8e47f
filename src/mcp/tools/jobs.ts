import type { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { Problem } from "../../http/problem.js";
import { plainText } from "../../http/text.js";
import { suiteRequestFields } from "../../jobs/quotes/schemas.js";
import { assertNotExpired } from "../../jobs/retention.js";
import type { JobRow } from "../../jobs/tables.js";
import type { PricedItem } from "../../orders/priced-item.js";
import type { McpCaller, McpDeps } from "../deps.js";
import {
  assertPayloadObject,
  MPP_RECEIPT_META,
  PAYMENT_RESPONSE_META,
  type PaymentHint,
  paymentRequiredResult,
  paymentRequiredSchema,
  pendingResult,
  pendingSchema,
  presentedPayment,
  refusedResult,
  withMpp,
} from "../payment.js";
import { asProblem, okResult, outputOf, problemResult, run, toolProblemSchema } from "../results.js";
import { IDEMPOTENCY } from "./buy.js";

/**
 * Suite jobs over MCP (issue #23 item 3): buy a job (`buy_suite`: free under the cap, else paid
 * over the x402 MCP transport or MPP's), get where to upload its input (`job_upload`), follow it
 * (`job_status`, src/mcp/tools/store.ts), cancel it (`job_cancel`) and get its download link
 * (`job_download`). The bytes never go through MCP: the agent PUTs the input to the HTTP route
 * (or uses tus) and GETs the output from it, with its job token. Every tool after the purchase
 * takes the job token as an argument; tool arguments are never logged.
 *
 * Tasks (the MCP 2026-07-28 revision): the SDK in use cannot serve them (docs/mcp.md "Long work"),
 * so the job id and token are the handle and `job_status` the way to follow it.
 */

const jobIdArg = plainText(100).trim().min(1).describe("the job's id (job_…)");
const jobTokenArg = plainText(300)
  .trim()
  .min(1)
  .describe("the job token returned once by buy_suite (jt_…): keep it secret, it opens the job");

const httpRequestSchema = z.object({
  method: z.string(),
  url: z.string(),
  headers: z.record(z.string(), z.string()),
});

const uploadOut = z.looseObject({
  job_id: z.string(),
  state: z.string(),
  max_bytes: z.number().int().describe("the most bytes the input may have (the quoted bytes)"),
  bytes_in: z.number().int().describe("bytes received so far"),
  put: httpRequestSchema.describe("one streaming PUT of the whole input (body: the raw bytes)"),
  tus: httpRequestSchema.describe(
    "resumable upload (tus 1.0.0): POST creates the upload (add Upload-Length), then PATCH the Location",
  ),
  note: z.string(),
});

const downloadOut = z.looseObject({
  job_id: z.string(),
  get: httpRequestSchema.describe("GET the output (Range supported)"),
  bytes: z.number().int().describe("the output's size"),
  sha256: z.string().describe("hex SHA-256 of the output: check it after the download"),
  repr_digest: z.string().describe("the Repr-Digest header the download carries (RFC 9530)"),
});

const jobBoughtSchema = z.looseObject({
  job_id: z.string(),
  job_token: z.string().describe("returned once: the bearer token of the job's tools and routes; keep it"),
  quote_id: z.string(),
  status_url: z.string(),
  upload_url: z.string(),
  upload_tus: z.string(),
  output_url: z.string(),
  amount_units: z.string().describe("what was paid, USDC atomic units (0 within the free cap)"),
  webhook_secret: z
    .string()
    .optional()
    .describe(
      "with a callback_url: the whsec_ secret the job's Standard Webhooks events are signed with (returned once)",
    ),
  created: z.boolean().optional().describe("paid jobs: false when this answer repeats an already redeemed payment"),
});

const jobViewOut = z.looseObject({ job_id: z.string(), state: z.string() });

export const buySuiteOutputSchema = z.union([jobBoughtSchema, paymentRequiredSchema, pendingSchema, toolProblemSchema]);

export function registerJobTools(server: McpServer, deps: McpDeps, caller?: McpCaller): void {
  const { config, identities, jobs, jobManager, suitePurchase, transfers, mpp, onError } = deps;

  /** The job a token opens (401 job_token_invalid otherwise, as over HTTP), not deleted or expired. */
  const open = async (jobId: string, token: string): Promise<JobRow> => {
    const job = await jobs.authorize(jobId, `Bearer ${token}`);
    assertNotExpired(job);
    return job;
  };

  server.registerTool(
    "buy_suite",
    {
      title: "Buy a suite job",
      description:
        'Buys a metered suite job (the same request as quote_suite and POST /api/x402-suite). Within the free cap (a join-work identity\'s month with `identity`, else this address\'s day) the job starts at once. Above it the answer is the x402 PaymentRequired (a tool error, with the quote): pay one entry of accepts with an x402 client and call again with the same arguments (or the quote_id) and the PaymentPayload in _meta["x402/payment"]; the job comes back with _meta["x402/payment-response"]. The answer carries job_id and job_token (returned once: keep it), then use job_upload, job_status, job_cancel and job_download. Never pay twice for one call: after a timeout or a pending answer, retry with the SAME payment.',
      inputSchema: z.object({
        ...suiteRequestFields,
        identity: plainText(200)
          .min(1)
          .optional()
          .describe("a join-work identity token: its monthly free cap applies (and free jobs are its)"),
        quote_id: plainText(64).optional().describe("the quote to pay (from quote_suite or a PaymentRequired)"),
        idempotency_key: z
          .string()
          .regex(IDEMPOTENCY)
          .optional()
          .describe("alternative to the payment-identifier extension: 16-128 of A-Z a-z 0-9 _ -, kept secret"),
      }),
      outputSchema: buySuiteOutputSchema,
      annotations: { readOnlyHint: false, idempotentHint: true, openWorldHint: true },
    },
    async (args, ctx) => {
      const { identity: token, idempotency_key, ...input } = args;
      let item: PricedItem | undefined;
      let quoteRef: string | undefined = input.quote_id ?? undefined;
      const hint = (quoteId: string | undefined): PaymentHint => ({
        otherwise: quoteId
          ? `or pay quote ${quoteId} by card: POST ${config.baseUrl}/api/ppp-checkout {"quote_id":"${quoteId}"}`
          : `or pay by card: quote it (quote_suite), then POST ${config.baseUrl}/api/ppp-checkout`,
      });
      try {
        const identity = token === undefined ? null : await identities.verify(token);
        const { x402: payment, credential } = presentedPayment(ctx.mcpReq._meta, deps);
        let presented: Parameters<typeof suitePurchase.x402>[1];
        let verified: ReturnType<NonNullable<typeof mpp>["verifyObject"]> | undefined;
        if (credential !== undefined && mpp) {
          // MPP over MCP: the same verification and ledger as the HTTP credential.
          verified = mpp.verifyObject(credential);
          if (verified.bound?.kind === "quote" && !quoteRef) quoteRef = verified.bound.ref;
          presented = verified;
        } else if (payment !== undefined) {
          assertPayloadObject(payment);
          // The PaymentPayload as the HTTP payment header carries it (base64 of its JSON): one
          // decoder, one size limit and one ledger with POST /api/x402-suite.
          presented = Buffer.from(JSON.stringify(payment), "utf8").toString("base64");
        }
        const outcome = await suitePurchase.x402(
          input,
          presented,
          identity,
          { idempotencyKey: idempotency_key },
          { ip: caller?.ip ?? null },
        );
        switch (outcome.kind) {
          case "free":
            return okResult({ ...outcome.body });
          case "quote_challenge":
            return withMpp(
              deps,
              paymentRequiredResult(outcome.challenge, hint(outcome.quote.quote_id), undefined, {
                quote: outcome.quote,
              }),
              outcome.item,
            );
          case "challenge": {
            item = quoteRef ? await suitePurchase.itemOfQuote(quoteRef) : undefined;
            return withMpp(deps, paymentRequiredResult(outcome.challenge, hint(quoteRef)), item);
          }
          case "pending":
            return pendingResult(outcome.pending.body);
          default: {
            const { body, settle, created } = outcome.purchase;
            const meta: Record<string, unknown> = { [PAYMENT_RESPONSE_META]: settle };
            if (verified && mpp) {
              const transaction = String((body as { transaction?: unknown }).transaction ?? settle.transaction ?? "");
              meta[MPP_RECEIPT_META] = { ...mpp.receiptOf(verified, transaction), challengeId: verified.challenge.id };
            }
            return okResult({ ...(body as unknown as Record<string, unknown>), created }, { _meta: meta });
          }
        }
      } catch (err) {
        if (err instanceof Problem && err.status === 402) {
          item = quoteRef ? await suitePurchase.itemOfQuote(quoteRef).catch(() => undefined) : undefined;
          const refused = refusedResult(deps, err, item, hint(quoteRef));
          if (refused) return refused;
        }
        if (!(err instanceof Problem)) onError?.(err);
        return problemResult(asProblem(err));
      }
    },
  );

  server.registerTool(
    "job_upload",
    {
      title: "Where to upload a job's input",
      description:
        "The HTTP request that sends a suite job's input (the bytes never go through MCP): one streaming PUT of the raw bytes with the job token, or the resumable tus endpoint. Answers while the job still takes input (awaiting_input or uploading).",
      inputSchema: z.object({ job_id: jobIdArg, job_token: jobTokenArg }),
      outputSchema: outputOf(uploadOut),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ job_id, job_token }) =>
      run(async () => {
        const job = await open(job_id, job_token);
        transfers.assertAcceptsInput(job);
        const links = jobs.links(job.id);
        const auth = { Authorization: `Bearer ${job_token}` };
        const maxBytes = Number(job.bytes_quoted);
        return {
          job_id: job.id,
          state: job.state,
          max_bytes: maxBytes,
          bytes_in: Number(job.bytes_in),
          put: {
            method: "PUT",
            url: links.input,
            headers: { ...auth, "Content-Type": "application/octet-stream" },
          },
          tus: {
            method: "POST",
            url: links.upload_tus,
            headers: {
              ...auth,
              "Tus-Resumable": "1.0.0",
              "Upload-Metadata": `job_id ${Buffer.from(job.id, "utf8").toString("base64")}`,
            },
          },
          note: `Send at most ${maxBytes} bytes. The job is queued when the input is complete; follow it with job_status.`,
        };
      }, onError),
  );

  server.registerTool(
    "job_cancel",
    {
      title: "Cancel a suite job",
      description:
        "Cancels a suite job (as POST /api/jobs/:id/cancel): its queued and running segments stop, the job ends cancelled, and unused free volume returns to its caller. Answers the job's state.",
      inputSchema: z.object({ job_id: jobIdArg, job_token: jobTokenArg }),
      outputSchema: outputOf(jobViewOut),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    ({ job_id, job_token }) =>
      run(async () => {
        const job = await open(job_id, job_token);
        return jobs.view(await jobManager.cancel(job));
      }, onError),
  );

  server.registerTool(
    "job_download",
    {
      title: "A job's download link",
      description:
        "Where to GET a done job's output (the bytes never go through MCP): the URL, the header to send (the job token), its size and SHA-256 to check after the download. 409 job_not_done until the job is done.",
      inputSchema: z.object({ job_id: jobIdArg, job_token: jobTokenArg }),
      outputSchema: outputOf(downloadOut),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ job_id, job_token }) =>
      run(async () => {
        const job = await open(job_id, job_token);
        // The same checks as GET /api/jobs/:id/output: done, with every segment's output.
        const { total } = await transfers.output(job);
        const sha256 = job.output_sha256;
        if (!sha256) {
          throw new Problem(409, "job_not_done", `Job ${job.id} has no output digest yet.`, { state: job.state });
        }
        return {
          job_id: job.id,
          get: { method: "GET", url: jobs.links(job.id).output, headers: { Authorization: `Bearer ${job_token}` } },
          bytes: total,
          sha256,
          repr_digest: `sha-256=:${Buffer.from(sha256, "hex").toString("base64")}:`,
        };
      }, onError),
  );
}
