import os from "node:os";
import path from "node:path";
import { z } from "zod";
import { crashSettingError } from "./ops/crash-points.js";
import { parsePublicKey, parseSigningKey } from "./receipts/service.js";

/**
 * The one typed reading of the environment. Every setting the service reads is
 * declared here; nothing else touches process.env (except the CLI's own flags).
 */

const optionalString = z
  .string()
  .trim()
  .transform((v) => (v === "" ? undefined : v))
  .optional();

const url = (what: string) =>
  optionalString.refine((v) => v === undefined || /^https?:\/\/[^\s]+$/i.test(v), {
    message: `must be an http(s) URL (${what})`,
  });

const evmAddress = optionalString.refine((v) => v === undefined || /^0x[0-9a-fA-F]{40}$/.test(v), {
  message: "must be a 0x-prefixed 20-byte hex address",
});

const base58 = /^[1-9A-HJ-NP-Za-km-z]+$/;
const solanaAddress = optionalString.refine(
  (v) => v === undefined || (base58.test(v) && v.length >= 32 && v.length <= 44),
  { message: "must be a base58 Solana address (32-44 characters)" },
);

const intIn = (min: number, max: number, dflt: number) =>
  optionalString.transform((v, ctx) => {
    if (v === undefined) return dflt;
    if (!/^-?\d+$/.test(v)) {
      ctx.addIssue({ code: "custom", message: `must be an integer between ${min} and ${max}` });
      return z.NEVER;
    }
    const n = Number(v);
    if (n < min || n > max) {
      ctx.addIssue({ code: "custom", message: `must be an integer between ${min} and ${max}` });
      return z.NEVER;
    }
    return n;
  });

/** Like intIn, but undefined when unset (the default is derived from other settings). */
const optionalIntIn = (min: number, max: number) =>
  optionalString.transform((v, ctx) => {
    if (v === undefined) return undefined;
    const n = /^-?\d+$/.test(v) ? Number(v) : Number.NaN;
    if (!(n >= min && n <= max)) {
      ctx.addIssue({ code: "custom", message: `must be an integer between ${min} and ${max}` });
      return z.NEVER;
    }
    return n;
  });

const BOOLEAN = /^(true|false|1|0|yes|no|on|off)$/i;
const optionalBoolean = optionalString.refine((v) => v === undefined || BOOLEAN.test(v), {
  message: "must be true or false",
});
const isTrue = (v: string) => /^(true|1|yes|on)$/i.test(v);

/** A calendar date `YYYY-MM-DD` that exists (2026-02-30 is refused); undefined when unset. */
const isoDate = optionalString.refine(
  (v) => {
    if (v === undefined) return true;
    if (!/^\d{4}-\d{2}-\d{2}$/.test(v)) return false;
    const d = new Date(`${v}T00:00:00Z`);
    return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === v;
  },
  { message: "must be a calendar date YYYY-MM-DD" },
);

/** TRUST_PROXY: true, false, a hop count, or a comma-separated list of proxy addresses / CIDR ranges. */
const PROXY_ENTRY = /^([0-9a-fA-F:.]+(\/\d{1,3})?|loopback|linklocal|uniquelocal)$/;
function trustProxy(v: string | undefined): boolean | number | string {
  if (v === undefined || /^(false|0|no|off)$/i.test(v)) return false;
  if (/^(true|yes|on)$/i.test(v)) return true;
  if (/^\d+$/.test(v)) return Number(v);
  return v
    .split(",")
    .map((p) => p.trim())
    .join(",");
}

export const BASE_MAINNET_USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
export const SOLANA_MAINNET_USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

