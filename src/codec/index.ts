/**
 * Lab Phi codec — public API (pure library: no HTTP, no database).
 *
 *   profile(bytes)               → { path, data_class, feats }
 *   route(bytes, {level})        → { chamber, candidates, label, reason }
 *   compress(bytes, options)     → container bytes (framed, chunked or bare)
 *   compressWithReport(...)      → container + chamber, label, reason, candidate sizes
 *   decompress(container, opts)  → original bytes (strict, bounded; throws CodecError)
 *   decompressOffThread(...)     → the same decode on a worker thread (decode-pool.ts)
 *   inspect(container)           → header fields without decoding
 *   bench(bytes)                 → sizes/times per method with a round-trip verdict
 *   compressStream / decompressStream — node:stream Transforms (length-prefixed containers)
 */
import { Transform, type TransformCallback } from "node:stream";
import { promisify } from "node:util";
import zlib from "node:zlib";
import { brotliAsync, gzipAsync, xzCompress, zstdCompress } from "./backends.js";
import { CHAMBERS, chamberById } from "./chambers/registry.js";
import {
  CHAMBER_NAMES,
  type ChamberName,
  chamberId,
  type DecodeCtx,
  type Encoded,
  LEVELS,
  type Level,
} from "./chambers/types.js";
import { poolDecode } from "./decode-pool.js";
import { CodecError, fail } from "./errors.js";
import { type Block, isFramed, type Limits, parse, writeBare, writeFramed } from "./format/container.js";
import { crc32 } from "./format/crc32.js";
import { ByteReader, ByteWriter } from "./format/varint.js";
import { type Route, routeProfile } from "./router/index.js";
import { type DeclaredType, type Profile, profileBytes } from "./router/profile.js";
import { mapOrdered, OrderedWindow } from "./window.js";

export { compressInCallingThread } from "./backends.js";
export { CHAMBER_NAMES, type ChamberName, COMPRESS_CHAMBERS, LEVELS, type Level } from "./chambers/types.js";
export { DECODE_POOL_SIZE, decodePoolState, terminateDecodePool } from "./decode-pool.js";
export { CodecError, type CodecErrorCode } from "./errors.js";
export type { Route } from "./router/index.js";
export { DATA_CLASSES, type DataClass, type DeclaredType, type Feats, type Profile } from "./router/profile.js";

export const CODEC_VERSION = "1.0.0";
export const FORMAT_VERSION = 1;
/** framing overhead bound promised by the format: output ≤ input + 16 bytes (framed) */
export const MAX_OVERHEAD = 16;

export interface CompressOptions {
  level?: Level;
  /** force a chamber (any of CHAMBER_NAMES); otherwise the router chooses */
  chamber?: ChamberName;
  /** bare stream: no magic, no checksum (smallest outputs; no integrity check) */
  bare?: boolean;
  /** override detection */
  declaredType?: DeclaredType;
  /** split inputs larger than this into independently coded chunks (chunked frame) */
  chunkSize?: number;
}

export interface DecompressOptions {
  /** cap on the declared original size (default 256 MiB) */
  maxOutputBytes?: number;
  /** cap on original size / container size for outputs above ratioFloorBytes (default 1,000,000) */
  maxExpansionRatio?: number;
  /** outputs up to this size are allowed whatever the ratio (default 1 MiB) */
  ratioFloorBytes?: number;
  /**
   * cap on the bytes a context-mixing stream (chamber text, JSON at max) may declare
   * (default 64 MiB ≈ 2 min of decoding here): bounds decode time, → codec_too_large
   */
  maxModelOutputBytes?: number;
}

export interface CompressReport {
  container: Uint8Array;
  level: Level;
  chamber: ChamberName | "chunked";
  data_class: string;
  label: string;
  reason: string;
  bare: boolean;
  original_bytes: number;
  compressed_bytes: number;
  /** size of each candidate tried (container bytes), null when it did not apply */
  candidates: { chamber: ChamberName; bytes: number | null }[];
}

