import path from "node:path";
import { z } from "zod";

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
  ADMIN_TOKEN: optionalString.refine((v) => v === undefined || v.length >= 16, {
    message: "must be at least 16 characters",
  }),
  ACCESS_TOKEN_SECRET: optionalString.refine((v) => v === undefined || v.length >= 32, {
    message: "must be at least 32 characters",
  }),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).optional().default("info"),
  BODY_LIMIT_BYTES: intIn(1024, 64 * 1024 * 1024, 1024 * 1024),
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
  IDENTITY_TOKEN_SECRET: optionalString.refine((v) => v === undefined || v.length >= 32, {
    message: "must be at least 32 characters",
  }),
  IDENTITY_TOKEN_TTL_DAYS: intIn(1, 365, 30),
});

export type Env = z.infer<typeof envSchema>;

export interface Config {
  env: "production" | "development" | "test";
  port: number;
  host: string;
  baseUrl: string;
  dataDir: string;
  databaseUrl: string | undefined;
  adminToken: string | undefined;
  accessTokenSecret: string | undefined;
  logLevel: Env["LOG_LEVEL"];
  bodyLimitBytes: number;
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
  };
  identity: {
    /** Key of the identity-token hash; when unset a random key is kept in the settings table. */
    tokenSecret: string | undefined;
    tokenTtlDays: number;
  };
  /** Static hosted payment links, keyed by canonical sku (from PAYMENT_LINK_<SKU>). */
  paymentLinks: Record<string, string>;
  /** Stripe payment link ids (plink_…) keyed by canonical sku (from PAYMENT_LINK_ID_<SKU>): matches link purchases in webhooks. */
  paymentLinkIds: Record<string, string>;
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
  const host = e.HOST ?? "127.0.0.1";
  const urlHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
  return {
    env: nodeEnv,
    port: e.PORT,
    host,
    baseUrl: (e.BASE_URL ?? `http://${urlHost}:${e.PORT}`).replace(/\/+$/, ""),
    dataDir: path.resolve(e.DATA_DIR ?? "./data"),
    databaseUrl: e.DATABASE_URL,
    adminToken: e.ADMIN_TOKEN,
    accessTokenSecret: e.ACCESS_TOKEN_SECRET,
    logLevel: e.LOG_LEVEL,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
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
    },
    identity: { tokenSecret: e.IDENTITY_TOKEN_SECRET, tokenTtlDays: e.IDENTITY_TOKEN_TTL_DAYS },
    paymentLinks,
    paymentLinkIds,
  };
}

/** A config for tests and embedding: defaults plus the given environment. */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({ NODE_ENV: "test", LOG_LEVEL: "silent", ...env });
}
