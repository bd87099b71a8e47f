/**
 * Signed job webhooks (issue #23 item 1; docs/suite.md "Webhooks"): the subscription a job carries
 * (its `callback_url`), the outbox of events to deliver (one row per job and event) and the log of
 * every delivery attempt. Times are ISO-8601 UTC strings, like every other table.
 */

/** A job's callback URL, recorded in the transaction that creates the job (migration 0019). */
export interface JobWebhookRow {
  job_id: string;
  /** the https URL the events of this job are POSTed to (checked when the quote was made) */
  url: string;
  created_at: string;
  /** set once nothing more can happen to the job (its `job.expired` recorded, or it was deleted) */
  closed_at: string | null;
}

export type WebhookEvent = "job.done" | "job.failed" | "job.cancelled" | "job.expired";
export type DeliveryState = "pending" | "delivered" | "failed";

/** One event of one job to deliver (the outbox): unique per (job_id, event). */
export interface WebhookDeliveryRow {
  /** msg_…: the `webhook-id` header, the same on every attempt */
  id: string;
  job_id: string;
  event: WebhookEvent;
  url: string;
  /** the JSON body, fixed when the event is recorded (every attempt sends the same bytes) */
  payload: string;
  state: DeliveryState;
  attempts: number;
  created_at: string;
  /** no attempt is started after this (created_at + WEBHOOK_RETRY_HOURS) */
  deadline_at: string;
  /** when the next attempt is due (pending only) */
  next_attempt_at: string | null;
  /** a sender holds the delivery until then (claimed by a conditional update) */
  lease_until: string | null;
  lease_owner: string | null;
  delivered_at: string | null;
  updated_at: string;
}

/** One POST of a delivery: its HTTP status, or why there was none. */
export interface WebhookAttemptRow {
  delivery_id: string;
  /** 1, 2, …: the attempt's number */
  n: number;
  at: string;
  status: number | null;
  error: string | null;
  duration_ms: number;
}

export interface WebhookTables {
  job_webhooks: JobWebhookRow;
  webhook_deliveries: WebhookDeliveryRow;
  webhook_attempts: WebhookAttemptRow;
}
