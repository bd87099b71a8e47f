import type { FastifyBaseLogger } from "fastify";
import pino from "pino";
import type { Config } from "../config.js";

/**
 * The service logger: JSON lines on stdout, written asynchronously and in batches (no blocking
 * write per line on the request path; pino flushes what is buffered when the process exits).
 * Credentials and payment proofs are redacted wherever they appear.
 */
export function createLogger(config: Config): FastifyBaseLogger | false {
  if (config.logLevel === "silent") return false;
  // Lines are written in batches of about 8 KiB, and at least once a second, so a busy service
  // does not pay one write system call per line and a quiet one still shows its lines promptly.
  const destination = pino.destination({ dest: 1, sync: false, minLength: 8 * 1024, periodicFlush: 1000 });
  return pino(
    {
      level: config.logLevel,
      redact: {
        paths: [
          "req.headers.authorization",
          'req.headers["x-identity-token"]',
          'req.headers["x-payment"]',
          'req.headers["payment-signature"]',
          'req.headers["stripe-signature"]',
          "req.headers.cookie",
        ],
        censor: "[redacted]",
      },
    },
    destination,
  ) as FastifyBaseLogger;
}
