import zlib from "node:zlib";
import { classic, type Feats, profile } from "../codec/index.js";
import { Problem } from "../http/problem.js";
import type { Identity } from "../identity/service.js";
import { type Admission, codecCall, RATIO_FLOOR_BYTES, SUITE_POINTER } from "./admission.js";
import { type PrintOut, type Prints, ratioOf } from "./prints.js";

/**
 * The classic engine of the web codec: the smaller of brotli-11 and gzip-9 (node:zlib, on the
 * libuv thread pool), returned as a standard stream any client can decode, and its decoder.
 */

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

export class ClassicEngine {
  constructor(
    private readonly admission: Admission,
    private readonly prints: Prints,
  ) {}

  /**
   * gzip-9 and brotli-11 sizes of the same bytes, measured (not estimated): the classic engine's
   * node:zlib calls (gzip level 9, brotli quality 11, the benchmark's peers) on the libuv thread
   * pool. Costs like bench, so it takes bench's input limit and a slow admission slot.
   */
  async peerSizes(bytes: Uint8Array): Promise<{ "brotli-11": number; "gzip-9": number }> {
    this.admission.checkInput(bytes.length, "bench", "compress with peers");
    const r = await this.admission.slow(() => codecCall(() => classic(bytes)));
    return r.sizes;
  }

  async compress(bytes: Uint8Array, identity: Identity | null): Promise<ClassicOut> {
    this.admission.checkInput(bytes.length, "max", "the classic engine");
    return this.admission.slow(() => this.compressNow(bytes, identity));
  }

  private async compressNow(bytes: Uint8Array, identity: Identity | null): Promise<ClassicOut> {
    const { method, out, sizes } = await classic(bytes);
    const p = profile(bytes);
    const print = await this.prints.record(identity, bytes, p, out.length, `classic/${method}`, method);
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
  async decompress(stream: Uint8Array): Promise<{ bytes: Uint8Array; method: "gzip-9" | "brotli-11" }> {
    const gzip = stream.length >= 3 && stream[0] === 0x1f && stream[1] === 0x8b && stream[2] === 8;
    const limit = this.admission.limits.outputLimitBytes;
    const byRatio = Math.max(RATIO_FLOOR_BYTES, stream.length * this.admission.maxRatio);
    const maxOutputLength = Math.max(1, Math.min(limit, byRatio));
    const out = await this.admission.admit("decode", async () => {
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
          if (byRatio < limit) this.admission.ratioExceeded(null, stream.length);
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
