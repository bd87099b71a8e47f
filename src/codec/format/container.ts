import { fail } from "../errors.js";
import { crc32 } from "./crc32.js";
import { ByteReader, ByteWriter } from "./varint.js";

/**
 * Container layouts (see docs/codec-format.md).
 *
 * Framed (version 1):
 *   CF 86 | version | flags | chamber | uvarint original length | uvarint params length | params |
 *   payload … | CRC-32 of the original bytes (LE)
 * Chunked frame (flags bit 2, chamber byte 0xFF):
 *   CF 86 | version | flags | FF | uvarint original length | uvarint chunk count |
 *   { chamber | uvarint chunk length | uvarint params length | params | uvarint payload length | payload }* | CRC-32
 * Bare (no magic, no checksum):
 *   (level << 5 | chamber) | uvarint original length | uvarint params length | params | payload …
 */
export const MAGIC0 = 0xcf;
export const MAGIC1 = 0x86;
export const VERSION = 1;
export const CHUNKED = 0xff;
export const LEVEL_CODES = ["fast", "balanced", "max"] as const;
export type LevelName = (typeof LEVEL_CODES)[number];

export interface Block {
  chamber: number;
  rawLen: number;
  params: Uint8Array;
  payload: Uint8Array;
}

export interface Parsed {
  bare: boolean;
  version: number;
  level: LevelName;
  chunked: boolean;
  originalLength: number;
  blocks: Block[];
  checksum: number | null;
}

export function isFramed(b: Uint8Array): boolean {
  return b.length >= 2 && b[0] === MAGIC0 && b[1] === MAGIC1;
}

export function writeFramed(level: LevelName, blocks: Block[], original: Uint8Array, chunked: boolean): Uint8Array {
  const w = new ByteWriter(64 + blocks.reduce((s, b) => s + b.payload.length + b.params.length + 12, 0));
  w.byte(MAGIC0);
  w.byte(MAGIC1);
  w.byte(VERSION);
  w.byte(LEVEL_CODES.indexOf(level) | (chunked ? 4 : 0));
  if (!chunked) {
    const b = blocks[0]!;
    w.byte(b.chamber);
    w.uvarint(original.length);
    w.block(b.params);
    w.bytes(b.payload);
  } else {
    w.byte(CHUNKED);
    w.uvarint(original.length);
    w.uvarint(blocks.length);
    for (const b of blocks) {
      w.byte(b.chamber);
      w.uvarint(b.rawLen);
      w.block(b.params);
      w.block(b.payload);
    }
  }
  w.u32le(crc32(original));
  return w.finish();
}

export function writeBare(level: LevelName, block: Block): Uint8Array {
  if (block.chamber >= 32) throw new RangeError("bare mode supports chamber ids < 32");
  const w = new ByteWriter(block.payload.length + 16);
  w.byte((LEVEL_CODES.indexOf(level) << 5) | block.chamber);
  w.uvarint(block.rawLen);
  w.block(block.params);
  w.bytes(block.payload);
  return w.finish();
}

export interface Limits {
  maxOutputBytes: number;
  maxExpansionRatio: number;
  /** sizes up to this many bytes are allowed whatever the ratio */
  ratioFloorBytes: number;
}

function checkDeclared(len: number, containerLen: number, lim: Limits): void {
  if (len > lim.maxOutputBytes) fail("codec_too_large", `declared size ${len} exceeds the cap ${lim.maxOutputBytes}`);
  if (len > lim.ratioFloorBytes && len > containerLen * lim.maxExpansionRatio)
    fail("codec_ratio_exceeded", `declared size ${len} is more than ${lim.maxExpansionRatio}× the container`);
}

export function parse(b: Uint8Array, lim: Limits): Parsed {
  if (b.length === 0) fail("codec_truncated", "empty container");
  if (!isFramed(b)) {
    const r = new ByteReader(b);
    const h = r.byte();
    if (h & 0x80) fail("codec_bad_magic", "not a codec container (bad magic)");
    const level = LEVEL_CODES[(h >> 5) & 3];
    if (!level) fail("codec_bad_flags", "unknown level in bare header");
    const rawLen = r.uvarint();
    checkDeclared(rawLen, b.length, lim);
    const params = r.block();
    const payload = r.bytes(r.remaining);
    return {
      bare: true,
      version: VERSION,
      level,
      chunked: false,
      originalLength: rawLen,
      blocks: [{ chamber: h & 31, rawLen, params, payload }],
      checksum: null,
    };
  }
  if (b.length < 5 + 1 + 1 + 4) fail("codec_truncated", "container shorter than its fixed fields");
  const r = new ByteReader(b, 2, b.length - 4);
  const version = r.byte();
  if (version !== VERSION) fail("codec_bad_version", `unsupported container version ${version}`);
  const flags = r.byte();
  if (flags & ~7) fail("codec_bad_flags", "reserved flag bits set");
  const level = LEVEL_CODES[flags & 3];
  if (!level) fail("codec_bad_flags", "unknown level");
  const chunked = (flags & 4) !== 0;
  const chamber = r.byte();
  const originalLength = r.uvarint();
  checkDeclared(originalLength, b.length, lim);
  const blocks: Block[] = [];
  if (!chunked) {
    if (chamber === CHUNKED) fail("codec_bad_flags", "chunk marker without the chunked flag");
    const params = r.block();
    blocks.push({ chamber, rawLen: originalLength, params, payload: r.bytes(r.remaining) });
  } else {
    if (chamber !== CHUNKED) fail("codec_bad_flags", "chunked flag without the chunk marker");
    const count = r.uvarintMax(Math.max(1, originalLength), "chunk count");
    let sum = 0;
    for (let i = 0; i < count; i++) {
      const ch = r.byte();
      const rawLen = r.uvarintMax(originalLength - sum, "chunk length");
      sum += rawLen;
      const params = r.block();
      const payload = r.block();
      blocks.push({ chamber: ch, rawLen, params, payload });
    }
    if (sum !== originalLength) fail("codec_corrupt", "chunk lengths do not add up to the original length");
    if (r.remaining !== 0) fail("codec_trailing_bytes", "bytes after the last chunk");
  }
  const checksum = new ByteReader(b, b.length - 4).u32le();
  return { bare: false, version, level, chunked, originalLength, blocks, checksum };
}