const envSchema = z.object({
  NODE_ENV: optionalString,
  PORT: intIn(0, 65535, 8080),
  HOST: optionalString.default("127.0.0.1"),
  BASE_URL: url("public base address, e.g. https://lab.example.com"),
  DATA_DIR: optionalString.default("./data"),
  DATABASE_URL: optionalString.refine((v) => v === undefined || /^postgres(ql)?:\/\//.test(v), {
    message: "must be a postgres:// or postgresql:// connection URL",
  }),
  DATABASE_STATEMENT_TIMEOUT_SECONDS: intIn(0, 86_400, 30),
  TUS_LOCK_CONNECTIONS: intIn(1, 1000, 20),
  ADMIN_TOKEN: optionalString.refine((v) => v === undefined || v.length >= 16, {
    message: "must be at least 16 characters",
  }),
  ACCESS_TOKEN_SECRET: optionalString.refine((v) => v === undefined || v.length >= 32, {
    message: "must be at least 32 characters",
  }),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).optional().default("info"),
  BODY_LIMIT_BYTES: intIn(1024, 64 * 1024 * 1024, 1024 * 1024),
  // hostile input (docs/limits.md): timeouts, proxies, rate limits
  REQUEST_TIMEOUT_SECONDS: intIn(1, 3600, 30),
  CONNECTION_TIMEOUT_SECONDS: optionalIntIn(1, 3600),
  TRUST_PROXY: optionalString.refine(
    (v) =>
      v === undefined ||
      BOOLEAN.test(v) ||
      /^\d{1,2}$/.test(v) ||
      v.split(",").every((p) => PROXY_ENTRY.test(p.trim())),
    { message: "must be true, false, a hop count, or a comma-separated list of addresses/CIDR ranges" },
  ),
  RATE_LIMIT_ENABLED: optionalBoolean,
  RATE_LIMIT_PAID_PER_MINUTE: intIn(1, 1_000_000, 60),
  RATE_LIMIT_CHECKOUT_PER_MINUTE: intIn(1, 1_000_000, 10),
  RATE_LIMIT_JOIN_PER_MINUTE: intIn(1, 1_000_000, 5),
  RATE_LIMIT_CODEC_PER_MINUTE: intIn(1, 1_000_000, 60),
  CONTACT_EMAIL: optionalString.refine((v) => v === undefined || z.email().safeParse(v).success, {
    message: "must be an e-mail address",
  }),

  // x402 rails
  PAY_TO_BASE: evmAddress,
  PAY_TO_SOLANA: solanaAddress,
  PAY_TO_BTC: optionalString,
  BASE_USDC_ADDRESS: evmAddress,
  SOLANA_USDC_MINT: solanaAddress,
  BASE_RPC_URL: url("Base JSON-RPC endpoint"),
  BASE_CHAIN_ID: intIn(1, 2 ** 31 - 1, 8453),
  SOLANA_RPC_URL: url("Solana JSON-RPC endpoint"),
  X402_EVM_FACILITATOR_KEY: optionalString.refine((v) => v === undefined || /^0x[0-9a-fA-F]{64}$/.test(v), {
    message: "must be a 0x-prefixed 32-byte hex private key",
  }),
  X402_SVM_FEE_PAYER_KEY: optionalString.refine((v) => v === undefined || base58.test(v), {
    message: "must be a base58-encoded 64-byte secret key",
  }),
  X402_FACILITATOR_URL: url("hosted x402 facilitator"),
  X402_MIN_CONFIRMATIONS: intIn(0, 1000, 1),
  X402_TX_MAX_AGE_SECONDS: intIn(60, 30 * 24 * 3600, 24 * 3600),
  X402_SETTLE_TIMEOUT_SECONDS: intIn(1, 300, 25),
  // F14: each JSON-RPC call the service makes itself (docs/limits.md "Timeouts")
  X402_RPC_TIMEOUT_SECONDS: intIn(1, 120, 10),
  X402_SVM_MAX_COMPUTE_UNITS: intIn(1_000, 1_400_000, 40_000),
  X402_SVM_MAX_COMPUTE_UNIT_PRICE: intIn(0, 5_000_000, 500_000),
  // refunds (issue #22 item 4, src/refunds): wallets that send on-chain refunds, buyer window, policy
  REFUND_EVM_KEY: optionalString.refine((v) => v === undefined || /^0x[0-9a-fA-F]{64}$/.test(v), {
    message: "must be a 0x-prefixed 32-byte hex private key",
  }),
  REFUND_SVM_KEY: optionalString.refine((v) => v === undefined || base58.test(v), {
    message: "must be a base58-encoded 64-byte secret key",
  }),
  REFUND_WINDOW_HOURS: intIn(0, 24 * 365, 72),
  REFUND_AUTO_APPROVE_HOURS: intIn(0, 24 * 365, 0),

  // card rails (Stripe)
  STRIPE_SECRET_KEY: optionalString.refine((v) => v === undefined || /^(sk|rk)_(test|live)_[A-Za-z0-9]+$/.test(v), {
    message: "must be a Stripe secret or restricted key (sk_test_…, sk_live_…, rk_…)",
  }),
  STRIPE_WEBHOOK_SECRET: optionalString.refine((v) => v === undefined || /^whsec_[A-Za-z0-9+/=_-]+$/.test(v), {
    message: "must be a Stripe webhook signing secret (whsec_…)",
  }),
  STRIPE_API_BASE: url("Stripe API host, e.g. http://127.0.0.1:12111"),
  STRIPE_PAYMENT_METHODS: optionalString,

  // codec endpoints (src/engine) and identity tokens (src/identity)
  CODEC_BODY_LIMIT_BYTES: intIn(64 * 1024, 256 * 1024 * 1024, 8 * 1024 * 1024),
  CODEC_SLOW_LIMIT_BYTES: intIn(1024, 64 * 1024 * 1024, 128 * 1024),
  CODEC_OUTPUT_LIMIT_BYTES: intIn(1024, 1024 * 1024 * 1024, 32 * 1024 * 1024),
  CODEC_SLOW_CONCURRENCY: intIn(1, 64, 2),
  CODEC_DECODE_CONCURRENCY: intIn(1, 64, 2),
  CODEC_MAX_RATIO: intIn(16, 1_000_000_000, 4096),
  IDENTITY_TOKEN_SECRET: optionalString.refine((v) => v === undefined || v.length >= 32, {
    message: "must be at least 32 characters",
  }),
  IDENTITY_TOKEN_TTL_DAYS: intIn(1, 365, 30),
  // identities issued per client IP per UTC day (0: no daily limit); default 3, or 0 under NODE_ENV=test
  IDENTITY_ISSUE_PER_IP_PER_DAY: optionalIntIn(0, 1_000_000),

  // service keys (src/secrets.ts): ACCESS_TOKEN_SECRET and IDENTITY_TOKEN_SECRET above, and this one
  DATASET_PRINT_SECRET: optionalString.refine((v) => v === undefined || v.length >= 32, {
    message: "must be at least 32 characters",
  }),
  // signed receipts (src/receipts, docs/receipts.md): the Ed25519 key (checked in loadConfig) and retired public keys
  RECEIPT_SIGNING_KEY: optionalString,
  RECEIPT_RETIRED_KEYS: optionalString,

  // suite quotes (src/jobs/quotes/service.ts)
  SUITE_QUOTE_TTL_SECONDS: intIn(60, 7 * 24 * 3600, 1800),
  // free suite work (src/jobs/quotes/service.ts, src/jobs/free-admission.ts; docs/limits.md "Free suite work")
  SUITE_ANON_FREE_BYTES_PER_DAY: intIn(0, 100_000_000_000, 1_000_000_000),
  SUITE_FREE_QUEUE_BYTES: intIn(1_000_000, 1_000_000_000_000_000, 20_000_000_000),
  SUITE_FREE_RUNNING_PER_CALLER: intIn(1, 100, 1),
  SUITE_FREE_QUEUED_PER_CALLER: intIn(1, 1000, 3),

  // suite job data (src/jobs/storage): S3-compatible object storage when S3_BUCKET is set, else DATA_DIR/jobs
  S3_ENDPOINT: url("S3-compatible endpoint, e.g. http://127.0.0.1:9000; unset for AWS S3"),
  S3_REGION: optionalString.refine((v) => v === undefined || /^[a-z0-9-]{1,64}$/.test(v), {
    message: "must be a region name, e.g. us-east-1",
  }),
  S3_BUCKET: optionalString.refine((v) => v === undefined || /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(v), {
    message: "must be a bucket name (3-63 characters: a-z, 0-9, dots and hyphens)",
  }),
  S3_ACCESS_KEY_ID: optionalString,
  S3_SECRET_ACCESS_KEY: optionalString,
  S3_FORCE_PATH_STYLE: optionalBoolean,

  // suite-job execution: segments, workers and their queue (docs/suite.md "Queue and workers")
  JOB_SEGMENT_BYTES: intIn(64 * 1024, 4 * 1024 * 1024 * 1024, 64 * 1024 * 1024),
  JOB_SEGMENT_ATTEMPTS: intIn(1, 20, 3),
  JOB_LEASE_SECONDS: intIn(2, 600, 20),
  JOB_WORKER_IN_SERVICE: optionalBoolean,
  JOB_WORKER_THREADS: optionalIntIn(1, 64),
  JOB_WORKER_CONCURRENCY: intIn(1, 64, 2),
  // suite-job data: retention sweep and disk floor (docs/suite.md "Retention", docs/limits.md)
  JOB_RETENTION_HOURS: intIn(1, 24 * 365, 72),
  JOB_ABANDONED_UPLOAD_HOURS: intIn(1, 24 * 365, 24),
  JOB_SWEEP_INTERVAL_SECONDS: intIn(10, 24 * 3600, 600),
  JOB_MIN_FREE_DISK_BYTES: intIn(0, Number.MAX_SAFE_INTEGER, 1024 * 1024 * 1024),
  // an input in parts (PUT with Content-Range: docs/suite.md "Several upload streams", docs/limits.md)
  JOB_UPLOAD_MAX_PARTS: intIn(1, 100_000, 10_000),
  JOB_UPLOAD_MAX_STREAMS: intIn(1, 256, 16),
  JOB_UPLOAD_MIN_PART_BYTES: intIn(1, 1024 * 1024 * 1024, 1024 * 1024),
  // signed job webhooks (src/webhooks, docs/suite.md "Webhooks", docs/limits.md)
  WEBHOOK_ALLOW_PRIVATE: optionalBoolean,
  WEBHOOK_RETRY_HOURS: intIn(24, 24 * 30, 24),
  WEBHOOK_TIMEOUT_SECONDS: intIn(1, 60, 10),
  WEBHOOK_POLL_SECONDS: intIn(0, 3600, 5),
  JOB_OUTPUT_URL_TTL_SECONDS: intIn(10, 3600, 300),

  // olympiad season and sponsor (src/olympiad/season.ts, docs/olympiad.md)
  OLYMPIAD_SEASON_YEAR: intIn(2000, 9999, 2026),
  OLYMPIAD_SEASON_STARTS: isoDate,
  OLYMPIAD_SEASON_ENDS: isoDate,
  OLYMPIAD_REGISTRATION_OPENS: isoDate,
  OLYMPIAD_SPONSOR_NAME: optionalString.refine((v) => v === undefined || v.length <= 80, {
    message: "must be at most 80 characters",
  }),
  OLYMPIAD_SPONSOR_DOMAIN: optionalString.refine(
    (v) =>
      v === undefined ||
      /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i.test(v),
    { message: "must be a domain name, e.g. lab.example.com" },
  ),
  OLYMPIAD_SPONSOR_URL: url("sponsor's site, e.g. https://lab.example.com"),
  OLYMPIAD_SPONSOR_LABEL: optionalString.refine((v) => v === undefined || v.length <= 120, {
    message: "must be at most 120 characters",
  }),
  OLYMPIAD_COMMUNITY_URL: url("the olympiad's public repository, e.g. https://github.com/org/olympiad"),
  // olympiad governance caps and agent-id proofs (docs/olympiad-governance.md, docs/limits.md); 0 = no cap
  OLYMPIAD_MAX_OPEN_PROPOSALS: intIn(0, 1_000_000, 50),
  OLYMPIAD_MAX_OPEN_PROPOSALS_PER_TEAM: intIn(0, 1_000_000, 3),
  OLYMPIAD_MAX_OPEN_PROPOSALS_PER_PARTICIPANT: intIn(0, 1_000_000, 3),
  OLYMPIAD_AGENT_CHALLENGE_TTL_SECONDS: intIn(30, 3600, 300),
  OLYMPIAD_REGISTRATIONS_PER_IP_PER_DAY: optionalIntIn(0, 1_000_000),
  // scored olympiad events (docs/olympiad-tasks.md, docs/limits.md)
  OLYMPIAD_SUBMISSION_MAX_BYTES: intIn(1024, 8 * 1024 * 1024, 512 * 1024),
  OLYMPIAD_SCORING_POLL_SECONDS: optionalIntIn(0, 3600),
});

