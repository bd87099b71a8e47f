/**
 * What the codec's public API modules share: option and report shapes, versions, default limits
 * and the small checks every entry point runs (src/codec/index.ts re-exports the public parts).
 */
import type { ChamberName, Level } from "../chambers/types.js";
import { LEVELS } from "../chambers/types.js";
import { fail } from "../errors.js";
import type { Limits } from "../format/container.js";
import type { DeclaredType } from "../router/profile.js";

export const CODEC_VERSION = "1.6.0";
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

export function checkLevel(level: unknown): Level {
  if (level === undefined) return "max";
  if (!LEVELS.includes(level as Level)) fail("codec_bad_option", `unknown level ${String(level)}`);
  return level as Level;
}

export function limitsOf(o: DecompressOptions): Limits {
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

/** always hand back a plain Uint8Array (not a Buffer subclass) */
export const plain = (b: Uint8Array): Uint8Array =>
  Object.getPrototypeOf(b) === Uint8Array.prototype ? b : new Uint8Array(b.buffer, b.byteOffset, b.byteLength);

/** a bare legacy gzip stream from an older client (RFC 1952 magic, deflate) */
export const isGzip = (b: Uint8Array): boolean => b.length >= 3 && b[0] === 0x1f && b[1] === 0x8b && b[2] === 8;
