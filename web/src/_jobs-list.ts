/**
 * The jobs this browser keeps ("Your jobs" on /jobs, issue #23 item 2): each job it started or
 * opened, with its token, in this browser's localStorage under `labphi.jobs.kept`, newest first,
 * at most MAX_KEPT. The page fetches each one's view (GET /api/jobs/:id with its token) and offers
 * cancel, delete, download and forget. Pure logic here (no DOM: the unit tests run it in Node);
 * the storage is passed in.
 */

/** A kept job: its id and token, and when this browser kept it (ms since the epoch). */
export interface KeptJob {
  job_id: string;
  job_token: string;
  kept_at: number;
}

/** The part of the Web Storage API used here (localStorage in the page). */
export interface KeyValueStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

export const KEPT_KEY = "labphi.jobs.kept";
/** Jobs kept at most: the oldest is dropped past this (each one costs a request when the page lists them). */
export const MAX_KEPT = 50;

const JOB_ID = /^job_[A-Za-z0-9_-]{1,64}$/;
const TOKEN = /^\S{1,512}$/;

/** The kept jobs in a stored value; anything malformed is left out (never throws). */
export function parseKept(raw: string | null): KeptJob[] {
  if (!raw) return [];
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return [];
  }
  if (!Array.isArray(v)) return [];
  const out: KeptJob[] = [];
  const seen = new Set<string>();
  for (const item of v) {
    if (!item || typeof item !== "object") continue;
    const { job_id, job_token, kept_at } = item as Record<string, unknown>;
    if (typeof job_id !== "string" || !JOB_ID.test(job_id) || seen.has(job_id)) continue;
    if (typeof job_token !== "string" || !TOKEN.test(job_token)) continue;
    seen.add(job_id);
    out.push({ job_id, job_token, kept_at: typeof kept_at === "number" && Number.isFinite(kept_at) ? kept_at : 0 });
  }
  return out.slice(0, MAX_KEPT);
}

/** The list with `job` first (kept again: moved to the front, its token updated); at most MAX_KEPT. */
export function withJob(list: readonly KeptJob[], job: { job_id: string; job_token: string }, now: number): KeptJob[] {
  const rest = list.filter((j) => j.job_id !== job.job_id);
  return [{ job_id: job.job_id, job_token: job.job_token, kept_at: now }, ...rest].slice(0, MAX_KEPT);
}

/** The list without job `jobId`. */
export function withoutJob(list: readonly KeptJob[], jobId: string): KeptJob[] {
  return list.filter((j) => j.job_id !== jobId);
}

export function readKept(store: KeyValueStore): KeptJob[] {
  try {
    return parseKept(store.getItem(KEPT_KEY));
  } catch {
    // storage refused (privacy mode): nothing kept
    return [];
  }
}

export function writeKept(store: KeyValueStore, list: readonly KeptJob[]): void {
  try {
    store.setItem(KEPT_KEY, JSON.stringify(list));
  } catch {
    // storage full or refused: the list is not kept, the page still works
  }
}

export type JobState = "awaiting_input" | "uploading" | "queued" | "running" | "done" | "failed" | "cancelled";

/** What the list offers for a job in `state` (the API's rules: docs/suite.md). */
export function actionsFor(state: JobState): { cancel: boolean; delete: boolean; download: boolean } {
  return {
    // POST /api/jobs/:id/cancel: while it waits for or receives its input, is queued or runs
    cancel: state === "awaiting_input" || state === "uploading" || state === "queued" || state === "running",
    // DELETE /api/jobs/:id: while it waits for its input, or once it ended
    delete: state === "awaiting_input" || state === "done" || state === "failed" || state === "cancelled",
    download: state === "done",
  };
}

/** What a job's status answer means for the list: shown, gone (410: offer forget), or refused (401: wrong token). */
export function lookupOutcome(status: number): "shown" | "gone" | "refused" | "error" {
  if (status >= 200 && status < 300) return "shown";
  if (status === 410 || status === 404) return "gone";
  if (status === 401) return "refused";
  return "error";
}
