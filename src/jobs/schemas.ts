import { z } from "zod";

/** A job's webhook: its callback URL and every event delivery with its attempts (src/webhooks). */
export const webhookViewSchema = z.object({
  url: z.string(),
  deliveries: z.array(
    z.object({
      event: z.enum(["job.done", "job.failed", "job.cancelled", "job.expired"]),
      webhook_id: z.string().describe("the webhook-id header, the same on every attempt (msg_…)"),
      state: z.enum(["pending", "delivered", "failed"]),
      created_at: z.string().describe("when the event was recorded"),
      attempts: z.array(
        z.object({
          at: z.string(),
          status: z.number().int().nullable().describe("the receiver's HTTP status; null: no answer"),
          error: z.string().nullable().describe("why there was no answer (refused target, DNS, connect, timeout)"),
          duration_ms: z.number().int(),
        }),
      ),
      next_attempt_at: z.string().nullable().describe("when the next attempt is due (pending only)"),
    }),
  ),
});

/** A suite job as the job routes, the listing and MCP show it (JobService.view). */
export const jobViewSchema = z.object({
  job_id: z.string(),
  state: z.enum(["awaiting_input", "uploading", "queued", "running", "done", "failed", "cancelled"]),
  product: z.string(),
  data_class: z.string(),
  op: z.string(),
  level: z.string(),
  bytes_quoted: z.number().int(),
  bytes_in: z.number().int().describe("bytes received and stored (what fit, after a 413)"),
  bytes_out: z.number().int(),
  progress: z.number().describe("0..1"),
  ratio: z.number().nullable().describe("bytes_out / bytes_in once done"),
  segments_total: z.number().int(),
  segments_done: z.number().int(),
  attempts: z.number().int(),
  error: z.object({ code: z.string(), detail: z.string().nullable() }).nullable(),
  input_sha256: z.string().nullable(),
  output_sha256: z.string().nullable(),
  paid_by: z.string(),
  created_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  data_expires_at: z
    .string()
    .nullable()
    .describe(
      "when the job's input and output will be deleted (finished_at + JOB_RETENTION_HOURS); then 410 job_expired. Null until the job ends",
    ),
  links: z.object({ self: z.string(), input: z.string(), upload_tus: z.string(), output: z.string() }),
  webhook: webhookViewSchema
    .nullable()
    .optional()
    .describe("GET /api/jobs/{id}: the job's callback_url and its signed event deliveries; null: no callback_url"),
});
