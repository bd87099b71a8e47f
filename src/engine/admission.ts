import type { Level } from "../codec/index.js";
import { CodecError } from "../codec/index.js";
import { Problem } from "../http/problem.js";

/**
 * What the engine admits over HTTP: input size per level, output size and expansion ratio, and
 * how many slow requests and decompressions run at once (more get 503 with Retry-After instead of
 * queueing). Also maps codec errors to problems.
 */

export const SUITE_POINTER = "POST /api/x402-suite";

export interface EngineLimits {
  bodyLimitBytes: number;
  slowLimitBytes: number;
  outputLimitBytes: number;
  /** slow requests admitted at once (default 2) */
  slowConcurrency?: number;
  /** decompressions (every chamber, classic streams too) admitted at once (default 2) */
  decodeConcurrency?: number;
  /** largest output / container ratio for outputs above RATIO_FLOOR_BYTES (default 4096) */
  maxRatio?: number;
}

/** Outputs up to this size decode whatever their ratio (the ratio cap applies above it). */
export const RATIO_FLOOR_BYTES = 1024 * 1024;
export const DEFAULT_MAX_RATIO = 4096;
export const DEFAULT_DECODE_CONCURRENCY = 2;
/** seconds a caller refused by admission control is told to wait */
const RETRY_AFTER_SECONDS = 2;

export interface Logger {
  error(obj: object, msg: string): void;
}

/** HTTP status of each CodecError code; a code added later falls back to 422. */
const CODEC_STATUS: Record<string, number> = {
  codec_too_large: 413,
  codec_ratio_exceeded: 413,
  codec_bad_input: 400,
  codec_bad_option: 400,
};

export function codecProblem(err: CodecError): Problem {
  const status = CODEC_STATUS[err.code] ?? 422;
  return new Problem(status, err.code, err.message, status === 413 ? { suite: SUITE_POINTER } : {});
}

/** Runs a codec call; a CodecError becomes its problem. */
export async function codecCall<T>(fn: () => Promise<T> | T): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof CodecError) throw codecProblem(err);
    throw err;
  }
}

/**
 * Runs a decoder on caller-supplied bytes. The library promises CodecErrors only; anything else
 * on a hostile container is logged (a library bug) and answered as a malformed container, never a 500.
 */
export async function hostileCall<T>(log: Logger, fn: () => Promise<T> | T): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof CodecError) throw codecProblem(err);
    if (err instanceof Problem) throw err;
    log.error({ err }, "codec decoder threw a non-codec error");
    throw new Problem(422, "codec_corrupt", "The container is malformed.");
  }
}

export class Admission {
  /** codec requests in flight per kind (admission control: see admit()) */
  private readonly inflight = { slow: 0, decode: 0 };

  constructor(readonly limits: EngineLimits) {}

  limitsDescriptor() {
    return {
      body_limit_bytes: this.limits.bodyLimitBytes,
      input_limit_bytes: {
        max: this.limits.slowLimitBytes,
        balanced: this.limits.slowLimitBytes,
        fast: this.limits.bodyLimitBytes,
        bench: this.limits.slowLimitBytes,
        process: this.limits.slowLimitBytes,
      },
      output_limit_bytes: { fast_chambers: this.limits.outputLimitBytes, context_mixing: this.limits.slowLimitBytes },
      max_ratio: this.maxRatio,
      ratio_floor_bytes: RATIO_FLOOR_BYTES,
      slow_concurrency: this.limits.slowConcurrency ?? 2,
      decode_concurrency: this.limits.decodeConcurrency ?? DEFAULT_DECODE_CONCURRENCY,
      larger: `labphi CLI (no limit) or a suite job (${SUITE_POINTER})`,
    };
  }

  /** Largest input a level (or bench/process) accepts over HTTP. */
  inputLimit(level: Level | "bench"): number {
    return level === "fast" ? this.limits.bodyLimitBytes : this.limits.slowLimitBytes;
  }

  checkInput(bytes: number, level: Level | "bench", what = `level ${level}`): void {
    if (bytes > this.inputLimit(level)) this.tooLarge(bytes, level, what);
  }

  /** The 413 problem for an input over the level's limit; points to level fast, the CLI and suite jobs. */
  tooLarge(bytes: number, level: Level | "bench", what = `level ${level}`): never {
    const limit = this.inputLimit(level);
    const hint =
      level === "fast"
        ? ""
        : ` Level fast takes up to ${this.limits.bodyLimitBytes} bytes${level === "bench" ? " for compress" : ""}.`;
    throw new Problem(
      413,
      "codec_input_too_large",
      `Over HTTP, ${what} takes inputs up to ${limit} bytes; this one is ${bytes}.${hint} For larger data use the labphi CLI or a suite job (${SUITE_POINTER}).`,
      { bytes, limit_bytes: limit, level, suite: SUITE_POINTER, cli: "labphi compress FILE" },
    );
  }

  get maxRatio(): number {
    return this.limits.maxRatio ?? DEFAULT_MAX_RATIO;
  }

  /** The 413 for an output over the ratio cap (output / container, above RATIO_FLOOR_BYTES). */
  ratioExceeded(bytes: number | null, compressed: number): never {
    const ratio = this.maxRatio;
    throw new Problem(
      413,
      "codec_ratio_exceeded",
      `${bytes === null ? "This stream restores" : `This container restores ${bytes} bytes,`} more than ${ratio} times its own size (${compressed} bytes); over HTTP outputs above ${RATIO_FLOOR_BYTES} bytes may expand at most ${ratio}×. Use the labphi CLI or a suite job (${SUITE_POINTER}).`,
      {
        ...(bytes === null ? {} : { bytes }),
        compressed_bytes: compressed,
        max_ratio: ratio,
        ratio_floor_bytes: RATIO_FLOOR_BYTES,
        suite: SUITE_POINTER,
        cli: "labphi decompress FILE",
      },
    );
  }

  /**
   * Admission control for slow codec work (CPU-bound, mostly on the event loop): at most
   * `slowConcurrency` at once; more get 503 with Retry-After instead of piling up behind each other.
   */
  slow<T>(fn: () => Promise<T>): Promise<T> {
    return this.admit("slow", fn);
  }

  /**
   * Admission control: at most `slowConcurrency` slow requests and `decodeConcurrency`
   * decompressions at once; more get 503 `codec_capacity_unavailable` with Retry-After instead of
   * queueing (each admitted decode holds up to the output cap in memory: the bound on memory).
   */
  async admit<T>(kind: "slow" | "decode", fn: () => Promise<T>): Promise<T> {
    const max =
      kind === "slow"
        ? (this.limits.slowConcurrency ?? 2)
        : (this.limits.decodeConcurrency ?? DEFAULT_DECODE_CONCURRENCY);
    const busy = this.inflight[kind];
    if (busy >= max) {
      const what = kind === "slow" ? "slow requests" : "decompressions";
      const hint = kind === "slow" ? ", use level fast," : "";
      throw new Problem(
        503,
        "codec_capacity_unavailable",
        `The codec is busy with ${busy} ${what}; retry in a few seconds${hint} or use a suite job (${SUITE_POINTER}).`,
        { retry_after_seconds: RETRY_AFTER_SECONDS, kind, suite: SUITE_POINTER },
        { "Retry-After": String(RETRY_AFTER_SECONDS) },
      );
    }
    this.inflight[kind]++;
    try {
      return await fn();
    } finally {
      this.inflight[kind]--;
    }
  }
}