const DEFAULT_LIMITS: Limits = {
  maxOutputBytes: 256 * 1024 * 1024,
  maxExpansionRatio: 1_000_000,
  ratioFloorBytes: 1024 * 1024,
};

function checkLevel(level: unknown): Level {
  if (level === undefined) return "max";
  if (!LEVELS.includes(level as Level)) fail("codec_bad_option", `unknown level ${String(level)}`);
  return level as Level;
}

export function profile(bytes: Uint8Array, declaredType?: DeclaredType): Profile {
  return profileBytes(bytes, declaredType ?? null);
}

export function route(
  bytes: Uint8Array,
  options: { level?: Level; declaredType?: DeclaredType } = {},
): Route & {
  data_class: string;
} {
  const p = profile(bytes, options.declaredType);
  return { ...routeProfile(p, checkLevel(options.level)), data_class: p.data_class };
}

interface Choice {
  chamber: ChamberName;
  enc: Encoded;
}

/**
 * At max, inputs of at least GUARD_MIN_BYTES skip the general chamber (brotli-11
 * + xz-9, the slowest work after context mixing) when the modelling chambers already produced at
 * most GUARD_RATIO × a brotli-9 of the input (brotli-9 runs on the thread pool meanwhile), or when
 * brotli-9 saves under 1 %. On the benchmark corpus, wherever a modelling chamber came within
 * 0.85 × brotli-9 it was also smaller than both brotli-11 and xz-9, by 5 % or more; the benchmark
 * checks "never larger than min(brotli-11, xz-9) + 16 B" on every file it runs.
 */
export const GUARD_MIN_BYTES = 256 * 1024;
export const GUARD_RATIO = 0.85;
export const GUARD_INCOMPRESSIBLE = 0.99;

async function encodeBlock(
  input: Uint8Array,
  level: Level,
  forced: ChamberName | undefined,
  declared: DeclaredType | undefined,
): Promise<{ best: Choice; prof: Profile; route: Route; tried: { chamber: ChamberName; size: number | null }[] }> {
  const prof = profile(input, declared);
  const r: Route = forced
    ? { chamber: forced, candidates: [forced], label: `omni/${forced}`, reason: "chamber requested by the caller" }
    : routeProfile(prof, level);
  const tried: { chamber: ChamberName; size: number | null }[] = [];
  let best: Choice | null = null;
  const pending = new Map<ChamberName, Promise<Encoded | null>>();
  const start = (name: ChamberName): void => {
    const ch = CHAMBERS.get(name);
    if (!ch) fail("codec_bad_option", `unknown chamber ${name}`);
    const p = ch.accepts(input)
      ? ch.encode(input, { level, dataClass: prof.data_class, stride: prof.feats.stride })
      : Promise.resolve(null);
    p.catch(() => {}); // awaited below; this only marks the rejection as handled meanwhile
    pending.set(name, p);
  };
  const sizeOf = (e: Encoded | null): number => (e ? e.payload.length + e.params.length : Number.POSITIVE_INFINITY);
  const withGeneral = r.candidates.includes("general") && r.candidates.length > 1;
  const guarded = withGeneral && level === "max" && input.length >= GUARD_MIN_BYTES;
  let guardNote = "";
  if (withGeneral && !guarded) {
    // small inputs: the general chamber's backends run on the thread pool while the main
    // thread runs the modelling chambers
    start("general");
    await new Promise((res) => setImmediate(res)); // let the backend jobs reach the pool
  }
  // large inputs at max: a quick brotli-9 of the input runs on the pool meanwhile; the general
  // chamber (brotli-11, xz-9, strides) is then run only when the modelling chambers did not beat
  // that estimate clearly (see GUARD_RATIO)
  const quick = guarded ? brotliAsync(input, 9) : null;
  quick?.catch(() => {});
  for (const name of r.candidates) {
    if (name === "general" && guarded) continue;
    if (!pending.has(name)) {
      start(name);
      await pending.get(name)!.catch(() => null); // one modelling chamber at a time
    }
  }
  if (guarded && quick) {
    let modelled = Number.POSITIVE_INFINITY;
    for (const name of r.candidates)
      if (name !== "general") modelled = Math.min(modelled, sizeOf(await pending.get(name)!));
    const q9 = (await quick).length;
    if (modelled <= GUARD_RATIO * q9)
      guardNote = `general skipped: ${modelled} B ≤ ${GUARD_RATIO} × brotli-9 (${q9} B)`;
    else if (q9 >= GUARD_INCOMPRESSIBLE * input.length)
      guardNote = `general skipped: brotli-9 saves under ${Math.round((1 - GUARD_INCOMPRESSIBLE) * 100)} %`;
    else start("general");
  }
  for (const name of r.candidates) {
    const p = pending.get(name);
    if (!p) {
      tried.push({ chamber: name, size: null });
      continue;
    }
    const enc = await p;
    const size = enc ? sizeOf(enc) : null;
    tried.push({ chamber: name, size });
    if (enc && (!best || size! < sizeOf(best.enc))) best = { chamber: name, enc };
  }
  if (forced && !best) fail("codec_bad_input", `chamber ${forced} cannot encode this input`);
  // never expand: stored fallback (not when the caller forced a chamber)
  if (!forced && (!best || best.enc.payload.length + best.enc.params.length >= input.length)) {
    best = { chamber: "high_entropy", enc: { params: new Uint8Array(0), payload: input } };
  }
  return { best: best!, prof, route: guardNote ? { ...r, reason: `${r.reason}; ${guardNote}` } : r, tried };
}

