/**
 * Metered suite jobs: quotes, jobs, segments, the usage ledger and the in-process queue's tasks.
 * Byte counts are bigint columns: read them with Number() (safe up to 9 PB) or BigInt().
 */

export type QuoteState = "open" | "paid" | "used" | "expired";

export interface QuoteRow {
  /** qt_… */
  id: string;
  /** `auto` or a codec path */
  product: string;
  data_class: string;
  /** compress | decompress | roundtrip */
  op: string;
  /** fast | balanced | max */
  level: string;
  bytes: number | string | bigint;
  billable_bytes: number | string | bigint;
  /** free-cap bytes this quote uses */
  free_bytes: number | string | bigint;
  /** USDC atomic units, decimal string ("0" when free) */
  amount_units: string;
  /** card charge: amount_units rounded up to the cent */
  amount_cents: number;
  /** JSON: the pricing breakdown, one entry per tier */
  tiers: string;
  identity_id: string | null;
  /**
   * HMAC-SHA256 (first 16 bytes, hex) of the client's IP under a server key (an IPv6 address by
   * its /64); the anonymous free allowance is counted per IP per day from it. Null: no IP known.
   */
  client_ip_hash?: string | null;
  email: string | null;
  /** the checked https URL the job's events are POSTed to (src/webhooks, migration 0019); null: none */
  callback_url?: string | null;
  state: QuoteState;
  job_id: string | null;
  created_at: string;
  expires_at: string;
}

export type JobState = "awaiting_input" | "uploading" | "queued" | "running" | "done" | "failed" | "cancelled";

/** The states in which a job takes input (a whole PUT, tus, or parts). */
export const INPUT_STATES: JobState[] = ["awaiting_input", "uploading"];

export interface JobRow {
  /** job_… */
  id: string;
  quote_id: string;
  /** sha256 of the job token (the bearer credential of the job's routes) */
  token_hash: string;
  state: JobState;
  product: string;
  data_class: string;
  op: string;
  level: string;
  bytes_quoted: number | string | bigint;
  bytes_in: number | string | bigint;
  bytes_out: number | string | bigint;
  input_sha256: string | null;
  output_sha256: string | null;
  segments_total: number;
  segments_done: number;
  attempts: number;
  error_code: string | null;
  error_detail: string | null;
  /** free | x402_base_usdc | x402_solana_usdc | card_checkout */
  paid_by: string;
  /** proof key / checkout session that paid it */
  payment_ref: string | null;
  identity_id: string | null;
  email: string | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  finished_at: string | null;
  /** the current upload of the input (a fresh value per upload; null before the first) */
  upload_gen: string | null;
  /** who a free job counts against (admission): `idn:<identity id>`, or `ip:<client_ip_hash>`; null: unknown */
  caller?: string | null;
  /**
   * When the retention sweep deleted the job's data (JOB_RETENTION_HOURS after it ended, or an
   * upload abandoned for JOB_ABANDONED_UPLOAD_HOURS); null while it is kept. Expired: 410 job_expired.
   */
  expired_at: string | null;
  /** when the expired job's data was deleted (null until a sweep has deleted it all) */
  purged_at: string | null;
  /**
   * When its owner deleted the job (DELETE /api/jobs/:id, migration 0018); null while it exists.
   * Deleted: its data is removed (purged_at) and every job route answers 410 job_deleted.
   */
  deleted_at?: string | null;
}

export type SegmentState = "pending" | "running" | "done" | "failed";

export interface JobSegmentRow {
  job_id: string;
  idx: number;
  state: SegmentState;
  in_offset: number | string | bigint;
  in_length: number | string | bigint;
  out_bytes: number | string | bigint | null;
  out_sha256: string | null;
  attempts: number;
  worker: string | null;
  error: string | null;
  updated_at: string;
  /** the upload this segment was planned for (jobs.upload_gen then; null: planned before generations) */
  gen: string | null;
}

/** A part of a job's input sent with Content-Range (migration 0021, docs/suite.md "Several upload streams"). */
export interface JobInputPartRow {
  job_id: string;
  /** the upload it belongs to (jobs.upload_gen) */
  gen: string;
  part_offset: number | string | bigint;
  part_length: number | string | bigint;
  /** the whole input's size, as every part of the upload declared it */
  total: number | string | bigint;
  state: "writing" | "landed";
  /** the process writing it (while `writing`) */
  writer: string | null;
  /** a `writing` row whose lease ran out is a dead writer's: dropped */
  lease_until: string | null;
  created_at: string;
  updated_at: string;
}

export interface UsageEventRow {
  /** idempotency key, e.g. `suite:<job_id>:input` */
  id: string;
  identity_id: string | null;
  /** e.g. suite_bytes */
  meter: string;
  value_bytes: number | string | bigint;
  /** calendar month (UTC): YYYY-MM */
  period: string;
  job_id: string | null;
  quote_id: string | null;
  occurred_at: string;
}

export interface QueueTaskRow {
  id: string;
  queue: string;
  /** JSON */
  payload: string;
  state: "ready" | "leased" | "done" | "failed";
  /** taken by ascending priority, then run_after (TASK_PRIORITY: paid 0, free 10) */
  priority: number;
  attempts: number;
  max_attempts: number;
  run_after: string;
  lease_until: string | null;
  worker: string | null;
  error: string | null;
  created_at: string;
  updated_at: string;
}

export interface JobTables {
  quotes: QuoteRow;
  jobs: JobRow;
  job_segments: JobSegmentRow;
  job_input_parts: JobInputPartRow;
  usage_events: UsageEventRow;
  queue_tasks: QueueTaskRow;
}
