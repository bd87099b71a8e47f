import { createHmac, randomBytes } from "node:crypto";

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com, docs/suite.md "Webhooks"):
 * `webhook-signature: v1,<base64 HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<body>")>`,
 * the key being the base64-decoded part of the secret after `whsec_`.
 *
 * A job's secret is derived, not stored: `whsec_` + base64(HMAC-SHA256(server key,
 * "webhook:v1:" + job id)), 32 bytes, like job tokens (`job:v1:`), so a database read alone never
 * gives it, a replayed purchase can answer it again, and the sender re-derives it for every
 * attempt. It is returned with the job when the job is created (never in the job's view, never
 * logged).
 */

export const SECRET_PREFIX = "whsec_";

/** The webhook secret of a job: whsec_<base64 of 32 bytes>. */
export function webhookSecret(serverKey: string, jobId: string): string {
  const key = createHmac("sha256", serverKey).update(`webhook:v1:${jobId}`).digest();
  return `${SECRET_PREFIX}${key.toString("base64")}`;
}

/** The signing key of a secret (the base64-decoded part after `whsec_`). */
export function signingKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, "base64");
}

/** `v1,<base64 signature>` of one message. */
export function signature(secret: string, id: string, timestamp: number, body: string): string {
  const mac = createHmac("sha256", signingKey(secret)).update(`${id}.${timestamp}.${body}`).digest("base64");
  return `v1,${mac}`;
}

/** A fresh message id: msg_<22 base64url characters>. */
export function messageId(): string {
  return `msg_${randomBytes(16).toString("base64url")}`;
}

/** The three Standard Webhooks headers of one attempt (`timestamp` in seconds). */
export function webhookHeaders(secret: string, id: string, timestamp: number, body: string): Record<string, string> {
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": signature(secret, id, timestamp, body),
  };
}