export async function compressWithReport(bytes: Uint8Array, options: CompressOptions = {}): Promise<CompressReport> {
  const level = checkLevel(options.level);
  if (options.chamber !== undefined && !CHAMBERS.has(options.chamber))
    fail("codec_bad_option", `unknown chamber ${String(options.chamber)}`);
  if (!(bytes instanceof Uint8Array)) fail("codec_bad_input", "input must be bytes");
  // a plain view: Buffer#slice shares memory, Uint8Array#slice copies — chambers rely on the latter
  const input = plain(bytes);
  const chunkSize = options.chunkSize;
  if (chunkSize !== undefined && !(Number.isSafeInteger(chunkSize) && chunkSize >= 4096))
    fail("codec_bad_option", "chunkSize must be an integer ≥ 4096");
  if (chunkSize !== undefined && input.length > chunkSize && !options.bare) {
    const blocks: Block[] = [];
    let label = "";
    let reason = "";
    let cls = "";
    const cands: CompressReport["candidates"] = [];
    const parts: Uint8Array[] = [];
    for (let off = 0; off < input.length; off += chunkSize)
      parts.push(input.subarray(off, Math.min(input.length, off + chunkSize)));
    // chunks are independent: several are coded at once (context mixing on the worker pool)
    const coded = await mapOrdered(parts, (part) => encodeBlock(part, level, options.chamber, options.declaredType));
    for (const [i, { best, prof, route: r, tried }] of coded.entries()) {
      const part = parts[i]!;
      blocks.push({ chamber: chamberId(best.chamber), rawLen: part.length, ...best.enc });
      if (!label) {
        label = `omni/chunked(${r.label})`;
        reason = `${Math.ceil(input.length / chunkSize)} chunks of ≤ ${chunkSize} B, each routed; first: ${r.reason}`;
        cls = prof.data_class;
      }
      for (const t of tried) cands.push({ chamber: t.chamber, bytes: t.size });
    }
    let container = writeFramed(level, blocks, input, true);
    let chamber: CompressReport["chamber"] = "chunked";
    if (container.length > input.length + MAX_OVERHEAD) {
      container = writeFramed(
        level,
        [{ chamber: 0, rawLen: input.length, params: new Uint8Array(0), payload: input }],
        input,
        false,
      );
      chamber = "high_entropy";
    }
    return {
      container,
      level,
      chamber,
      data_class: cls,
      label,
      reason,
      bare: false,
      original_bytes: input.length,
      compressed_bytes: container.length,
      candidates: cands,
    };
  }
  const { best, prof, route: r, tried } = await encodeBlock(input, level, options.chamber, options.declaredType);
  const block: Block = { chamber: chamberId(best.chamber), rawLen: input.length, ...best.enc };
  const container = options.bare ? writeBare(level, block) : writeFramed(level, [block], input, false);
  const lost = tried.filter((t) => t.chamber !== best.chamber && t.size !== null);
  const reason =
    `${r.reason}; ${best.chamber} won` +
    (lost.length ? ` (${lost.map((t) => `${t.chamber} ${t.size} B`).join(", ")} vs ${container.length} B)` : "");
  return {
    container,
    level,
    chamber: best.chamber,
    data_class: prof.data_class,
    label: `omni/${best.chamber}`,
    reason,
    bare: options.bare === true,
    original_bytes: input.length,
    compressed_bytes: container.length,
    candidates: tried.map((t) => ({ chamber: t.chamber, bytes: t.size })),
  };
}

