import { createHmac, randomBytes } from "node:crypto";
import zlib from "node:zlib";
import type { Kysely } from "kysely";
import {
  type BenchResult,
  bench,
  CHAMBER_NAMES,
  type ChamberName,
  CODEC_VERSION,
  CodecError,
  type CompressReport,
  classic,
  compressWithReport,
  type DeclaredType,
  decompressOffThread,
  describe,
  type Feats,
  FORMAT_VERSION,
  type Inspection,
  inspect,
  LEVELS,
  type Level,
  profile,
  route,
} from "../codec/index.js";
import { nowIso } from "../db/database.js";
import type { Database } from "../db/schema.js";
import { Problem } from "../http/problem.js";
import type { Identity } from "../identity/service.js";
import { VERSIONS } from "../versions.js";
import { type CorpusName, GENERATORS, generate, generatedBytes } from "./generators.js";
import { engineStore } from "./store.js";
import type { Direction, PrintRow } from "./tables.js";

/**
 * The codec's service face: limits, barrel state, prints, counsel. Calls the codec library only
 * through its public API (src/codec/index.ts); no HTTP types here.
 */

export const OPS = ["compress", "decompress", "profile", "route", "bench", "barrel", "print", "prints"] as const;
export type Op = (typeof OPS)[number];
export const WEB_OPS = ["compress", "decompress", "bench"] as const;
export const PATHS = ["zrw", "float", "text", "delta", "high_entropy", "general", "json_residual"] as const;
export const DECLARED_TYPES = ["int32", "float32", "float64", "timestamps", "json", "csv", "text", "binary"] as const;

/** Barrel chambers per direction, in the spec's order. */
export const BARREL_CHAMBERS: Record<Direction, readonly string[]> = {
  compress: ["zrw", "float", "delta", "text", "high_entropy", "general", "json_keys", "json_residual"],
  decompress: [
    "zrw",
    "zrw-v5",
    "zrw-v5-chunked",
    "zrw-v5-delta",
    "zrw-v5-stride8",
    "zrw-v5-stride16",
    "zrw-v5-stride32",
    "zrw-v5-dark-attractor",
    "zrw-v5-dark-detractor",
    "float",
    "delta",
    "text",
    "high_entropy",
    "general",
    "json_keys",
    "json_residual",
    "legacy",
  ],
};
export const BARREL_NAMES: Record<Direction, string> = { compress: "omni-compress", decompress: "omni-decompress" };
export const BARREL_REST = "zrw";
/** Current chamber before the first fire: general, the chamber that accepts any input. */
export const BARREL_INITIAL = "general";

/**
 * Chambers that may decode with context mixing (level max): about as slow to decode as to encode,
 * so their output over HTTP is capped at the slow limit. Every other chamber decodes at
 * typed-transform or backend speed; a name the library does not know counts as slow.
 */
const SLOW_DECODE = new Set<string>(["text", "json_keys", "json_residual"]);
const isSlowDecode = (chamber: string) =>
  SLOW_DECODE.has(chamber) || !(CHAMBER_NAMES as readonly string[]).includes(chamber);

export const LEVEL_TRADEOFF: Record<Level, string> = {
  max: "level max: the strongest models (context mixing allowed); text and JSON decode about as slowly as they encode",
  balanced:
    "level balanced: typed transforms with fast backends; every chamber is designed to decode at 50 MB/s or more",
  fast: "level fast: one chamber tried; designed to compress at 20 MB/s or more",
};

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

export interface Fingerprint {
  dataset_print_id: string;
  bytes: number;
  data_class: string;
  path: string;
}

export interface PrintOut extends Fingerprint {
  ratio: number;
  label: string;
  level: string;
  at: string;
}

export interface Counsel {
  heart: string;
  brain: string;
  cloak: string;
}

export interface CompressOut {
  engine: "omni";
  version: string;
  path: string;
  chamber: string;
  data_class: string;
  level: Level;
  bare: boolean;
  original_bytes: number;
  compressed_bytes: number;
  ratio: number;
  reason: string;
  verified: true;
  compress_ms: number;
  container: Uint8Array;
  print: PrintOut | null;
  feats: Feats;
}

export interface DecompressOut {
  bytes: Uint8Array;
  original_bytes: number;
  compressed_bytes: number;
  level: Level;
  bare: boolean;
  legacy: boolean;
  checksum_verified: boolean;
  chambers: string[];
  decompress_ms: number;
}