export type Env = z.infer<typeof envSchema>;

export interface Config {
  env: "production" | "development" | "test";
  port: number;
  host: string;
  baseUrl: string;
  dataDir: string;
  databaseUrl: string | undefined;
  /** PostgreSQL: a statement running longer is cancelled (503 database_timeout); 0 = no limit. */
  statementTimeoutSeconds: number;
  /** PostgreSQL: tus requests holding or awaiting an upload's lock at once per instance (one connection each). */
  tusLockConnections: number;
  adminToken: string | undefined;
  accessTokenSecret: string | undefined;
  logLevel: Env["LOG_LEVEL"];
  bodyLimitBytes: number;
  /** Timeouts and proxy trust of the HTTP server (docs/limits.md). */
  http: {
    /** Whole request (headers and body) must arrive within this; else 408 and the connection is closed. */
    requestTimeoutSeconds: number;
    /** A socket with no traffic either way for this long is closed (longer than any handler's wait). */
    connectionTimeoutSeconds: number;
    /** Fastify `trustProxy`: which proxies' X-Forwarded-For to believe (the client IP of rate limits). */
    trustProxy: boolean | number | string;
  };
  /** Per-IP request limits of the expensive or abusable routes (src/http/rate-limit.ts). */
  rateLimit: {
    enabled: boolean;
    perMinute: { paid: number; checkout: number; join: number; codec: number };
  };
  contactEmail: string | undefined;
  payTo: { base: string | undefined; solana: string | undefined; btc: string | undefined };
  usdc: { base: string; solana: string };
  x402: {
    baseRpcUrl: string | undefined;
    baseChainId: number;
    solanaRpcUrl: string | undefined;
    evmFacilitatorKey: string | undefined;
    svmFeePayerKey: string | undefined;
    facilitatorUrl: string | undefined;
    minConfirmations: number;
    txMaxAgeSeconds: number;
    /** Longest wait for a settlement before answering 202 (outcome unknown, reconciled later). */
    settleTimeoutSeconds: number;
    /** Longest wait for one JSON-RPC call (Solana, Base) or a hosted facilitator's /supported. */
    rpcTimeoutSeconds: number;
    /** Solana: largest SetComputeUnitLimit accepted (bounds what our fee payer can be charged). */
    svmMaxComputeUnits: number;
    /** Solana: largest SetComputeUnitPrice accepted, micro-lamports per compute unit. */
    svmMaxComputeUnitPrice: number;
  };
  /** On-chain refunds (src/refunds): without a chain's key its refunds are recorded as owed. */
  refunds: {
    evmKey: string | undefined;
    svmKey: string | undefined;
    /** A buyer may request a refund this long after the order (0 = no buyer requests). */
    windowHours: number;
    /** Buyer requests of unused entitlements this young are approved without an operator (0 = off). */
    autoApproveHours: number;
  };
  stripe: {
    secretKey: string | undefined;
    webhookSecret: string | undefined;
    apiBase: string | undefined;
    paymentMethods: string[] | undefined;
  };
  codec: {
    /** Body limit of the codec routes (/api/omni, /api/web-codec, /api/compress, …). */
    bodyLimitBytes: number;
    /** Largest input for the slow levels (max, balanced), bench and process, and largest output of a context-mixing container. */
    slowLimitBytes: number;
    /** Largest decompressed output of a container whose chambers all decode fast. */
    outputLimitBytes: number;
    /** Slow codec requests (levels max/balanced, bench, process, context-mixing decodes) admitted at once; more get 503 + Retry-After. */
    slowConcurrency: number;
    /** Decompressions (every chamber, classic streams) admitted at once; more get 503 + Retry-After. */
    decodeConcurrency: number;
    /** Largest output / container ratio over HTTP for outputs above 1 MiB (413 codec_ratio_exceeded). */
    maxRatio: number;
  };
  identity: {
    /** Key of the identity-token hash; when unset (not in production) a generated one in DATA_DIR/secrets.json. */
    tokenSecret: string | undefined;
    tokenTtlDays: number;
    /** Identities issued per client IP (an IPv6 /64) per UTC day; 0: no daily limit (429 identity_daily_limit). */
    issuePerIpPerDay: number;
  };
  /** Static hosted payment links, keyed by canonical sku (from PAYMENT_LINK_<SKU>). */
  paymentLinks: Record<string, string>;
  /** Stripe payment link ids (plink_…) keyed by canonical sku (from PAYMENT_LINK_ID_<SKU>): matches link purchases in webhooks. */
  paymentLinkIds: Record<string, string>;
  /** Key of dataset prints; when unset (not in production) a generated one in DATA_DIR/secrets.json (src/secrets.ts). */
  datasetPrintSecret: string | undefined;
  /** Signed receipts (docs/receipts.md). */
  receipts: {
    /** RECEIPT_SIGNING_KEY; when unset (not in production) a generated one in DATA_DIR/secrets.json. */
    signingKey: string | undefined;
    /** RECEIPT_RETIRED_KEYS: public keys of earlier signing keys, still in the JWKS. */
    retiredKeys: string[];
  };
  /** Object storage of suite job data (S3_*); undefined: files under DATA_DIR/jobs (src/jobs/storage). */
  s3: S3Settings | undefined;
  /** Suite quotes (src/jobs/quotes/service.ts). */
  suiteQuotes: {
    /** An open quote can be paid for this long; then 410 quote_expired. */
    ttlSeconds: number;
  };
  /** Free suite work (issue #21: the free cap belongs to a caller, not to a job; docs/limits.md). */
  suiteFree: {
    /** Free bytes per client IP per UTC day for callers without a join-work identity; 0: none. */
    anonBytesPerDay: number;
    /** Free bytes queued (waiting for input or a worker) by all callers at most (503 free_tier_busy). */
    queueBytes: number;
    /** Running free jobs per caller (identity, else IP). */
    runningPerCaller: number;
    /** Queued free jobs per caller (identity, else IP): more → 429 free_jobs_limit. */
    queuedPerCaller: number;
  };
  /** Suite-job execution (src/jobs/runner.ts, src/jobs/execution.ts, docs/suite.md "Queue and workers"). */
  jobRunner: {
    /** Input bytes per segment (the unit of retry and of spreading over workers). */
    segmentBytes: number;
    /** Starts of a segment (a start whose worker died included) before it fails its job. */
    segmentAttempts: number;
    /** Lease of a running segment: a killed worker's segment moves on within lease × 1.5. */
    leaseSeconds: number;
    /** The HTTP service runs segments itself (default: yes on SQLite, no with DATABASE_URL). */
    workerInService: boolean;
    /** Codec threads per worker process (piscina pool). */
    workerThreads: number;
    /** Segments one worker process runs at once. */
    workerConcurrency: number;
  };
  /** Suite-job data: how long it is kept, and the disk floor for uploads (src/jobs/retention.ts). */
  jobData: {
    /** A job's input and outputs are deleted this long after it ended (done, failed, cancelled). */
    retentionHours: number;
    /** An upload with no progress for this long is abandoned: its partial data deleted, the job expired. */
    abandonedUploadHours: number;
    /** The retention sweep runs this often (one sweeper at a time on PostgreSQL). */
    sweepIntervalSeconds: number;
    /** New uploads: 507 while the free disk under DATA_DIR is below this (0: no floor). */
    minFreeDiskBytes: number;
    /** `GET /api/jobs/:id/output?redirect=1` on S3: the presigned URL is valid this long. */
    outputUrlTtlSeconds: number;
    /** An input sent in parts (Content-Range): parts per upload, parts being received at once, smallest part but the last. */
    uploadParts: { maxParts: number; maxStreams: number; minPartBytes: number };
  };
  /** Signed job webhooks (src/webhooks, docs/suite.md "Webhooks"). */
  webhooks: {
    /** http and non-public target addresses allowed (a receiver on this machine or network; tests). */
    allowPrivate: boolean;
    /** A delivery is retried (exponential backoff) for this long after its event was recorded. */
    retryHours: number;
    /** One attempt (resolve, connect, answer) ends after this long. */
    timeoutSeconds: number;
    /** The outbox is swept and due deliveries sent this often by the web service (0: not in this process). */
    pollSeconds: number;
  };
  /** The olympiad's season and sponsor (src/olympiad/season.ts, docs/olympiad.md). */
  olympiad: {
    season: {
      year: number;
      /** YYYY-MM-DD (UTC): first day of the season; default January 1 of the season year. */
      starts: string;
      /** YYYY-MM-DD (UTC): last day of the season, or null (open-ended). */
      ends: string | null;
      /** YYYY-MM-DD (UTC): the day open registration begins (entries count from then), or null (not announced). */
      registrationOpens: string | null;
    };
    sponsor: { name: string; domain: string; url: string; label: string };
    /** The public repository where the community proposes and discusses (issues, contributing), or null. */
    communityUrl: string | null;
  };
  /** Olympiad governance caps (0 = no cap) and agent-id proofs (docs/olympiad-governance.md). */
  olympiadGovernance: {
    maxOpenProposals: number;
    maxOpenProposalsPerTeam: number;
    maxOpenProposalsPerParticipant: number;
    agentChallengeTtlSeconds: number;
    /** olympiad registrations per client IP (IPv6: /64) per UTC day; 0 = no daily limit */
    registrationsPerIpPerDay: number;
  };
  /** Scored olympiad events (src/olympiad/tasks, docs/olympiad-tasks.md). */
  olympiadTasks: {
    /** ceiling of any task's max_file_bytes (a submission's or public file's size); also of the answer key */
    submissionMaxBytes: number;
    /** how often the scoring sweep runs (pending submissions, due closes); 0 = not in this process */
    scoringPollSeconds: number;
  };
}