export async function compress(bytes: Uint8Array, options: CompressOptions = {}): Promise<Uint8Array> {
  return (await compressWithReport(bytes, options)).container;
}

function limitsOf(o: DecompressOptions): Limits {
  const l = { ...DEFAULT_LIMITS };
  if (o.maxOutputBytes !== undefined) {
    if (!(Number.isSafeInteger(o.maxOutputBytes) && o.maxOutputBytes >= 0))
      fail("codec_bad_option", "bad maxOutputBytes");
    l.maxOutputBytes = o.maxOutputBytes;
  }
  if (o.maxExpansionRatio !== undefined) {
    if (!(o.maxExpansionRatio >= 1)) fail("codec_bad_option", "bad maxExpansionRatio");
    l.maxExpansionRatio = o.maxExpansionRatio;
  }
  if (o.ratioFloorBytes !== undefined) {
    if (!(Number.isSafeInteger(o.ratioFloorBytes) && o.ratioFloorBytes >= 0))
      fail("codec_bad_option", "bad ratioFloorBytes");
    l.ratioFloorBytes = o.ratioFloorBytes;
  }
  l.ratioFloorBytes = Math.min(l.ratioFloorBytes, l.maxOutputBytes);
  return l;
}

export interface Inspection {
  bare: boolean;
  legacy: boolean;
  version: number;
  level: Level;
  chunked: boolean;
  chambers: string[];
  original_bytes: number;
  checksum: number | null;
}

export function inspect(container: Uint8Array, options: DecompressOptions = {}): Inspection {
  if (isGzip(container))
    return {
      bare: false,
      legacy: true,
      version: 0,
      level: "max",
      chunked: false,
      chambers: ["legacy"],
      original_bytes: -1,
      checksum: null,
    };
  const p = parse(container, limitsOf(options));
  return {
    bare: p.bare,
    legacy: false,
    version: p.version,
    level: p.level,
    chunked: p.chunked,
    chambers: p.blocks.map((b) => CHAMBER_NAMES[b.chamber] ?? `unknown(${b.chamber})`),
    original_bytes: p.originalLength,
    checksum: p.checksum,
  };
}

const isGzip = (b: Uint8Array): boolean => b.length >= 3 && b[0] === 0x1f && b[1] === 0x8b && b[2] === 8;