export interface ClassicOut {
  engine: "classic";
  method: "brotli-11" | "gzip-9";
  path: string;
  original_bytes: number;
  compressed_bytes: number;
  ratio: number;
  sizes: { "brotli-11": number; "gzip-9": number };
  container: Uint8Array;
  print: PrintOut | null;
  profile: { data_class: string; path: string; feats: Feats };
}

export interface BarrelState {
  barrel: string;
  chambers: string[];
  rest: string;
  chamber: string;
  fires: number;
  rotates: number;
  counts: Record<string, number>;
}

export interface Logger {
  error(obj: object, msg: string): void;
}

const ms = (t0: number): number => Math.round((performance.now() - t0) * 100) / 100;
const ratioOf = (n: number, c: number): number => (c > 0 ? Math.round((n / c) * 10000) / 10000 : 0);
const sameBytes = (a: Uint8Array, b: Uint8Array): boolean =>
  a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b));

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

export class EngineService {
  /** codec requests in flight per kind (admission control: see admit()) */
  private readonly inflight = { slow: 0, decode: 0 };

  constructor(
    private readonly db: Kysely<Database>,
    readonly limits: EngineLimits,
    private readonly printKey: string,
    private readonly log: Logger,
  ) {}

  async init(): Promise<void> {
    for (const direction of ["compress", "decompress"] as const) {
      await engineStore.ensureBarrel(this.db, direction, BARREL_NAMES[direction], BARREL_INITIAL);
    }
  }

  // ------------------------------------------------------------------ descriptors

  engineDescriptor() {
    const d = describe();
    return {
      name: "Lab Phi omni engine",
      engine: "omni" as const,
      version: VERSIONS.engine,
      codec_version: CODEC_VERSION,
      format_version: FORMAT_VERSION,
      endpoint: "POST /api/omni",
      ops: [...OPS],
      paths: [...PATHS],
      levels: [...LEVELS],
      default_level: "max" as const,
      chambers: d.chambers.map((c) => ({ name: c.name, id: c.id, summary: c.summary })),
      barrel: {
        compress: [...BARREL_CHAMBERS.compress],
        decompress: [...BARREL_CHAMBERS.decompress],
        rest: BARREL_REST,
      },
      encodings: ["utf8", "base64"],
      limits: this.limitsDescriptor(),
      identity: {
        join: "POST /api/join-work",
        headers: ["Authorization: Bearer <token>", "X-Identity-Token: <token>"],
        prints: "each compress by a caller with a valid identity token records a print; op prints lists your own",
      },
      rule: "A fire leaves a fingerprint, not data: a compress by an identified caller records only a dataset_print_id (a keyed hash of the bytes), sizes, class, path and ratio. Only outcomes and route labels are returned.",
      also: ["POST /api/web-codec", "POST /api/compress", "POST /api/decompress", "POST /api/process"],
      docs: "/openapi.yaml",
    };
  }

  webDescriptor() {
    return {
      service: "Lab Phi web codec",
      version: VERSIONS.webCodec,
      engine: "omni" as const,
      endpoint: "POST /api/web-codec",
      also: "POST /api/omni",
      ops: [...WEB_OPS],
      methods: ["omni", "brotli-11", "gzip-9", "zrw-v5", "json_keys"],
      engines: {
        omni: "the omni engine: profile, route to a chamber, keep the smallest lossless container",
        classic: "the smaller of brotli-11 and gzip-9, returned as a standard stream any client can decode",
      },
      strategy:
        "Lossless always: the input is never rewritten. omni profiles the bytes, tries the chambers that suit the data class and keeps the smallest output, checks that it decodes back byte for byte, and never answers larger than the input plus 16 bytes; classic returns the smaller of brotli-11 and gzip-9. Losses are reported as they are: bench compares omni with gzip-9 and brotli-11 in the same run.",
      counsel: {
        heart: "what the data is: its class and shape, read from the bytes",
        brain: "why this chamber or method won, the sizes it beat and the level's decode-speed trade-off",
        cloak: "what is kept private: the bytes are not stored; at most a fingerprint print for an identified caller",
      },
      creator_counsel: "on by default; send creator_counsel: false to omit it",
      levels: [...LEVELS],
      limits: this.limitsDescriptor(),
      docs: "/openapi.yaml",
    };
  }

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

