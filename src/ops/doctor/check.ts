import type { Config } from "../../config.js";

/**
 * One check of `labphi doctor` (docs/operations.md, "labphi doctor"): a row of the table. The
 * checks live in ./checks/*.ts and are listed, in the order they print, in ./checks/index.ts.
 *
 * A check only reads: no transaction is sent, nothing is charged, nothing is written except one
 * probe object (S3, deleted again) and one probe file (DATA_DIR, deleted again).
 */

/** `ok`: works. `fail`: configured and broken (exit 1). `skipped`: not configured, or cannot be checked. */
export type Status = "ok" | "fail" | "skipped";

/** The parts of a deployment, in the order the table prints them. */
export const PARTS = [
  "settings",
  "base",
  "solana",
  "stripe",
  "links",
  "database",
  "storage",
  "disk",
  "clock",
  "server",
] as const;
export type Part = (typeof PARTS)[number];

export interface CheckResult {
  status: Status;
  /** One line: what was found (never a secret). */
  detail: string;
  /** With `fail`: what to do about it, naming the setting or command. */
  fix?: string;
}

export interface DoctorContext {
  config: Config;
  /** The environment the configuration was read from (PAYMENT_LINK_* are read from it). */
  env: NodeJS.ProcessEnv;
  /** Milliseconds since the epoch: the clock under test (injected by tests). */
  now(): number;
  /** Free bytes for this process on the file system holding `dir` (injected by tests). */
  freeDiskBytes(dir: string): Promise<bigint>;
  /** Settlements the facilitator gas key and the Solana fee payer must be able to pay for. */
  settlements: number;
  /** Largest clock difference accepted, in seconds. */
  maxSkewSeconds: number;
  /** Longest wait of one network call, in milliseconds. */
  timeoutMs: number;
  /** Results of earlier checks of this run, by check id. */
  results: ReadonlyMap<string, CheckResult>;
  /** One value per key for the whole run (a chain id read once, shared by several checks). */
  memo<T>(key: string, compute: () => Promise<T>): Promise<T>;
}

export interface Check {
  /** Stable id, `<part>.<name>` (the JSON document's `id`). */
  id: string;
  part: Part;
  /** Short name of what is checked (the table's CHECK column). */
  check: string;
  /** Whether the part is configured at all; when not, the row is `skipped` with `notConfigured`. */
  applies(config: Config, env: NodeJS.ProcessEnv): boolean;
  /** The row's detail when `applies` is false, e.g. "not configured (set S3_BUCKET to use S3)". */
  notConfigured: string;
  /** Ids of checks this one needs: when one of them failed or was skipped, this row is skipped. */
  needs?: string[];
  run(ctx: DoctorContext): Promise<CheckResult>;
}

export const ok = (detail: string): CheckResult => ({ status: "ok", detail });
export const fail = (detail: string, fix: string): CheckResult => ({ status: "fail", detail, fix });
export const skipped = (detail: string): CheckResult => ({ status: "skipped", detail });

/**
 * The first line of an error's message, every URL in it shortened by `displayUrl`: libraries quote
 * the URL they failed on, and RPC providers put API keys in the path, the query or the user part.
 */
export function errorLine(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  const cause = err instanceof Error && err.cause instanceof Error ? ` (${err.cause.message.split("\n")[0]})` : "";
  return (msg.split("\n")[0] + cause)
    .replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s'"<>]+/gi, (u) => displayUrl(u))
    .slice(0, 300);
}

/** A URL for display: no user, password, query or fragment (RPC URLs often carry an API key in them). */
export function displayUrl(raw: string): string {
  try {
    const u = new URL(raw);
    const path = u.pathname.length > 1 ? "/…" : "";
    return `${u.protocol}//${u.host}${path}`;
  } catch {
    return "(unparsable URL)";
  }
}

/** Whether any of these settings is given in the environment. */
export const anySet = (env: NodeJS.ProcessEnv, names: string[]): boolean =>
  names.some((n) => (env[n] ?? "").trim() !== "");

/** 1234567 → "1,234,567" (bigint-safe). */
export function grouped(n: bigint | number): string {
  return BigInt(n)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** Atomic units as a decimal amount: (1500000000000000n, 18) → "0.0015". */
export function units(n: bigint, decimals: number): string {
  const neg = n < 0n;
  const s = (neg ? -n : n).toString().padStart(decimals + 1, "0");
  const whole = s.slice(0, s.length - decimals);
  const frac = s.slice(s.length - decimals).replace(/0+$/, "");
  return `${neg ? "-" : ""}${whole}${frac ? `.${frac}` : ""}`;
}
