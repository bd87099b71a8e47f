import { createHmac, randomBytes } from "node:crypto";
import type { FastifyBaseLogger } from "fastify";
import pino, { type DestinationStream } from "pino";
import type { Config } from "../config.js";

/**
 * What never appears in a log line, at any level: access tokens, licence keys, claim ids, proof
 * keys, payment payloads and signatures, seed phrases, identity tokens, operator and idempotency
 * keys. Requests are logged by route pattern (`/access/:token`), never by raw URL; a path that
 * matched no route keeps only the segments that are static segments of some route, every other
 * segment becomes a short keyed hash (`logRef`). Code that must refer to a secret logs `logRef(it)`.
 */

/** Fields whose value is replaced by "[redacted]" wherever a log line carries them. */
const SECRET_FIELDS = [
  "token",
  "access_token",
  "access_url",
  "identity_token",
  "participant_token",
  "join_code",
  "job_token",
  "webhook_secret",
  "license_key",
  "licence_key",
  "claim_id",
  "proof_key",
  "seed",
  "payment",
  "payload",
  "signature",
  "authorization",
  "secret",
];
const SECRET_HEADERS = [
  "authorization",
  "cookie",
  "x-identity-token",
  "x-payment",
  "payment-signature",
  "stripe-signature",
  "idempotency-key",
];

/** Static paths only (no wildcards): the per-request line stays cheap. */
export const REDACT_PATHS = [
  ...SECRET_FIELDS,
  ...SECRET_FIELDS.map((f) => `body.${f}`),
  ...SECRET_HEADERS.flatMap((h) => [`req.headers["${h}"]`, `headers["${h}"]`]),
];

let refKey: Buffer | string = randomBytes(32);

/** Keys `logRef` (src/secrets.ts derives one from the service keys, so refs survive restarts). */
export function setLogRefKey(key: string): void {
  refKey = key;
}

/**
 * A short keyed hash of a secret, for log lines that must refer to one: the first 12 hex digits
 * of HMAC-SHA256(key, value). Equal values give equal refs; the ref reveals nothing of the value.
 */
export function logRef(value: string): string {
  return createHmac("sha256", refKey).update(value, "utf8").digest("hex").slice(0, 12);
}

/** Static segments of every registered route (filled by RouteTable): the words a logged path may keep. */
export const STATIC_SEGMENTS = new Set<string>();

const MAX_SEGMENTS = 8;

/**
 * The path to log for a request: its route pattern when it matched one, otherwise the path
 * without query string, each segment that is not a known static segment replaced by `~<logRef>`
 * (a mistyped access URL must not put its token in the logs), at most 8 segments.
 */
export function logPath(request: { url?: string; routeOptions?: { url?: string | undefined } }): string {
  const route = request.routeOptions?.url;
  if (route) return route;
  return safePath(request.url ?? "/");
}

export function safePath(url: string): string {
  const clean = url.split(/[?#]/, 1)[0] ?? "";
  const segments = clean.split("/").slice(1);
  const shown = segments.slice(0, MAX_SEGMENTS).map((s) => (s === "" || STATIC_SEGMENTS.has(s) ? s : `~${logRef(s)}`));
  return `/${shown.join("/")}${segments.length > MAX_SEGMENTS ? "/…" : ""}`;
}

/** Replaces Fastify's `req` serializer (which logs the raw URL). */
function reqSerializer(req: {
  method?: string;
  url?: string;
  routeOptions?: { url?: string | undefined };
  id?: string;
}): object {
  return { method: req.method, path: logPath(req), ...(req.id ? { reqId: req.id } : {}) };
}

export interface LoggerOptions {
  /** Where lines go instead of stdout (tests capture them). */
  stream?: DestinationStream | undefined;
}

/**
 * The service logger: JSON lines on stdout, written asynchronously and in batches (no blocking
 * write per line on the request path; pino flushes what is buffered when the process exits).
 * Credentials and payment proofs are redacted wherever they appear.
 */
export function createLogger(config: Config, options: LoggerOptions = {}): FastifyBaseLogger | false {
  if (config.logLevel === "silent") return false;
  // Lines are written in batches of about 8 KiB, and at least once a second, so a busy service
  // does not pay one write system call per line and a quiet one still shows its lines promptly.
  const destination =
    options.stream ?? pino.destination({ dest: 1, sync: false, minLength: 8 * 1024, periodicFlush: 1000 });
  return pino(
    {
      level: config.logLevel,
      serializers: { req: reqSerializer },
      redact: { paths: REDACT_PATHS, censor: "[redacted]" },
    },
    destination,
  ) as FastifyBaseLogger;
}

/** Long hex / base58 / base64 runs: signatures, calldata, transactions, tokens. */
const OPAQUE_RUN = /(0x[0-9a-fA-F]{40,}|[A-Za-z0-9+/_=-]{40,})/g;

/**
 * An error as it may be logged: type, message and stack with every long opaque run (calldata with
 * a payment signature, a serialized transaction, a token) replaced by `~<logRef>`. Library errors
 * (viem, RPC clients) quote their request arguments, which can hold a whole payment proof.
 */
export function safeError(err: unknown): { type: string; message: string; stack?: string } {
  const e = err instanceof Error ? err : new Error(String(err));
  const scrub = (text: string) => text.replace(OPAQUE_RUN, (run) => `~${logRef(run)}`).slice(0, 4000);
  return {
    type: e.name,
    message: scrub(e.message),
    ...(e.stack ? { stack: scrub(e.stack) } : {}),
  };
}