export async function decompress(container: Uint8Array, options: DecompressOptions = {}): Promise<Uint8Array> {
  if (!(container instanceof Uint8Array)) fail("codec_bad_input", "container must be bytes");
  container = plain(container);
  const lim = limitsOf(options);
  if (isGzip(container)) {
    // a bare legacy gzip stream from an older client
    // no declared size: zlib stops as soon as the output passes the cap (never inflates it all)
    const byRatio = Math.max(lim.ratioFloorBytes, container.length * lim.maxExpansionRatio);
    const cap = Math.min(lim.maxOutputBytes, byRatio);
    try {
      return plain(zlib.gunzipSync(container, { maxOutputLength: Math.max(1, cap) }));
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      if (/buffer|length|large/i.test(msg)) {
        if (byRatio < lim.maxOutputBytes)
          fail("codec_ratio_exceeded", `legacy gzip stream expands more than ${lim.maxExpansionRatio}× its size`);
        fail("codec_too_large", "legacy gzip stream exceeds the output cap");
      }
      fail("codec_corrupt", `legacy gzip stream invalid: ${msg}`);
    }
  }
  const p = parse(container, lim);
  const mm = options.maxModelOutputBytes ?? 64 * 1024 * 1024;
  if (!(Number.isSafeInteger(mm) && mm >= 0)) fail("codec_bad_option", "bad maxModelOutputBytes");
  const ctx: DecodeCtx = { maxOutputBytes: lim.maxOutputBytes, maxModelOutputBytes: mm };
  for (const b of p.blocks)
    if (!chamberById(b.chamber)) fail("codec_unknown_chamber", `unknown chamber id ${b.chamber}`);
  // chunks are independent: several decode at once; the first failing chunk (in order) is reported
  const parts = await mapOrdered(p.blocks, async (b) => {
    const ch = chamberById(b.chamber)!;
    let out: Uint8Array;
    try {
      out = await ch.decode(b.params, b.payload, b.rawLen, ctx);
    } catch (e) {
      if (e instanceof CodecError) throw e;
      // any other failure inside a decoder is a malformed payload, never a crash
      fail("codec_corrupt", `chamber ${ch.name} failed on a malformed payload`);
    }
    if (out.length !== b.rawLen)
      fail("codec_corrupt", `chamber ${ch.name} produced ${out.length} of ${b.rawLen} bytes`);
    return out;
  });
  const out = parts.length === 1 ? parts[0]! : concat(parts, p.originalLength);
  if (p.checksum !== null && crc32(out) !== p.checksum)
    fail("codec_checksum_mismatch", "checksum of the output differs");
  return plain(out);
}

/**
 * decompress() on a worker thread of the decode pool (decode-pool.ts): the same checks, bytes and
 * CodecErrors, but the caller's event loop stays free however large the output. The header is
 * checked here first (declared size against maxOutputBytes and the expansion-ratio cap), so a
 * container that lies about its size never reaches a worker, let alone an allocation.
 */
export async function decompressOffThread(container: Uint8Array, options: DecompressOptions = {}): Promise<Uint8Array> {
  if (!(container instanceof Uint8Array)) fail("codec_bad_input", "container must be bytes");
  inspect(container, options);
  return plain(await poolDecode(container, { ...options }, () => decompress(container, options)));
}

/** always hand back a plain Uint8Array (not a Buffer subclass) */
const plain = (b: Uint8Array): Uint8Array =>
  Object.getPrototypeOf(b) === Uint8Array.prototype ? b : new Uint8Array(b.buffer, b.byteOffset, b.byteLength);

