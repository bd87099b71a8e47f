import type { Kysely } from "kysely";
import {
  type BenchResult,
  bench,
  CHAMBER_NAMES,
  type ChamberName,
  type CompressReport,
  compressWithReport,
  type DeclaredType,
  decompressOffThread,
  type Feats,
  type Inspection,
  inspect,
  type Level,
  profile,
  route,
  SLOW_DECODE_CHAMBERS,
} from "../codec/index.js";
import type { Database } from "../db/schema.js";
import { Problem } from "../http/problem.js";
import type { Identity } from "../identity/service.js";
import { VERSIONS } from "../versions.js";
import {
  Admission,
  codecCall,
  type EngineLimits,
  hostileCall,
  type Logger,
  RATIO_FLOOR_BYTES,
  SUITE_POINTER,
} from "./admission.js";
import { type BarrelState, Barrels } from "./barrel.js";
import { ClassicEngine, type ClassicOut } from "./classic.js";
import { engineDescriptor, webDescriptor } from "./descriptors.js";
import { type CorpusName, GENERATORS, generate, generatedBytes } from "./generators.js";
import { type Fingerprint, type PrintOut, Prints, ratioOf } from "./prints.js";
import type { Direction } from "./tables.js";

export {
  codecProblem,
  DEFAULT_DECODE_CONCURRENCY,
  DEFAULT_MAX_RATIO,
  type EngineLimits,
  type Logger,
  RATIO_FLOOR_BYTES,
  SUITE_POINTER,
} from "./admission.js";
export { BARREL_CHAMBERS, BARREL_INITIAL, BARREL_NAMES, BARREL_REST, type BarrelState } from "./barrel.js";
export type { ClassicOut } from "./classic.js";
export { DECLARED_TYPES, LEVEL_TRADEOFF, OPS, type Op, PATHS, WEB_OPS } from "./descriptors.js";
export type { Fingerprint, PrintOut } from "./prints.js";

/**
 * The codec's service face: compress, decompress, profile, route, bench and process over the
 * codec library's public API (src/codec/index.ts), with the parts in their own modules: limits and
 * admission control (admission.ts), barrels (barrel.ts), prints (prints.ts), the classic engine
 * (classic.ts) and the descriptors (descriptors.ts). No HTTP types here.
 */

/**
 * Chambers that may decode with context mixing (level max; each chamber's `slowDecode` in the
 * codec's registry): about as slow to decode as to encode, so their output over HTTP is capped at
 * the slow limit. Every other chamber decodes at
 * typed-transform or backend speed; a name the library does not know counts as slow.
 */
const isSlowDecode = (chamber: string) =>
  !(CHAMBER_NAMES as readonly string[]).includes(chamber) || SLOW_DECODE_CHAMBERS.has(chamber as ChamberName);

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

const ms = (t0: number): number => Math.round((performance.now() - t0) * 100) / 100;
const sameBytes = (a: Uint8Array, b: Uint8Array): boolean =>
  a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b));

export class EngineService {
  private readonly admission: Admission;
  private readonly barrels: Barrels;
  private readonly printBook: Prints;
  private readonly classicEngine: ClassicEngine;

  constructor(
    db: Kysely<Database>,
    readonly limits: EngineLimits,
    printKey: string,
    private readonly log: Logger,
  ) {
    this.admission = new Admission(limits);
    this.barrels = new Barrels(db);
    this.printBook = new Prints(db, printKey);
    this.classicEngine = new ClassicEngine(this.admission, this.printBook);
  }

  async init(): Promise<void> {
    await this.barrels.init();
  }

  // ------------------------------------------------------------------ descriptors

  engineDescriptor() {
    return engineDescriptor(this.limitsDescriptor());
  }

  webDescriptor() {
    return webDescriptor(this.limitsDescriptor());
  }

  limitsDescriptor() {
    return this.admission.limitsDescriptor();
  }

  // ------------------------------------------------------------------ limits

  /** Largest input a level (or bench/process) accepts over HTTP. */
  inputLimit(level: Level | "bench"): number {
    return this.admission.inputLimit(level);
  }