export class ConfigError extends Error {
  constructor(
    readonly setting: string,
    readonly problem: string,
  ) {
    super(`invalid setting ${setting}: ${problem}`);
    this.name = "ConfigError";
  }
}

export interface S3Settings {
  /** undefined: AWS S3 itself */
  endpoint: string | undefined;
  region: string;
  bucket: string;
  /** undefined (both unset): the AWS SDK's default credential chain (AWS_* variables, instance roles) */
  credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
  forcePathStyle: boolean;
}

const S3_SETTINGS = [
  "S3_ENDPOINT",
  "S3_REGION",
  "S3_BUCKET",
  "S3_ACCESS_KEY_ID",
  "S3_SECRET_ACCESS_KEY",
  "S3_FORCE_PATH_STYLE",
] as const;

/**
 * S3_*: all unset → files under DATA_DIR; S3_BUCKET set → S3. A block given by halves refuses to
 * start, naming the missing setting: job data must not land on one machine's disk by accident.
 */
/** What a production start without RECEIPT_SIGNING_KEY is told (src/secrets.ts says the same). */
export const RECEIPT_KEY_PROBLEM =
  "required when NODE_ENV=production: an Ed25519 private key, a base64url 32-byte seed or a PKCS#8 PEM (docs/receipts.md)";