function concat(parts: Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

// ---------------------------------------------------------------- bench

export interface BenchMethod {
  method: string;
  bytes: number;
  ratio: number;
  compress_ms: number;
  decompress_ms: number;
  roundtrip: boolean;
}
export interface BenchResult {
  original_bytes: number;
  data_class: string;
  chamber: string;
  methods: BenchMethod[];
  /** omni bytes / brotli-11 bytes */
  omni_vs_brotli: number;
  roundtrip: boolean;
}

const now = (): number => Number(process.hrtime.bigint()) / 1e6;
const same = (a: Uint8Array, b: Uint8Array): boolean => Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;

/**
 * Compress with omni (at the given levels) and the classic peers (gzip-9, brotli-11; zstd-19 and
 * xz-9 with `peers: "all"`), decompress every output and compare byte for byte. The peers run on
 * the libuv thread pool, one after another, so the caller's event loop stays free.
 */
export async function bench(
  bytes: Uint8Array,
  options: { levels?: Level[]; peers?: "classic" | "all"; offThread?: boolean } = {},
): Promise<BenchResult> {
  // omni round trips on the decode pool when asked (servers); the peers decode on the thread pool
  const decode = options.offThread ? decompressOffThread : decompress;
  const levels = options.levels ?? ["max"];
  const methods: BenchMethod[] = [];
  let chamber = "";
  let cls = "";
  for (const level of levels) {
    let t = now();
    const rep = await compressWithReport(bytes, { level });
    const ct = now() - t;
    t = now();
    const back = await decode(rep.container, {
      maxOutputBytes: bytes.length,
      maxExpansionRatio: Number.MAX_SAFE_INTEGER,
    });
    const dt = now() - t;
    chamber ||= rep.chamber;
    cls ||= rep.data_class;
    methods.push(mk(`omni-${level}`, bytes.length, rep.container.length, ct, dt, same(back, bytes)));
  }
  {
    let t = now();
    const g = await gzipAsync(bytes, 9);
    const ct = now() - t;
    t = now();
    const back = await promisify(zlib.gunzip)(g);
    methods.push(mk("gzip-9", bytes.length, g.length, ct, now() - t, same(back, bytes)));
  }
  {
    let t = now();
    const b = await brotliAsync(bytes, 11);
    const ct = now() - t;
    t = now();
    const back = await promisify(zlib.brotliDecompress)(b);
    methods.push(mk("brotli-11", bytes.length, b.length, ct, now() - t, same(back, bytes)));
  }
  if (options.peers === "all") {
    const { backendDecode } = await import("./backends.js");
    let t = now();
    const z = await zstdCompress(bytes, 19);
    if (z) {
      const ct = now() - t;
      t = now();
      const back = await backendDecode(2, z, bytes.length);
      methods.push(mk("zstd-19", bytes.length, z.length, ct, now() - t, same(back, bytes)));
    }
    t = now();
    const x = await xzCompress(bytes, 9);
    if (x) {
      const ct = now() - t;
      t = now();
      const back = await backendDecode(3, x, bytes.length);
      methods.push(mk("xz-9", bytes.length, x.length, ct, now() - t, same(back, bytes)));
    }
  }
  const omni = methods[0]!;
  const br = methods.find((m) => m.method === "brotli-11")!;
  return {
    original_bytes: bytes.length,
    data_class: cls,
    chamber,
    methods,
    omni_vs_brotli: br.bytes ? Math.round((omni.bytes / br.bytes) * 10000) / 10000 : 1,
    roundtrip: methods.every((m) => m.roundtrip),
  };
}

/** The classic engine: the smaller of brotli-11 and gzip-9 (both on the thread pool, at once). */
export async function classic(
  bytes: Uint8Array,
): Promise<{ method: "brotli-11" | "gzip-9"; out: Uint8Array; sizes: { "brotli-11": number; "gzip-9": number } }> {
  const [br, gz] = await Promise.all([brotliAsync(bytes, 11), gzipAsync(bytes, 9)]);
  const method = br.length <= gz.length ? "brotli-11" : "gzip-9";
  const out = method === "brotli-11" ? br : gz;
  return { method, out, sizes: { "brotli-11": br.length, "gzip-9": gz.length } };
}

function mk(method: string, n: number, size: number, ct: number, dt: number, ok: boolean): BenchMethod {
  return {
    method,
    bytes: size,
    ratio: size ? Math.round((n / size) * 1000) / 1000 : 0,
    compress_ms: Math.round(ct * 100) / 100,
    decompress_ms: Math.round(dt * 100) / 100,
    roundtrip: ok,
  };
}

// ---------------------------------------------------------------- streaming

/**
 * Streaming: the input is cut into chunks of `chunkSize` bytes (default 4 MiB); each chunk
 * becomes one framed container, written as uvarint(length) + container, in input order. Up to
 * CHUNK_WINDOW chunks are coded at once, so memory is bounded by that many chunks and containers.
 */
export function compressStream(options: CompressOptions & { chunkSize?: number } = {}): Transform {
  const size = options.chunkSize ?? 4 * 1024 * 1024;
  if (!(Number.isSafeInteger(size) && size >= 4096)) fail("codec_bad_option", "chunkSize must be an integer ≥ 4096");
  let pending: Buffer[] = [];
  let have = 0;
  const { chunkSize: _c, bare: _b, ...opts } = options;
  const window = new OrderedWindow<Uint8Array>();
  const record = async (part: Uint8Array): Promise<Uint8Array> => {
    const c = await compress(part, opts);
    const w = new ByteWriter(c.length + 8);
    w.uvarint(c.length);
    w.bytes(c);
    return w.finish();
  };
  const emit = async (t: Transform, part: Uint8Array): Promise<void> => {
    for (const r of await window.add(record(part))) t.push(r);
  };
  return new Transform({
    async transform(chunk: Buffer, _enc, cb: TransformCallback) {
      try {
        pending.push(chunk);
        have += chunk.length;
        while (have >= size) {
          const all = Buffer.concat(pending);
          await emit(this, all.subarray(0, size));
          pending = [all.subarray(size)];
          have = all.length - size;
        }
        cb();
      } catch (e) {
        cb(e as Error);
      }
    },
    async flush(cb: TransformCallback) {
      try {
        if (have > 0) await emit(this, Buffer.concat(pending));
        for (const r of await window.drain()) this.push(r);
        cb();
      } catch (e) {
        cb(e as Error);
      }
    },
  });
}

export function decompressStream(options: DecompressOptions & { maxContainerBytes?: number } = {}): Transform {
  const maxContainer = options.maxContainerBytes ?? 64 * 1024 * 1024;
  let buf: Buffer = Buffer.alloc(0);
  const window = new OrderedWindow<Uint8Array>();
  const drain = async (t: Transform, final: boolean): Promise<void> => {
    for (;;) {
      if (buf.length === 0) return;
      const r = new ByteReader(buf);
      let len: number;
      try {
        len = r.uvarint();
      } catch (e) {
        if (!final && e instanceof CodecError && e.code === "codec_truncated") return;
        throw e;
      }
      if (len > maxContainer) fail("codec_too_large", "stream record larger than maxContainerBytes");
      if (r.remaining < len) {
        if (final) fail("codec_truncated", "stream ends inside a record");
        return;
      }
      const c = buf.subarray(r.pos, r.pos + len);
      if (!isFramed(c)) fail("codec_bad_magic", "stream record is not a framed container");
      for (const out of await window.add(decompress(c, options))) t.push(out);
      buf = buf.subarray(r.pos + len);
    }
  };
  return new Transform({
    async transform(chunk: Buffer, _e, cb: TransformCallback) {
      try {
        buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
        await drain(this, false);
        cb();
      } catch (e) {
        cb(e as Error);
      }
    },
    async flush(cb: TransformCallback) {
      try {
        await drain(this, true);
        for (const out of await window.drain()) this.push(out);
        cb();
      } catch (e) {
        cb(e as Error);
      }
    },
  });
}

/** descriptor of the engine for GET endpoints and docs */
export function describe(): {
  version: string;
  format_version: number;
  levels: readonly Level[];
  chambers: { name: ChamberName; id: number; summary: string }[];
} {
  return {
    version: CODEC_VERSION,
    format_version: FORMAT_VERSION,
    levels: LEVELS,
    chambers: CHAMBER_NAMES.map((name) => ({ name, id: chamberId(name), summary: CHAMBERS.get(name)!.summary })),
  };
}

export { isFramed };