  checkInput(bytes: number, level: Level | "bench", what = `level ${level}`): void {
    this.admission.checkInput(bytes, level, what);
  }

  /** The 413 problem for an input over the level's limit; points to level fast, the CLI and suite jobs. */
  tooLarge(bytes: number, level: Level | "bench", what = `level ${level}`): never {
    return this.admission.tooLarge(bytes, level, what);
  }

  get maxRatio(): number {
    return this.admission.maxRatio;
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

  // ------------------------------------------------------------------ prints and barrels

  fingerprint(bytes: Uint8Array, declared?: DeclaredType): Fingerprint {
    return this.printBook.fingerprint(bytes, declared);
  }

  prints(identity: Identity | null, page: { limit: number; offset: number }) {
    return this.printBook.list(identity, page);
  }

  barrel(): Promise<Record<Direction, BarrelState>> {
    return this.barrels.state();
  }

  // ------------------------------------------------------------------ codec calls

  profileOf(bytes: Uint8Array, declared?: DeclaredType) {
    return profile(bytes, declared);
  }

  async routeOf(bytes: Uint8Array, level: Level, declared?: DeclaredType) {
    return codecCall(() => {
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
    this.admission.checkInput(bytes.length, options.level);
    return options.level === "fast"
      ? this.compressChecked(bytes, options, identity)
      : this.admission.slow(() => this.compressChecked(bytes, options, identity));
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
    let report: CompressReport = await codecCall(() => compressWithReport(bytes, opts));
    const took = ms(t0);
    if (!(await this.roundTrips(report.container, bytes))) {
      this.log.error(
        { chamber: report.chamber, level: report.level, bytes: bytes.length },
        "codec round trip failed; stored instead",
      );
      report = await codecCall(() => compressWithReport(bytes, { ...opts, chamber: "high_entropy" }));
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
    await this.barrels.fire("compress", chambers);
    const print = await this.printBook.record(identity, bytes, p, report.container.length, report.label, report.level);
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
    const info: Inspection = await hostileCall(this.log, () =>
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
    if (info.original_bytes > RATIO_FLOOR_BYTES && info.original_bytes > container.length * this.admission.maxRatio)
      this.admission.ratioExceeded(info.original_bytes, container.length);
    const t0 = performance.now();
    const out = await this.admission.admit("decode", () =>
      hostileCall(this.log, () =>
        decompressOffThread(container, {
          maxOutputBytes: cap,
          maxExpansionRatio: this.admission.maxRatio,
          ratioFloorBytes: RATIO_FLOOR_BYTES,
        }),
      ),
    );
    const took = ms(t0);
    await this.barrels.fire("decompress", info.chambers);
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
    this.admission.checkInput(bytes.length, "bench", "bench");
    const r = await this.admission.slow(() => codecCall(() => bench(bytes, { levels: [level], offThread: true })));
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
    this.admission.checkInput(bytes.length, "bench", "process");
    const r = await this.admission.slow(() => codecCall(() => bench(bytes, { levels: [level], offThread: true })));
    const omni = r.methods[0];
    if (!omni) throw new Problem(500, "internal_error", "bench returned no omni result");
    const peers = r.methods.slice(1);
    const ok = r.roundtrip && r.methods.every((m) => m.roundtrip);
    const p = profile(bytes);
    await this.barrels.fire("compress", [r.chamber]);
    await this.barrels.fire("decompress", [r.chamber]);
    const print = await this.printBook.record(identity, bytes, p, omni.bytes, `omni/${r.chamber}`, level);
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

  // ------------------------------------------------------------------ classic (web codec)

  /** gzip-9 and brotli-11 sizes of the same bytes, measured (classic.ts). */
  peerSizes(bytes: Uint8Array): Promise<{ "brotli-11": number; "gzip-9": number }> {
    return this.classicEngine.peerSizes(bytes);
  }

  classicCompress(bytes: Uint8Array, identity: Identity | null): Promise<ClassicOut> {
    return this.classicEngine.compress(bytes, identity);
  }

  classicDecompress(stream: Uint8Array): Promise<{ bytes: Uint8Array; method: "gzip-9" | "brotli-11" }> {
    return this.classicEngine.decompress(stream);
  }
}
