import { createHash, randomBytes } from "node:crypto";
import type { App } from "../../src/http/types.js";
import { jobStore } from "../../src/jobs/store.js";
import type { JobRow, QuoteRow } from "../../src/jobs/tables.js";

/**
 * A suite job row for tests that drive the runner or the transfers without the HTTP API: a free
 * compress job at level fast, queued, with a fresh id, unless `fields` say otherwise.
 */
export function jobRow(fields: Partial<JobRow> = {}): JobRow {
  const id = fields.id ?? `job_${randomBytes(6).toString("hex")}`;
  const at = fields.created_at ?? new Date().toISOString();
  return {
    id,
    quote_id: `qt_${id}`,
    token_hash: createHash("sha256").update(id).digest("hex"),
    state: "queued",
    product: "auto",
    data_class: "text",
    op: "compress",
    level: "fast",
    bytes_quoted: 0,
    bytes_in: 0,
    bytes_out: 0,
    input_sha256: null,
    output_sha256: null,
    segments_total: 0,
    segments_done: 0,
    attempts: 0,
    error_code: null,
    error_detail: null,
    paid_by: "free",
    payment_ref: null,
    identity_id: null,
    email: null,
    created_at: at,
    updated_at: at,
    started_at: null,
    finished_at: null,
    upload_gen: null,
    expired_at: null,
    purged_at: null,
    ...fields,
  };
}

/**
 * A free job bought through the app's own services, as `POST /api/x402-suite` would within the
 * free cap: an open free quote of `bytes` (level `level`) stored, then its job created. Returns the
 * job, its token and the Authorization header that opens it.
 */
export async function freeJob(
  app: App,
  bytes: number,
  level: QuoteRow["level"] = "fast",
): Promise<{ job: JobRow; token: string; auth: Record<string, string> }> {
  const at = new Date().toISOString();
  const quote: QuoteRow = {
    id: `qt_test_${randomBytes(8).toString("hex")}`,
    product: "auto",
    data_class: "text",
    op: "compress",
    level,
    bytes,
    billable_bytes: 0,
    free_bytes: bytes,
    amount_units: "0",
    amount_cents: 0,
    tiers: "[]",
    identity_id: null,
    email: null,
    state: "open",
    job_id: null,
    created_at: at,
    expires_at: new Date(Date.now() + 3_600_000).toISOString(),
  };
  await jobStore.insertQuote(app.services.db.kysely, quote);
  const { job, token } = await app.services.jobs.createFromQuote(quote, { by: "free", ref: null });
  if (!token) throw new Error("no job token");
  return { job, token, auth: { Authorization: `Bearer ${token}` } };
}