  // ------------------------------------------------------------------ limits

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

  /** Bytes of a generated corpus, after checking the size against the level's limit. */
  generated(corpus: CorpusName, n: number, seed: number | undefined, level: Level | "bench", what?: string) {
    this.checkInput(generatedBytes(corpus, n), level, what);
    return generate(corpus, n, seed ?? 1);
  }

  corpora() {
    return Object.values(GENERATORS).map((g) => ({
      name: g.name,
      summary: g.summary,
      unit: g.unit,
      entropy_bits_per_value: g.entropy_bits_per_value,
    }));
  }

  // ------------------------------------------------------------------ fingerprints

  fingerprint(bytes: Uint8Array, declared?: DeclaredType): Fingerprint {
    const p = profile(bytes, declared);
    return { dataset_print_id: this.printId(bytes), bytes: bytes.length, data_class: p.data_class, path: p.path };
  }

  private printId(bytes: Uint8Array): string {
    return `dp_${createHmac("sha256", this.printKey).update(bytes).digest("hex").slice(0, 32)}`;
  }

  private async record(
    identity: Identity | null,
    bytes: Uint8Array,
    fp: { data_class: string; path: string },
    compressed: number,
    label: string,
    level: string,
  ): Promise<PrintOut | null> {
    if (!identity) return null;
    const row: PrintRow = {
      id: `prt_${randomBytes(12).toString("base64url")}`,
      identity_id: identity.id,
      dataset_print_id: this.printId(bytes),
      bytes: bytes.length,
      compressed_bytes: compressed,
      data_class: fp.data_class,
      path: fp.path,
      label,
      level,
      at: nowIso(),
    };
    await engineStore.insertPrint(this.db, row);
    return printOut(row);
  }

  async prints(identity: Identity | null, page: { limit: number; offset: number }) {
    if (!identity) {
      throw new Problem(
        401,
        "identity_required",
        "Listing prints needs your identity token (Authorization: Bearer <token> or X-Identity-Token); get one at POST /api/join-work.",
        {},
        { "WWW-Authenticate": "Bearer" },
      );
    }
    const { total, items } = await engineStore.printsOf(this.db, identity.id, page);
    const next = page.offset + items.length;
    return {
      identity_id: identity.id,
      total,
      limit: page.limit,
      offset: page.offset,
      next_offset: next < total ? next : null,
      prints: items.map(printOut),
    };
  }

  // ------------------------------------------------------------------ barrel

  private async fire(direction: Direction, chambers: string[]): Promise<void> {
    await this.db.transaction().execute((trx) => engineStore.fire(trx, direction, chambers));
  }

  async barrel(): Promise<Record<Direction, BarrelState>> {
    const [rows, counts] = await Promise.all([engineStore.barrels(this.db), engineStore.counts(this.db)]);
    const state = {} as Record<Direction, BarrelState>;
    for (const direction of ["compress", "decompress"] as const) {
      const row = rows.find((r) => r.direction === direction);
      const c: Record<string, number> = {};
      for (const name of BARREL_CHAMBERS[direction]) c[name] = 0;
      for (const r of counts) if (r.direction === direction) c[r.chamber] = Number(r.count);
      state[direction] = {
        barrel: row?.barrel ?? BARREL_NAMES[direction],
        chambers: [...BARREL_CHAMBERS[direction]],
        rest: BARREL_REST,
        chamber: row?.chamber ?? BARREL_INITIAL,
        fires: Number(row?.fires ?? 0),
        rotates: Number(row?.rotates ?? 0),
        counts: c,
      };
    }
    return state;
  }

  // ------------------------------------------------------------------ codec calls

