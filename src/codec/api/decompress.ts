/**
 * decompress(container) and inspect(container): strict, bounded decoding (every failure is a
 * CodecError) in the caller's thread; decompressOffThread (offthread.ts) runs it on the decode pool.
 */
import zlib from "node:zlib";
import { CHAMBER_NAMES, chamberById } from "../chambers/registry.js";
import type { DecodeCtx, Level } from "../chambers/types.js";
import { CodecError, fail } from "../errors.js";
import { parse } from "../format/container.js";
import { crc32 } from "../format/crc32.js";
import { mapOrdered } from "../window.js";
import { type DecompressOptions, isGzip, limitsOf, plain } from "./shared.js";

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

function concat(parts: Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}
