import { type Config, ConfigError, loadConfig } from "../../config.js";
import { freeDiskBytes } from "../../jobs/disk-floor.js";
import { railReadiness } from "../../payments/readiness.js";
import {
  type Check,
  type CheckResult,
  type DoctorContext,
  errorLine,
  PARTS as PART_ORDER,
  type Part,
  type Status,
} from "./check.js";
import { CHECKS } from "./checks/index.js";

/**
 * Runs the checks of `labphi doctor` (./checks/index.ts) against the settings of an environment
 * and returns the report: one row per check, in table order. Parts run side by side; the checks
 * of one part run in order, so a check can rely on (`needs`) an earlier one of its part.
 */

/** One row of the report (the JSON document's `checks[]`; docs/operations.md, "labphi doctor"). */
export interface DoctorRow {
  id: string;
  part: Part;
  check: string;
  status: Status;
  detail: string;
  fix: string | null;
}

export interface DoctorReport {
  /** Version of this document's shape: fields are only ever added. */
  version: 1;
  /** true when no row failed (exit status 0). */
  ok: boolean;
  checked_at: string;
  settlements: number;
  max_skew_seconds: number;
  counts: Record<Status, number>;
  checks: DoctorRow[];
  /**
   * Each payment rail and whether its settings are complete (src/payments/readiness.ts, the rule the
   * pages and the 402 answers follow), with the settings it still needs. Empty when the settings
   * could not be read. A configured rail works when the rows of its part are ok too.
   */
  rails: { id: string; configured: boolean; missing: string[] }[];
}

export interface DoctorOptions {
  env: NodeJS.ProcessEnv;
  /** Settlements the gas key / fee payer must cover (default 100). */
  settlements?: number;
  /** Largest clock skew accepted, seconds (default 30). */
  maxSkewSeconds?: number;
  /** One network call's limit, ms (default X402_RPC_TIMEOUT_SECONDS). */
  timeoutMs?: number;
  /** The clock (tests inject a skewed one). */
  now?: () => number;
  /** Free bytes under a folder (tests inject a full disk). */
  freeDiskBytes?: (dir: string) => Promise<bigint>;
  /** The checks to run (default: all). */
  checks?: readonly Check[];
}

export const DEFAULT_SETTLEMENTS = 100;
export const DEFAULT_MAX_SKEW_SECONDS = 30;

/** Which part a setting belongs to (a bad setting fails that part's row). */
export function partOfSetting(name: string): Part {
  if (/^(PAY_TO_BASE|BASE_(RPC_URL|CHAIN_ID|USDC_ADDRESS)|X402_EVM_|X402_FACILITATOR_URL)/.test(name)) return "base";
  if (/^(PAY_TO_SOLANA|SOLANA_|X402_SVM_)/.test(name)) return "solana";
  if (name.startsWith("STRIPE_")) return "stripe";
  if (name.startsWith("PAYMENT_LINK_")) return "links";
  if (name.startsWith("DATABASE_")) return "database";
  if (name.startsWith("S3_")) return "storage";
  if (name === "JOB_MIN_FREE_DISK_BYTES" || name === "DATA_DIR") return "disk";
  if (name === "BASE_URL" || name === "PORT" || name === "HOST") return "server";
  return "settings";
}

/**
 * The configuration, reading past bad settings: each setting loadConfig refuses becomes a failed
 * row of its part, is left out (with its S3_* block), and the rest is read again, so one typo does
 * not hide every other check. A refusal that leaving settings out cannot cure (a key required in
 * production) ends the reading: `config` is then undefined.
 */
export function readSettings(env: NodeJS.ProcessEnv): {
  config: Config | undefined;
  rows: DoctorRow[];
  env: NodeJS.ProcessEnv;
} {
  const rows: DoctorRow[] = [];
  const left: NodeJS.ProcessEnv = { ...env };
  for (let i = 0; i < 100; i++) {
    try {
      return { config: loadConfig(left), rows, env: left };
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      rows.push({
        id: `settings.${err.setting}`,
        part: partOfSetting(err.setting),
        check: `setting ${err.setting}`,
        status: "fail",
        detail: err.problem,
        fix: `correct ${err.setting} in the service's environment (.env.example describes each setting)`,
      });
      const drop = err.setting.startsWith("S3_")
        ? Object.keys(left).filter((k) => k.startsWith("S3_"))
        : (left[err.setting] ?? "").trim() !== ""
          ? [err.setting]
          : [];
      if (drop.length === 0) return { config: undefined, rows, env: left };
      for (const k of drop) delete left[k];
    }
  }
  return { config: undefined, rows, env: left };
}

