import { createRequire } from "node:module";
import path from "node:path";

/**
 * One-shot zstd and xz encoding through the addons' native bindings alone (issue #24 item 3: a CLI
 * that starts at once). The packages' JavaScript wrappers cost a start more than the coding of a
 * small input: lzma-native's index.js loads readable-stream, util and assert (about 15 ms CPU, then
 * more when imported as an ES module, which parses it for named exports); zstd-napi's loads assert
 * (which opens process.stderr) and its stream classes. The bindings produce the same bytes: the same
 * library calls in the same order (test/codec/addons.test.ts compares them with the wrappers').
 * Decoding still goes through the wrappers (backends.ts), which it needs for bounded streams.
 * Either function returns null when its addon cannot load here or does not have the expected shape.
 */

const require = createRequire(import.meta.url);

interface ZstdBinding {
  CCtx: new () => {
    reset(directive: number): void;
    setParameter(param: number, value: number): void;
    compress2(dst: Buffer, src: Uint8Array): number;
  };
  CParameter: { compressionLevel: number };
  ResetDirective: { parameters: number };
  compressBound(n: number): number;
}

let zstdBinding: ZstdBinding | null | undefined;
let cctx: InstanceType<ZstdBinding["CCtx"]> | undefined;

/**
 * zstd at `level` in the calling thread: what zstd-napi's `compress(data, { compressionLevel })`
 * does (one shared context, parameters reset then set, ZSTD_compress2), without its wrapper.
 */
export function zstdEncoder(): ((data: Uint8Array, level: number) => Uint8Array) | null {
  if (zstdBinding === undefined) {
    try {
      const b = require("zstd-napi/binding") as ZstdBinding;
      zstdBinding =
        typeof b.CCtx === "function" &&
        typeof b.compressBound === "function" &&
        typeof b.CParameter?.compressionLevel === "number" &&
        typeof b.ResetDirective?.parameters === "number"
          ? b
          : null;
    } catch {
      zstdBinding = null;
    }
  }
  const b = zstdBinding;
  if (!b) return null;
  return (data, level) => {
    cctx ??= new b.CCtx();
    cctx.reset(b.ResetDirective.parameters);
    cctx.setParameter(b.CParameter.compressionLevel, level);
    const dst = Buffer.allocUnsafe(b.compressBound(data.length));
    const n = cctx.compress2(dst, data);
    return Uint8Array.prototype.slice.call(dst, 0, n);
  };
}

interface LzmaNativeStream {
  easyEncoder_(preset: number, check: number): void;
  streamEncoder_?(filters: unknown[], check: number): void;
  code(chunk: Uint8Array | null, async: boolean): void;
  resetUnderlying(): void;
  bufferHandler?: (
    buf: Buffer | null | undefined,
    processed: number | undefined,
    err: Error | null | undefined,
  ) => void;
}
interface LzmaBinding {
  Stream: new () => LzmaNativeStream;
  CHECK_CRC32: number;
  FILTER_LZMA2?: string;
  FILTER_X86?: string;
  asyncCodeAvailable?: boolean;
}

let lzmaBinding: LzmaBinding | null | undefined;

/** lzma-native's native module, as its index.js loads it (node-gyp-build on the package directory) */
function lzmaNative(): LzmaBinding | null {
  if (lzmaBinding === undefined) {
    try {
      const dir = path.dirname(require.resolve("lzma-native/package.json"));
      const load = require("node-gyp-build") as (dir: string) => LzmaBinding;
      const b = load(dir);
      const p = b.Stream?.prototype as Partial<LzmaNativeStream> | undefined;
      lzmaBinding =
        typeof p?.easyEncoder_ === "function" && typeof p.code === "function" && typeof p.resetUnderlying === "function"
          ? b
          : null;
    } catch {
      lzmaBinding = null;
    }
  }
  return lzmaBinding;
}

/** lzma-native's CHECK_CRC32 (its `compress` uses it when given no check, or CHECK_NONE) */
export const XZ_CHECK_CRC32 = 1;

/**
 * An .xz stream of `data` from liblzma's easy encoder at `preset` with integrity check `check`:
 * the bytes lzma-native's `compress(data, { preset, check })` gives. The coding runs off the calling
 * thread, as the wrapper's does, where the addon can (its own worker thread).
 */
export function xzEasyEncoder(): ((data: Uint8Array, preset: number, check: number) => Promise<Uint8Array>) | null {
  const b = lzmaNative();
  if (!b) return null;
  const async = b.asyncCodeAvailable !== false;
  return (data, preset, check) => {
    const s = new b.Stream();
    s.easyEncoder_(preset, check);
    return codeAll(s, data, async);
  };
}

/** liblzma's stream encoder with an explicit filter chain, through the binding (xzStreamEncoder) */
export interface XzStreamEncoder {
  /** the binding's filter ids (the names lzma-native exports, e.g. "LZMA_FILTER_LZMA2") */
  FILTER_LZMA2: string;
  FILTER_X86: string;
  /**
   * the bytes of lzma-native's `createStream("streamEncoder", { filters, check, synchronous })`
   * ended with `data`; `synchronous` codes in the calling thread
   */
  encode(data: Uint8Array, filters: unknown[], check: number, synchronous: boolean): Promise<Uint8Array>;
}

export function xzStreamEncoder(): XzStreamEncoder | null {
  const b = lzmaNative();
  if (!b || typeof b.Stream.prototype.streamEncoder_ !== "function") return null;
  if (typeof b.FILTER_LZMA2 !== "string" || typeof b.FILTER_X86 !== "string") return null;
  return {
    FILTER_LZMA2: b.FILTER_LZMA2,
    FILTER_X86: b.FILTER_X86,
    encode(data, filters, check, synchronous) {
      const s = new b.Stream();
      s.streamEncoder_?.(filters, check);
      return codeAll(s, data, !synchronous && b.asyncCodeAvailable !== false);
    },
  };
}

/**
 * Codes all of `data` through a native stream set up as an encoder, then finishes it: what
 * lzma-native's JavaScript stream does for one write and end (its _transform, then its _flush).
 */
function codeAll(s: LzmaNativeStream, data: Uint8Array, async: boolean): Promise<Uint8Array> {
  return new Promise<Uint8Array>((resolve, reject) => {
    const out: Buffer[] = [];
    let finishing = data.length === 0;
    let settled = false;
    const settle = (err: Error | null): void => {
      if (settled) return;
      settled = true;
      s.resetUnderlying();
      if (err) reject(err);
      else resolve(Buffer.concat(out));
    };
    const handle = (buf: Buffer | null | undefined, processed: number | undefined, err: Error | null | undefined) => {
      if (settled) return;
      if (err) return settle(err);
      if (buf) out.push(buf);
      else if (buf === null) settle(null);
      else if (typeof processed === "number" && !finishing) {
        // the input is consumed: finish the stream
        finishing = true;
        try {
          s.code(null, async);
        } catch (e) {
          settle(e instanceof Error ? e : new Error(String(e)));
        }
      }
    };
    // handled after the native call returns (a synchronous stream calls back from inside code()),
    // in order, as the wrapper does with setImmediate
    s.bufferHandler = (buf, processed, err) => queueMicrotask(() => handle(buf, processed, err));
    try {
      s.code(data.length === 0 ? null : data, async);
    } catch (e) {
      settle(e instanceof Error ? e : new Error(String(e)));
    }
  });
}
