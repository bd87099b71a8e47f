/**
 * The suite-job API as the jobs page uses it, and where the page keeps the job it works on.
 * The job token goes only into `Authorization: Bearer` headers, this tab's sessionStorage (the
 * job the panel shows) and this browser's localStorage (the "Your jobs" list, _jobs-list.ts,
 * until the job is forgotten or deleted): never into an address or a log.
 */
import { ApiError, api, type ProblemBody } from "./_lib";

export interface Tier {
  tier: string;
  bytes: number;
  usd_per_gb: string | null;
  amount_usd: string;
}

export interface Quote {
  quote_id: string;
  expires_at: string;
  product: string;
  dataClass: string;
  op: string;
  level: string;
  bytes: number;
  free_bytes: number;
  billable_bytes: number;
  amount_usd: string;
  amount_cents: number;
  free: boolean;
  tiers: Tier[];
  estimate: { seconds: number; level_note: string; by_level: Record<string, number> };
}

export interface QuoteRequest {
  product: string;
  dataClass: string;
  op: string;
  level: string;
  bytes: number;
  email?: string;
  /** where the job's signed events are POSTed (docs/suite.md "Webhooks") */
  callback_url?: string;
}

export interface JobView {
  job_id: string;
  state: "awaiting_input" | "uploading" | "queued" | "running" | "done" | "failed" | "cancelled";
  op: string;
  level: string;
  bytes_quoted: number;
  bytes_in: number;
  bytes_out: number;
  progress: number;
  ratio: number | null;
  segments_total: number;
  segments_done: number;
  attempts: number;
  error: { code: string; detail: string | null } | null;
  created_at: string;
  finished_at: string | null;
}

/** What the page keeps of the current job (sessionStorage: this tab only). */
export interface HeldJob {
  job_id: string;
  job_token: string;
}

const KEY = "labphi.jobs.current";

export function heldJob(): HeldJob | null {
  try {
    const raw = sessionStorage.getItem(KEY);
    if (!raw) return null;
    const v = JSON.parse(raw) as Partial<HeldJob>;
    return typeof v.job_id === "string" && typeof v.job_token === "string"
      ? { job_id: v.job_id, job_token: v.job_token }
      : null;
  } catch {
    return null;
  }
}

export function holdJob(job: HeldJob | null): void {
  if (job) sessionStorage.setItem(KEY, JSON.stringify({ job_id: job.job_id, job_token: job.job_token }));
  else sessionStorage.removeItem(KEY);
}

export const bearer = (job: HeldJob) => ({ Authorization: `Bearer ${job.job_token}` });

export const quote = (req: QuoteRequest) => api<Quote>("/api/ppp-quote", { method: "POST", body: JSON.stringify(req) });

/** Within the free cap: the job at once (POST /api/x402-suite without payment). */
export async function startFree(req: QuoteRequest, quoteId: string): Promise<HeldJob & { webhook_secret?: string }> {
  const r = await api<HeldJob & { amount_units: string; webhook_secret?: string }>("/api/x402-suite", {
    method: "POST",
    body: JSON.stringify({ ...req, quote_id: quoteId }),
  });
  return {
    job_id: r.job_id,
    job_token: r.job_token,
    ...(r.webhook_secret ? { webhook_secret: r.webhook_secret } : {}),
  };
}

/** A hosted card checkout for the quote: the browser goes there, and comes back to /jobs/paid. */
export const cardCheckout = (quoteId: string, email: string | undefined) =>
  api<{ url: string; session_id: string }>("/api/ppp-checkout", {
    method: "POST",
    body: JSON.stringify(email ? { quote_id: quoteId, email } : { quote_id: quoteId }),
  });

export const jobView = (job: HeldJob) =>
  api<JobView>(`/api/jobs/${encodeURIComponent(job.job_id)}`, { headers: bearer(job) });

/** POST /api/jobs/:id/cancel: the job's view, `cancelled` (also when it already was). */
export const cancelJob = (job: HeldJob) =>
  api<JobView>(`/api/jobs/${encodeURIComponent(job.job_id)}/cancel`, { method: "POST", headers: bearer(job) });

/** DELETE /api/jobs/:id: its input and output are removed (204). */
export const deleteJob = (job: HeldJob) =>
  api<undefined>(`/api/jobs/${encodeURIComponent(job.job_id)}`, { method: "DELETE", headers: bearer(job) });

/** The output as a Blob (the browser keeps large blobs on disk), fetched with the Bearer header. */
export async function output(job: HeldJob): Promise<Blob> {
  const res = await fetch(`/api/jobs/${encodeURIComponent(job.job_id)}/output`, {
    headers: { ...bearer(job), Accept: "application/octet-stream" },
  });
  if (!res.ok) throw await problemOf(res.status, await res.text());
  return res.blob();
}

/** An ApiError from a status and a (problem+json) body text. */
export function problemOf(status: number, text: string): ApiError {
  let body: ProblemBody = {};
  try {
    body = text ? (JSON.parse(text) as ProblemBody) : {};
  } catch {
    body = { detail: text.slice(0, 300) };
  }
  return new ApiError(status, body);
}