  private async codec<T>(fn: () => Promise<T> | T): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof CodecError) throw codecProblem(err);
      throw err;
    }
  }

  /**
   * Admission control for slow codec work (CPU-bound, mostly on the event loop): at most
   * `slowConcurrency` at once; more get 503 with Retry-After instead of piling up behind each other.
   */
  private slow<T>(fn: () => Promise<T>): Promise<T> {
    return this.admit("slow", fn);
  }

  /**
   * Admission control: at most `slowConcurrency` slow requests and `decodeConcurrency`
   * decompressions at once; more get 503 `codec_capacity_unavailable` with Retry-After instead of
   * queueing (each admitted decode holds up to the output cap in memory: the bound on memory).
   */
  private async admit<T>(kind: "slow" | "decode", fn: () => Promise<T>): Promise<T> {
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

  get maxRatio(): number {
    return this.limits.maxRatio ?? DEFAULT_MAX_RATIO;
  }

  /** The 413 for an output over the ratio cap (output / container, above RATIO_FLOOR_BYTES). */
  private ratioExceeded(bytes: number | null, compressed: number): never {
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
   * Runs a decoder on caller-supplied bytes. The library promises CodecErrors only; anything else
   * on a hostile container is logged (a library bug) and answered as a malformed container, never a 500.
   */
  private async hostile<T>(fn: () => Promise<T> | T): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof CodecError) throw codecProblem(err);
      if (err instanceof Problem) throw err;
      this.log.error({ err }, "codec decoder threw a non-codec error");
      throw new Problem(422, "codec_corrupt", "The container is malformed.");
    }
  }

  profileOf(bytes: Uint8Array, declared?: DeclaredType) {
    return profile(bytes, declared);
  }

  async routeOf(bytes: Uint8Array, level: Level, declared?: DeclaredType) {
    return this.codec(() => {
      const p = profile(bytes, declared);
      const r = route(bytes, { level, ...(declared ? { declaredType: declared } : {}) });
      return { ...p, ...r, level };
    });
  }

  /**
   * Compress with omni, check that the container decodes back to the same bytes before answering,
   * fire the compress barrel, and record a print when the caller is identified.
   */
  async compress(
    bytes: Uint8Array,
    options: { level: Level; chamber?: ChamberName | undefined; bare?: boolean | undefined; declared?: DeclaredType },
    identity: Identity | null,
  ): Promise<CompressOut> {
    this.checkInput(bytes.length, options.level);
    return options.level === "fast"
      ? this.compressChecked(bytes, options, identity)
      : this.slow(() => this.compressChecked(bytes, options, identity));
  }

  private async compressChecked(
    bytes: Uint8Array,
    options: { level: Level; chamber?: ChamberName | undefined; bare?: boolean | undefined; declared?: DeclaredType },
    identity: Identity | null,
  ): Promise<CompressOut> {
    const opts = {
      level: options.level,
      ...(options.chamber ? { chamber: options.chamber } : {}),
      ...(options.bare ? { bare: true } : {}),
      ...(options.declared ? { declaredType: options.declared } : {}),
    };
    const t0 = performance.now();
    let report: CompressReport = await this.codec(() => compressWithReport(bytes, opts));
    const took = ms(t0);
    if (!(await this.roundTrips(report.container, bytes))) {
      this.log.error(
        { chamber: report.chamber, level: report.level, bytes: bytes.length },
        "codec round trip failed; stored instead",
      );
      report = await this.codec(() => compressWithReport(bytes, { ...opts, chamber: "high_entropy" }));
      if (!(await this.roundTrips(report.container, bytes))) {
        throw new Problem(
          500,
          "codec_roundtrip_failed",
          "The container did not decode back to the input; nothing was returned.",
        );
      }
    }
    const p = profile(bytes, options.declared);
    const chambers = report.chamber === "chunked" ? inspect(report.container).chambers : [report.chamber];
    await this.fire("compress", chambers);
    const print = await this.record(identity, bytes, p, report.container.length, report.label, report.level);
    return {
      engine: "omni",
      version: VERSIONS.engine,
      path: report.label,
      chamber: report.chamber,
      data_class: report.data_class,
      level: report.level,
      bare: report.bare,
      original_bytes: bytes.length,
      compressed_bytes: report.container.length,
      ratio: ratioOf(bytes.length, report.container.length),
      reason: report.reason,
      verified: true,
      compress_ms: took,
      container: report.container,
      print,
      feats: p.feats,
    };
  }

  /** The verification decode of a compress answer: off the event loop, bounded by the input's size. */
  private async roundTrips(container: Uint8Array, bytes: Uint8Array): Promise<boolean> {
    try {
      const back = await decompressOffThread(container, {
        maxOutputBytes: bytes.length,
        maxExpansionRatio: Number.MAX_SAFE_INTEGER, // our own container: only its size matters
      });
      return sameBytes(back, bytes);
    } catch {
      return false;
    }
  }

  /**
   * Decode a container (framed, chunked, bare, or a legacy gzip stream) within the output limits:
   * the fast-chamber limit, or the slow limit when a context-mixing (or unknown) chamber is inside,
   * and the ratio cap (output / container above RATIO_FLOOR_BYTES). The declared size is checked
   * before anything is decoded; an admitted decode (admission control: decodeConcurrency) runs on
   * the codec's decode pool, off the event loop, with the same caps enforced by the decoder (a
   * legacy gzip stream has no declared size: zlib stops at the cap).
   */
  async decompress(container: Uint8Array): Promise<DecompressOut> {
    const info: Inspection = await this.hostile(() =>
      inspect(container, { maxOutputBytes: this.limits.outputLimitBytes, maxExpansionRatio: Number.MAX_SAFE_INTEGER }),
    );
    const slow = info.chambers.some(isSlowDecode);
    const cap = slow ? this.limits.slowLimitBytes : this.limits.outputLimitBytes;
    if (info.original_bytes > cap) {
      throw new Problem(
        413,
        "codec_output_too_large",
        `This container restores ${info.original_bytes} bytes; over HTTP a container with ${slow ? "context-mixing chambers" : "these chambers"} may restore up to ${cap} bytes. Use the labphi CLI or a suite job (${SUITE_POINTER}).`,
        { bytes: info.original_bytes, limit_bytes: cap, chambers: info.chambers, suite: SUITE_POINTER },
      );
    }
    if (info.original_bytes > RATIO_FLOOR_BYTES && info.original_bytes > container.length * this.maxRatio)
      this.ratioExceeded(info.original_bytes, container.length);
    const t0 = performance.now();
    const out = await this.admit("decode", () =>
      this.hostile(() =>
        decompressOffThread(container, {
          maxOutputBytes: cap,
          maxExpansionRatio: this.maxRatio,
          ratioFloorBytes: RATIO_FLOOR_BYTES,
        }),
      ),
    );
    const took = ms(t0);
    await this.fire("decompress", info.chambers);
    return {
      bytes: out,
      original_bytes: out.length,
      compressed_bytes: container.length,
      level: info.level,
      bare: info.bare,
      legacy: info.legacy,
      checksum_verified: info.checksum !== null || info.legacy,
      chambers: info.chambers,
      decompress_ms: took,
    };
  }

  /** omni vs gzip-9 and brotli-11 with a real round trip of each; ok only when every one round-trips. */
  async bench(bytes: Uint8Array, level: Level): Promise<BenchResult & { ok: boolean; verdict: string; level: Level }> {
    this.checkInput(bytes.length, "bench", "bench");
    const r = await this.slow(() => this.codec(() => bench(bytes, { levels: [level], offThread: true })));
    const failed = r.methods.filter((m) => !m.roundtrip).map((m) => m.method);
    return {
      ...r,
      level,
      ok: r.roundtrip && failed.length === 0,
      verdict: failed.length === 0 && r.roundtrip ? "lossless" : `round trip failed: ${failed.join(", ") || "omni"}`,
    };
  }

  /** Compress then decompress (timed), against gzip-9 and brotli-11; fires both barrels, records a print. */
  async process(bytes: Uint8Array, level: Level, identity: Identity | null) {
    this.checkInput(bytes.length, "bench", "process");
    const r = await this.slow(() => this.codec(() => bench(bytes, { levels: [level], offThread: true })));
    const omni = r.methods[0];
    if (!omni) throw new Problem(500, "internal_error", "bench returned no omni result");
    const peers = r.methods.slice(1);
    const ok = r.roundtrip && r.methods.every((m) => m.roundtrip);
    const p = profile(bytes);
    await this.fire("compress", [r.chamber]);
    await this.fire("decompress", [r.chamber]);
    const print = await this.record(identity, bytes, p, omni.bytes, `omni/${r.chamber}`, level);
    const find = (name: string) => peers.find((m) => m.method === name);
    const gz = find("gzip-9");
    const br = find("brotli-11");
    const smallest = [...r.methods].sort((a, b) => a.bytes - b.bytes)[0];
    return {
      ok,
      verdict: ok
        ? "lossless"
        : `round trip failed: ${r.methods
            .filter((m) => !m.roundtrip)
            .map((m) => m.method)
            .join(", ")}`,
      roundtrip: ok,
      level,
      data_class: r.data_class,
      path: `omni/${r.chamber}`,
      chamber: r.chamber,
      original_bytes: bytes.length,
      compressed_bytes: omni.bytes,
      ratio: omni.ratio,
      compress_ms: omni.compress_ms,
      decompress_ms: omni.decompress_ms,
      methods: r.methods,
      omni_vs_brotli: r.omni_vs_brotli,
      omni_vs_gzip: gz && gz.bytes > 0 ? Math.round((omni.bytes / gz.bytes) * 10000) / 10000 : 1,
      winner: smallest?.method ?? omni.method,
      peers: { "gzip-9": gz ?? null, "brotli-11": br ?? null },
      print,
    };
  }

  /**
   * gzip-9 and brotli-11 sizes of the same bytes, measured (not estimated): the classic engine's
   * node:zlib calls (gzip level 9, brotli quality 11, the benchmark's peers) on the libuv thread
   * pool. Costs like bench, so it takes bench's input limit and a slow admission slot.
   */
  async peerSizes(bytes: Uint8Array): Promise<{ "brotli-11": number; "gzip-9": number }> {
    this.checkInput(bytes.length, "bench", "compress with peers");
    const r = await this.slow(() => this.codec(() => classic(bytes)));
    return r.sizes;
  }

  // ------------------------------------------------------------------ classic (web codec)

  async classicCompress(bytes: Uint8Array, identity: Identity | null): Promise<ClassicOut> {
    this.checkInput(bytes.length, "max", "the classic engine");
    return this.slow(() => this.classicNow(bytes, identity));
  }

  private async classicNow(bytes: Uint8Array, identity: Identity | null): Promise<ClassicOut> {
    const { method, out, sizes } = await classic(bytes);
    const p = profile(bytes);
    const print = await this.record(identity, bytes, p, out.length, `classic/${method}`, method);
    return {
      engine: "classic",
      method,
      path: `classic/${method}`,
      original_bytes: bytes.length,
      compressed_bytes: out.length,
      ratio: ratioOf(bytes.length, out.length),
      sizes,
      container: new Uint8Array(out.buffer, out.byteOffset, out.byteLength),
      print,
      profile: { data_class: p.data_class, path: p.path, feats: p.feats },
    };
  }

  /**
   * Decode a gzip (by its magic) or brotli stream: admitted like every decompression, on the libuv
   * thread pool (off the event loop), and stopped by zlib as soon as the output passes the output
   * limit or the ratio cap (these streams declare no size).
   */
  async classicDecompress(stream: Uint8Array): Promise<{ bytes: Uint8Array; method: "gzip-9" | "brotli-11" }> {
    const gzip = stream.length >= 3 && stream[0] === 0x1f && stream[1] === 0x8b && stream[2] === 8;
    const limit = this.limits.outputLimitBytes;
    const byRatio = Math.max(RATIO_FLOOR_BYTES, stream.length * this.maxRatio);
    const maxOutputLength = Math.max(1, Math.min(limit, byRatio));
    const out = await this.admit("decode", async () => {
      try {
        return await new Promise<Buffer>((resolve, reject) => {
          const done = (err: Error | null, b: Buffer) => (err ? reject(err) : resolve(b));
          // 1 MiB chunks: a few dozen hand-offs from the thread pool, not thousands of 16 KiB ones
          const opts = { maxOutputLength, chunkSize: Math.min(maxOutputLength, 1024 * 1024) };
          if (gzip) zlib.gunzip(stream, opts, done);
          else zlib.brotliDecompress(stream, opts, done);
        });
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (code === "ERR_BUFFER_TOO_LARGE" || /larger than|maxOutputLength/i.test(String(err))) {
          if (byRatio < limit) this.ratioExceeded(null, stream.length);
          throw new Problem(413, "codec_output_too_large", `The stream restores more than ${limit} bytes.`, {
            limit_bytes: limit,
            suite: SUITE_POINTER,
          });
        }
        throw new Problem(422, "classic_stream_invalid", `Not a valid ${gzip ? "gzip" : "brotli"} stream.`);
      }
    });
    return { bytes: new Uint8Array(out.buffer, out.byteOffset, out.byteLength), method: gzip ? "gzip-9" : "brotli-11" };
  }
}

function printOut(row: PrintRow): PrintOut {
  const bytes = Number(row.bytes);
  return {
    dataset_print_id: row.dataset_print_id,
    bytes,
    data_class: row.data_class,
    path: row.path,
    ratio: ratioOf(bytes, Number(row.compressed_bytes)),
    label: row.label,
    level: row.level,
    at: row.at,
  };
}