/** RECEIPT_RETIRED_KEYS: comma-separated Ed25519 public keys (base64url `x`, or SPKI PEM). */
function retiredReceiptKeys(value: string | undefined): string[] {
  const keys = (value ?? "")
    .split(",")
    .map((k) => k.trim())
    .filter((k) => k.length > 0);
  keys.forEach((k, i) => {
    try {
      parsePublicKey(k);
    } catch (err) {
      throw new ConfigError("RECEIPT_RETIRED_KEYS", `key ${i + 1} ${(err as Error).message}`);
    }
  });
  return keys;
}

function s3Settings(e: Env): S3Settings | undefined {
  const given = S3_SETTINGS.filter((name) => e[name] !== undefined);
  if (given.length === 0) return undefined;
  if (e.S3_BUCKET === undefined) {
    throw new ConfigError("S3_BUCKET", `required when other S3_* settings are given (${given.join(", ")})`);
  }
  if ((e.S3_ACCESS_KEY_ID === undefined) !== (e.S3_SECRET_ACCESS_KEY === undefined)) {
    const missing = e.S3_ACCESS_KEY_ID === undefined ? "S3_ACCESS_KEY_ID" : "S3_SECRET_ACCESS_KEY";
    throw new ConfigError(
      missing,
      "required with its pair (S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY: both, or neither for the AWS default credentials)",
    );
  }
  return {
    endpoint: e.S3_ENDPOINT?.replace(/\/+$/, ""),
    region: e.S3_REGION ?? "us-east-1",
    bucket: e.S3_BUCKET,
    credentials:
      e.S3_ACCESS_KEY_ID !== undefined && e.S3_SECRET_ACCESS_KEY !== undefined
        ? { accessKeyId: e.S3_ACCESS_KEY_ID, secretAccessKey: e.S3_SECRET_ACCESS_KEY }
        : undefined,
    // S3-compatible servers (MinIO, s3rver, …) usually need path-style addressing; AWS does not.
    forcePathStyle: e.S3_FORCE_PATH_STYLE === undefined ? e.S3_ENDPOINT !== undefined : isTrue(e.S3_FORCE_PATH_STYLE),
  };
}