function counts(rows: DoctorRow[]): Record<Status, number> {
  const c: Record<Status, number> = { ok: 0, fail: 0, skipped: 0 };
  for (const r of rows) c[r.status]++;
  return c;
}

export async function runDoctor(opts: DoctorOptions): Promise<DoctorReport> {
  const settlements = opts.settlements ?? DEFAULT_SETTLEMENTS;
  const maxSkewSeconds = opts.maxSkewSeconds ?? DEFAULT_MAX_SKEW_SECONDS;
  const now = opts.now ?? Date.now;
  const read = readSettings(opts.env);
  const rows: DoctorRow[] = [...read.rows];
  const checks = opts.checks ?? CHECKS;
  if (read.config) {
    const config = read.config;
    const results = new Map<string, CheckResult>();
    const memo = new Map<string, Promise<unknown>>();
    const timeoutMs = opts.timeoutMs ?? config.x402.rpcTimeoutSeconds * 1000;
    const ctx: DoctorContext = {
      config,
      env: read.env,
      now,
      freeDiskBytes: opts.freeDiskBytes ?? freeDiskBytes,
      settlements,
      maxSkewSeconds,
      timeoutMs,
      results,
      memo<T>(key: string, compute: () => Promise<T>): Promise<T> {
        let p = memo.get(key) as Promise<T> | undefined;
        if (!p) {
          p = compute();
          memo.set(key, p);
        }
        return p;
      },
    };
    const runOne = async (c: Check): Promise<CheckResult> => {
      if (!c.applies(config, opts.env)) return { status: "skipped", detail: c.notConfigured };
      const blocker = (c.needs ?? []).find((id) => results.get(id)?.status !== "ok");
      if (blocker) return { status: "skipped", detail: `needs ${blocker}, which did not pass` };
      let timer: NodeJS.Timeout | undefined;
      try {
        return await Promise.race([
          c.run(ctx),
          new Promise<CheckResult>((resolve) => {
            // each call inside has its own limit; this only stops a check that hangs past them
            timer = setTimeout(
              () =>
                resolve({
                  status: "fail",
                  detail: `no result within ${(3 * timeoutMs) / 1000} s`,
                  fix: "see the part's settings and its server",
                }),
              3 * timeoutMs,
            );
          }),
        ]);
      } catch (err) {
        return {
          status: "fail",
          detail: `the check failed unexpectedly: ${errorLine(err)}`,
          fix: "run with --json and report it",
        };
      } finally {
        clearTimeout(timer);
      }
    };
    const parts = [...new Set(checks.map((c) => c.part))];
    await Promise.all(
      parts.map(async (part) => {
        for (const c of checks.filter((x) => x.part === part)) results.set(c.id, await runOne(c));
      }),
    );
    for (const c of checks) {
      const r = results.get(c.id);
      if (!r) continue;
      rows.push({
        id: c.id,
        part: c.part,
        check: c.check,
        status: r.status,
        detail: r.detail,
        fix: r.status === "fail" ? (r.fix ?? null) : null,
      });
    }
  }
  // table order: by part, settings rows first within their part
  const order = new Map(PART_ORDER.map((p, i) => [p, i]));
  rows.sort((a, b) => (order.get(a.part) ?? 0) - (order.get(b.part) ?? 0));
  const c = counts(rows);
  return {
    version: 1,
    ok: c.fail === 0,
    checked_at: new Date(now()).toISOString(),
    settlements,
    max_skew_seconds: maxSkewSeconds,
    counts: c,
    checks: rows,
    rails: read.config
      ? Object.entries(railReadiness(read.config)).map(([id, r]) => ({
          id,
          configured: r.configured,
          missing: r.missing,
        }))
      : [],
  };
}
