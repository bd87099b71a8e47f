/**
 * Lab Phi codec — public API (pure library: no HTTP, no database). A facade: each entry point
 * lives in its own module under ./api/, so a caller that needs one of them loads only that.
 *
 *   profile(bytes)               → { path, data_class, feats }                      api/profile.ts
 *   route(bytes, {level})        → { chamber, candidates, label, reason }           api/profile.ts
 *   compress(bytes, options)     → container bytes (framed, chunked or bare)        api/compress.ts
 *   compressWithReport(...)      → container + chamber, label, reason, candidate sizes
 *   decompress(container, opts)  → original bytes (strict, bounded; throws CodecError) api/decompress.ts
 *   decompressOffThread(...)     → the same decode on a worker thread (decode-pool.ts) api/offthread.ts
 *   inspect(container)           → header fields without decoding
 *   bench(bytes), classic(bytes) → sizes/times per method with a round-trip verdict   api/bench.ts
 *   compressStream / decompressStream — node:stream Transforms (length-prefixed containers) api/stream.ts
 *   describe()                   → versions, levels, chambers                       api/describe.ts
 */
export { type BenchMethod, type BenchResult, bench, classic } from "./api/bench.js";
export { compress, compressWithReport, GUARD_INCOMPRESSIBLE, GUARD_MIN_BYTES, GUARD_RATIO } from "./api/compress.js";
export { decompress, type Inspection, inspect } from "./api/decompress.js";
export { describe } from "./api/describe.js";
export { decompressOffThread } from "./api/offthread.js";
export { profile, route } from "./api/profile.js";
export {
  CODEC_VERSION,
  type CompressOptions,
  type CompressReport,
  type DecompressOptions,
  FORMAT_VERSION,
  MAX_OVERHEAD,
} from "./api/shared.js";
export { compressStream, decompressStream } from "./api/stream.js";
export { compressInCallingThread } from "./backends.js";
export { CHAMBER_NAMES, type ChamberName, COMPRESS_CHAMBERS, SLOW_DECODE_CHAMBERS } from "./chambers/registry.js";
export { LEVELS, type Level } from "./chambers/types.js";
export { DECODE_POOL_SIZE, decodePoolState, terminateDecodePool } from "./decode-pool.js";
export { CodecError, type CodecErrorCode } from "./errors.js";
export { isFramed } from "./format/container.js";
export { ROUTE_PATHS, type Route, type RoutePath } from "./router/index.js";
export { DATA_CLASSES, type DataClass, type DeclaredType, type Feats, type Profile } from "./router/profile.js";