const PAYMENT_LINK_PREFIX = "PAYMENT_LINK_";
const PAYMENT_LINK_ID_PREFIX = "PAYMENT_LINK_ID_";

/** PAYMENT_LINK_ZRW_PRO → zrw-pro */
export function paymentLinkSku(envName: string): string {
  return envName.slice(PAYMENT_LINK_PREFIX.length).toLowerCase().replace(/_/g, "-");
}

/** Reads and validates the environment. Throws ConfigError naming the first bad setting. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(String(issue?.path[0] ?? "environment"), issue?.message ?? "invalid");
  }
  const e = parsed.data;
  const paymentLinks: Record<string, string> = {};
  const paymentLinkIds: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith(PAYMENT_LINK_PREFIX) || value === undefined || value.trim() === "") continue;
    if (name.startsWith(PAYMENT_LINK_ID_PREFIX)) {
      if (!/^plink_[A-Za-z0-9]+$/.test(value.trim()))
        throw new ConfigError(name, "must be a Stripe payment link id (plink_…)");
      paymentLinkIds[name.slice(PAYMENT_LINK_ID_PREFIX.length).toLowerCase().replace(/_/g, "-")] = value.trim();
      continue;
    }
    if (!/^https:\/\/[^\s]+$/i.test(value.trim())) {
      throw new ConfigError(name, "must be an https URL of a hosted payment link");
    }
    paymentLinks[paymentLinkSku(name)] = value.trim();
  }
  if (e.STRIPE_PAYMENT_METHODS !== undefined && !/^[a-z_]+(,[a-z_]+)*$/.test(e.STRIPE_PAYMENT_METHODS)) {
    throw new ConfigError("STRIPE_PAYMENT_METHODS", "must be a comma-separated list of payment method ids");
  }
  const nodeEnv = e.NODE_ENV === "production" || e.NODE_ENV === "test" ? e.NODE_ENV : "development";
  // F14: fault-test crash points (src/ops/crash-points.ts) are refused in production.
  const crashError = crashSettingError(env);
  if (crashError) throw new ConfigError("LABPHI_CRASH_AT", crashError);
  // Service keys: production takes them from the environment only (src/secrets.ts, docs/operations.md).
  if (nodeEnv === "production") {
    for (const name of ["ACCESS_TOKEN_SECRET", "IDENTITY_TOKEN_SECRET", "DATASET_PRINT_SECRET"] as const) {
      if (e[name] === undefined) {
        throw new ConfigError(
          name,
          "required when NODE_ENV=production (at least 32 characters, e.g. `openssl rand -base64 48`)",
        );
      }
    }
    if (e.RECEIPT_SIGNING_KEY === undefined) throw new ConfigError("RECEIPT_SIGNING_KEY", RECEIPT_KEY_PROBLEM);
  }
  if (e.RECEIPT_SIGNING_KEY !== undefined) {
    try {
      parseSigningKey(e.RECEIPT_SIGNING_KEY);
    } catch (err) {
      throw new ConfigError("RECEIPT_SIGNING_KEY", (err as Error).message);
    }
  }
  if (
    e.CONNECTION_TIMEOUT_SECONDS !== undefined &&
    e.CONNECTION_TIMEOUT_SECONDS <= Math.max(e.REQUEST_TIMEOUT_SECONDS, e.X402_SETTLE_TIMEOUT_SECONDS)
  ) {
    throw new ConfigError(
      "CONNECTION_TIMEOUT_SECONDS",
      "must be longer than REQUEST_TIMEOUT_SECONDS and X402_SETTLE_TIMEOUT_SECONDS (an idle socket is closed)",
    );
  }
  const host = e.HOST ?? "127.0.0.1";
  const urlHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
  const baseUrl = (e.BASE_URL ?? `http://${urlHost}:${e.PORT}`).replace(/\/+$/, "");
  return {
    env: nodeEnv,
    port: e.PORT,
    host,
    baseUrl,
    dataDir: path.resolve(e.DATA_DIR ?? "./data"),
    databaseUrl: e.DATABASE_URL,
    statementTimeoutSeconds: e.DATABASE_STATEMENT_TIMEOUT_SECONDS,
    tusLockConnections: e.TUS_LOCK_CONNECTIONS,
    adminToken: e.ADMIN_TOKEN,
    accessTokenSecret: e.ACCESS_TOKEN_SECRET,
    logLevel: e.LOG_LEVEL,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    http: {
      requestTimeoutSeconds: e.REQUEST_TIMEOUT_SECONDS,
      // By default longer than the longest wait of a handler (an x402 settlement) plus slack.
      connectionTimeoutSeconds: e.CONNECTION_TIMEOUT_SECONDS ?? Math.max(75, e.X402_SETTLE_TIMEOUT_SECONDS + 30),
      trustProxy: trustProxy(e.TRUST_PROXY),
    },
    rateLimit: {
      // Off under NODE_ENV=test unless a test turns it on; on everywhere else unless turned off.
      enabled: e.RATE_LIMIT_ENABLED === undefined ? nodeEnv !== "test" : isTrue(e.RATE_LIMIT_ENABLED),
      perMinute: {
        paid: e.RATE_LIMIT_PAID_PER_MINUTE,
        checkout: e.RATE_LIMIT_CHECKOUT_PER_MINUTE,
        join: e.RATE_LIMIT_JOIN_PER_MINUTE,
        codec: e.RATE_LIMIT_CODEC_PER_MINUTE,
      },
    },
    contactEmail: e.CONTACT_EMAIL,
    payTo: { base: e.PAY_TO_BASE, solana: e.PAY_TO_SOLANA, btc: e.PAY_TO_BTC },
    usdc: { base: e.BASE_USDC_ADDRESS ?? BASE_MAINNET_USDC, solana: e.SOLANA_USDC_MINT ?? SOLANA_MAINNET_USDC },
    x402: {
      baseRpcUrl: e.BASE_RPC_URL,
      baseChainId: e.BASE_CHAIN_ID,
      solanaRpcUrl: e.SOLANA_RPC_URL,
      evmFacilitatorKey: e.X402_EVM_FACILITATOR_KEY,
      svmFeePayerKey: e.X402_SVM_FEE_PAYER_KEY,
      facilitatorUrl: e.X402_FACILITATOR_URL,
      minConfirmations: e.X402_MIN_CONFIRMATIONS,
      txMaxAgeSeconds: e.X402_TX_MAX_AGE_SECONDS,
      settleTimeoutSeconds: e.X402_SETTLE_TIMEOUT_SECONDS,
      rpcTimeoutSeconds: e.X402_RPC_TIMEOUT_SECONDS,
      svmMaxComputeUnits: e.X402_SVM_MAX_COMPUTE_UNITS,
      svmMaxComputeUnitPrice: e.X402_SVM_MAX_COMPUTE_UNIT_PRICE,
    },
    refunds: {
      evmKey: e.REFUND_EVM_KEY,
      svmKey: e.REFUND_SVM_KEY,
      windowHours: e.REFUND_WINDOW_HOURS,
      autoApproveHours: e.REFUND_AUTO_APPROVE_HOURS,
    },
    stripe: {
      secretKey: e.STRIPE_SECRET_KEY,
      webhookSecret: e.STRIPE_WEBHOOK_SECRET,
      apiBase: e.STRIPE_API_BASE,
      paymentMethods: e.STRIPE_PAYMENT_METHODS?.split(","),
    },
    codec: {
      bodyLimitBytes: e.CODEC_BODY_LIMIT_BYTES,
      slowLimitBytes: e.CODEC_SLOW_LIMIT_BYTES,
      outputLimitBytes: e.CODEC_OUTPUT_LIMIT_BYTES,
      slowConcurrency: e.CODEC_SLOW_CONCURRENCY,
      decodeConcurrency: e.CODEC_DECODE_CONCURRENCY,
      maxRatio: e.CODEC_MAX_RATIO,
    },
    identity: {
      tokenSecret: e.IDENTITY_TOKEN_SECRET,
      tokenTtlDays: e.IDENTITY_TOKEN_TTL_DAYS,
      // Off under NODE_ENV=test unless a test sets it (tests issue many identities from one address).
      issuePerIpPerDay: e.IDENTITY_ISSUE_PER_IP_PER_DAY ?? (nodeEnv === "test" ? 0 : 3),
    },
    paymentLinks,
    paymentLinkIds,
    datasetPrintSecret: e.DATASET_PRINT_SECRET,
    receipts: { signingKey: e.RECEIPT_SIGNING_KEY, retiredKeys: retiredReceiptKeys(e.RECEIPT_RETIRED_KEYS) },
    s3: s3Settings(e),
    suiteQuotes: { ttlSeconds: e.SUITE_QUOTE_TTL_SECONDS },
    suiteFree: {
      anonBytesPerDay: e.SUITE_ANON_FREE_BYTES_PER_DAY,
      queueBytes: e.SUITE_FREE_QUEUE_BYTES,
      runningPerCaller: e.SUITE_FREE_RUNNING_PER_CALLER,
      queuedPerCaller: e.SUITE_FREE_QUEUED_PER_CALLER,
    },
    jobRunner: {
      segmentBytes: e.JOB_SEGMENT_BYTES,
      segmentAttempts: e.JOB_SEGMENT_ATTEMPTS,
      leaseSeconds: e.JOB_LEASE_SECONDS,
      workerInService:
        e.JOB_WORKER_IN_SERVICE === undefined ? e.DATABASE_URL === undefined : isTrue(e.JOB_WORKER_IN_SERVICE),
      workerThreads: e.JOB_WORKER_THREADS ?? Math.max(1, Math.min(4, os.availableParallelism())),
      workerConcurrency: e.JOB_WORKER_CONCURRENCY,
    },
    jobData: {
      retentionHours: e.JOB_RETENTION_HOURS,
      abandonedUploadHours: e.JOB_ABANDONED_UPLOAD_HOURS,
      sweepIntervalSeconds: e.JOB_SWEEP_INTERVAL_SECONDS,
      minFreeDiskBytes: e.JOB_MIN_FREE_DISK_BYTES,
      outputUrlTtlSeconds: e.JOB_OUTPUT_URL_TTL_SECONDS,
      uploadParts: {
        maxParts: e.JOB_UPLOAD_MAX_PARTS,
        maxStreams: e.JOB_UPLOAD_MAX_STREAMS,
        minPartBytes: e.JOB_UPLOAD_MIN_PART_BYTES,
      },
    },
    webhooks: {
      allowPrivate: e.WEBHOOK_ALLOW_PRIVATE !== undefined && isTrue(e.WEBHOOK_ALLOW_PRIVATE),
      retryHours: e.WEBHOOK_RETRY_HOURS,
      timeoutSeconds: e.WEBHOOK_TIMEOUT_SECONDS,
      pollSeconds: e.WEBHOOK_POLL_SECONDS,
    },
    olympiad: olympiadSettings(e, baseUrl),
    olympiadGovernance: {
      maxOpenProposals: e.OLYMPIAD_MAX_OPEN_PROPOSALS,
      maxOpenProposalsPerTeam: e.OLYMPIAD_MAX_OPEN_PROPOSALS_PER_TEAM,
      maxOpenProposalsPerParticipant: e.OLYMPIAD_MAX_OPEN_PROPOSALS_PER_PARTICIPANT,
      agentChallengeTtlSeconds: e.OLYMPIAD_AGENT_CHALLENGE_TTL_SECONDS,
      registrationsPerIpPerDay: e.OLYMPIAD_REGISTRATIONS_PER_IP_PER_DAY ?? (nodeEnv === "test" ? 0 : 10),
    },
    olympiadTasks: {
      submissionMaxBytes: e.OLYMPIAD_SUBMISSION_MAX_BYTES,
      scoringPollSeconds: e.OLYMPIAD_SCORING_POLL_SECONDS ?? (nodeEnv === "test" ? 0 : 2),
    },
  };
}

/** OLYMPIAD_*: the season's dates must be in order (starts ≤ registration opens ≤ ends). */
function olympiadSettings(e: Env, baseUrl: string): Config["olympiad"] {
  const starts = e.OLYMPIAD_SEASON_STARTS ?? `${e.OLYMPIAD_SEASON_YEAR}-01-01`;
  const ends = e.OLYMPIAD_SEASON_ENDS ?? null;
  const registrationOpens = e.OLYMPIAD_REGISTRATION_OPENS ?? null;
  if (ends !== null && ends < starts) {
    throw new ConfigError("OLYMPIAD_SEASON_ENDS", `must not be before OLYMPIAD_SEASON_STARTS (${starts})`);
  }
  if (registrationOpens !== null && registrationOpens < starts) {
    throw new ConfigError("OLYMPIAD_REGISTRATION_OPENS", `must not be before OLYMPIAD_SEASON_STARTS (${starts})`);
  }
  if (registrationOpens !== null && ends !== null && registrationOpens > ends) {
    throw new ConfigError("OLYMPIAD_REGISTRATION_OPENS", `must not be after OLYMPIAD_SEASON_ENDS (${ends})`);
  }
  const sponsorUrl = (e.OLYMPIAD_SPONSOR_URL ?? baseUrl).replace(/\/+$/, "");
  return {
    season: { year: e.OLYMPIAD_SEASON_YEAR, starts, ends, registrationOpens },
    sponsor: {
      name: e.OLYMPIAD_SPONSOR_NAME ?? "Lab Phi",
      domain: e.OLYMPIAD_SPONSOR_DOMAIN ?? new URL(sponsorUrl).hostname,
      url: sponsorUrl,
      label: e.OLYMPIAD_SPONSOR_LABEL ?? "Official host sponsor",
    },
    communityUrl: e.OLYMPIAD_COMMUNITY_URL?.replace(/\/+$/, "") ?? null,
  };
}

/** A config for tests and embedding: defaults plus the given environment. */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({ NODE_ENV: "test", LOG_LEVEL: "silent", ...env });
}
