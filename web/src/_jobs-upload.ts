/**
 * Resumable upload of a job's input with tus (tus-js-client). The server names the upload by the
 * job (`/api/jobs/uploads/<job_id>`), so resuming needs no browser storage: a HEAD asks the server
 * what it already holds, and when it is the same file (size and fingerprint in the upload's
 * metadata) the upload continues from the server's offset; otherwise a new upload starts over.
 */
import { DetailedError, Upload } from "tus-js-client";
import { bearer, type HeldJob, problemOf } from "./_jobs-api";
import type { ApiError } from "./_lib";

const TUS = "/api/jobs/uploads";
const KiB = 1024;
const MiB = 1024 * KiB;

/** About 20 chunks, 256 KiB to 16 MiB each: fine progress, little to resend after a cut. */
export function chunkBytes(size: number): number {
  return Math.min(16 * MiB, Math.max(256 * KiB, Math.ceil(size / 20)));
}

/** What identifies the file across a reload (ASCII, for tus metadata). */
export function fingerprint(file: File): string {
  return `${file.size}-${file.lastModified}-${encodeURIComponent(file.name).slice(0, 200)}`;
}

function parseMetadata(header: string | null): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (header ?? "").split(",")) {
    const [key, value] = pair.trim().split(" ");
    if (!key) continue;
    try {
      out[key] = value ? atob(value) : "";
    } catch {
      out[key] = "";
    }
  }
  return out;
}

/** The server's offset for this job's upload of `file`, or null when it holds nothing of it. */
export async function serverOffset(job: HeldJob, file: File): Promise<number | null> {
  const res = await fetch(`${TUS}/${encodeURIComponent(job.job_id)}`, {
    method: "HEAD",
    headers: { ...bearer(job), "Tus-Resumable": "1.0.0" },
  });
  if (!res.ok) return null;
  const offset = Number(res.headers.get("Upload-Offset"));
  const length = Number(res.headers.get("Upload-Length"));
  const meta = parseMetadata(res.headers.get("Upload-Metadata"));
  if (!Number.isSafeInteger(offset) || length !== file.size || meta.fingerprint !== fingerprint(file)) return null;
  return offset;
}

export interface UploadHandlers {
  onProgress(sent: number, total: number): void;
  onSuccess(): void;
  onError(err: ApiError | Error): void;
}

export interface Running {
  /** the offset the upload started from (the server's, when resumed) */
  from: number;
  pause(): Promise<void>;
}

/** The problem of a failed tus request (the server answers problem+json), else the error itself. */
function tusError(err: Error | DetailedError): ApiError | Error {
  if (err instanceof DetailedError && err.originalResponse) {
    const res = err.originalResponse;
    return problemOf(res.getStatus(), res.getBody() ?? "");
  }
  return err;
}

export async function startUpload(job: HeldJob, file: File, on: UploadHandlers): Promise<Running> {
  const from = await serverOffset(job, file);
  const upload = new Upload(file, {
    endpoint: new URL(TUS, location.href).href,
    uploadUrl: from === null ? null : new URL(`${TUS}/${encodeURIComponent(job.job_id)}`, location.href).href,
    metadata: { job_id: job.job_id, filename: file.name, fingerprint: fingerprint(file) },
    headers: bearer(job),
    chunkSize: chunkBytes(file.size),
    retryDelays: [0, 1000, 3000, 5000],
    storeFingerprintForResuming: false,
    removeFingerprintOnSuccess: true,
    onProgress: (sent, total) => on.onProgress(sent, total),
    onSuccess: () => on.onSuccess(),
    onError: (err) => on.onError(tusError(err)),
  });
  upload.start();
  return { from: from ?? 0, pause: () => upload.abort() };
}
