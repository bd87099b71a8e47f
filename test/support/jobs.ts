import { createHash, randomBytes } from "node:crypto";
import type { JobRow } from "../../src/jobs/tables.js";

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
