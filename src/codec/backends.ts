import os from "node:os";
import { promisify } from "node:util";
import { Worker } from "node:worker_threads";
import zlib from "node:zlib";
import { XZ_CHECK_CRC32, xzEasyEncoder, xzStreamEncoder, zstdEncoder } from "./addons.js";
import { CodecError, fail } from "./errors.js";

/**
 * General-purpose backends. brotli and gzip come from node:zlib; zstd from zstd-napi;
 * xz from lzma-native (asynchronous, runs on the libuv thread pool). Decoders are
 * bounded by the expected output length.
 */
export type BackendId = 0 | 1 | 2 | 3 | 4; // 0 brotli, 1 gzip, 2 zstd, 3 xz, 4 text-CM (handled by the text chamber)
export const BACKEND_NAMES = ["brotli", "gzip", "zstd", "xz", "cm"] as const;

type Zstd = typeof import("zstd-napi");
interface LzmaStream {
  on(ev: string, fn: (...a: never[]) => void): void;
  end(b: Buffer): void;
  destroy(): void;
}
interface Lzma {
  CHECK_NONE: number;
  FILTER_LZMA2: unknown;
  FILTER_X86: unknown;
  compress(buf: Buffer, opts: unknown, cb: (out: Buffer | undefined, err?: Error) => void): void;
  createDecompressor(opts: unknown): LzmaStream;
  createStream(coder: string, opts: unknown): LzmaStream;
}
let zstdMod: Zstd | null | undefined;
let lzmaMod: Lzma | null | undefined;

async function zstd(): Promise<Zstd | null> {
  if (zstdMod === undefined) {
    try {
      zstdMod = await import("zstd-napi");
    } catch {
      zstdMod = null;
    }
  }
  return zstdMod;
}
async function lzma(): Promise<Lzma | null> {
  if (lzmaMod === undefined) {
    try {
      const spec = "lzma-native"; // untyped CommonJS addon, loaded lazily
      const m = (await import(spec)) as { default?: Lzma } & Lzma;
      lzmaMod = m.default ?? m;
    } catch {
      lzmaMod = null;
    }
  }
  return lzmaMod;
}

/** set by a thread that is itself a worker (compressInCallingThread) */
let inCallingThread = false;

/**
 * From now on brotli and gzip run in the calling thread (synchronously) instead of on the libuv
 * thread pool: for worker threads that exist to code, where a hop to the pool only adds threads
 * whose allocator arenas keep memory (measured in docs/suite.md, "Where the worker's memory goes").
 */
export function compressInCallingThread(): void {
  inCallingThread = true;
}

/** brotli's default window (lgwin 22): 4 MiB less 16 bytes */
const BROTLI_DEFAULT_WINDOW = (1 << 22) - 16;
/** the largest window of standard brotli (lgwin 24), which `brotli -q 11` uses on large files */
const BROTLI_MAX_LGWIN = 24;

/**
 * brotli's window for an input: the library's default (lgwin 22) up to 4 MiB; above, at quality 10
 * and 11, the smallest window that holds the input, up to 16 MiB (lgwin 24), as the `brotli` tool
 * codes large files (enwiki_sample.xml, 6 MB: 1,606,0xx B with lgwin 22, 1,602,968 B with 24, the
 * tool's bytes). The decoder needs no setting for it (≤ 24 is standard brotli).
 */
export function brotliWindow(size: number, quality: number): number | undefined {
  if (quality < 10 || size <= BROTLI_DEFAULT_WINDOW) return undefined;
  let w = 23;
  while (w < BROTLI_MAX_LGWIN && (1 << w) - 16 < size) w++;
  return w;
}

/**
 * brotli on the libuv thread pool, with a size hint and the window of brotliWindow: the bytes of
 * the benchmark's `brotli -q 11` peer (within the library versions' difference), so the general
 * chamber is not larger than it.
 */
export function brotliAsync(data: Uint8Array, quality: number): Promise<Uint8Array> {
  const lgwin = brotliWindow(data.length, quality);
  const params = {
    [zlib.constants.BROTLI_PARAM_QUALITY]: quality,
    [zlib.constants.BROTLI_PARAM_SIZE_HINT]: data.length,
    ...(lgwin ? { [zlib.constants.BROTLI_PARAM_LGWIN]: lgwin } : {}),
  };
  if (inCallingThread) {
    try {
      return Promise.resolve(zlib.brotliCompressSync(data, { params }));
    } catch (err) {
      return Promise.reject(err);
    }
  }
  return new Promise((resolve, reject) => {
    zlib.brotliCompress(data, { params }, (err, out) => (err ? reject(err) : resolve(out)));
  });
}

/** gzip on the libuv thread pool (or in the calling thread: compressInCallingThread) */
export const gzipAsync = (data: Uint8Array, level = 9): Promise<Uint8Array> =>
  inCallingThread
    ? Promise.resolve().then(() => zlib.gzipSync(data, { level }))
    : promisify(zlib.gzip)(data, { level });

/** inputs from this size up are zstd-coded on a worker thread (below, the hop costs more than it saves) */
export const ZSTD_WORKER_MIN = 256 * 1024;
/** zstd worker threads at most: one per core, up to 4 */
export const ZSTD_POOL_SIZE = Math.max(1, Math.min(4, os.availableParallelism()));

/**
 * zstd at `level`. Inputs of ZSTD_WORKER_MIN bytes and more run on a small pool of worker threads
 * (zstd-worker.mjs), so independent chunks of a large input are coded on every core at once and
 * the caller's event loop stays free; smaller inputs, a thread that codes in its own thread
 * (compressInCallingThread) or a pool that cannot start code here. Same bytes either way.
 */
export async function zstdCompress(data: Uint8Array, level: number): Promise<Uint8Array | null> {
  // the addon's binding alone (addons.ts: same bytes, without zstd-napi's wrapper and its start cost)
  const one = zstdEncoder();
  const z = one ? null : await zstd();
  if (!one && !z) return null;
  if (data.length >= ZSTD_WORKER_MIN && !inCallingThread) {
    const out = await zstdOnWorker(data, level);
    if (out) return out;
  }
  if (one) return one(data, level);
  return z!.compress(Buffer.from(data.buffer, data.byteOffset, data.byteLength), { compressionLevel: level });
}

interface ZstdJob {
  data: Uint8Array;
  level: number;
  resolve: (out: Uint8Array | null) => void;
}
interface ZstdSlot {
  worker: Worker;
  job: ZstdJob | null;
}
const zstdSlots: ZstdSlot[] = [];
const zstdQueue: ZstdJob[] = [];
let zstdPoolBroken = false;

function zstdSpawn(): ZstdSlot | null {
  let worker: Worker;
  try {
    worker = new Worker(new URL("./zstd-worker.mjs", import.meta.url));
  } catch {
    zstdPoolBroken = true;
    return null;
  }
  worker.unref();
  const slot: ZstdSlot = { worker, job: null };
  worker.on("message", (msg: { out?: Uint8Array }) => {
    const job = slot.job;
    slot.job = null;
    job?.resolve(msg.out ?? null);
    zstdPump();
  });
  const dead = (): void => {
    const i = zstdSlots.indexOf(slot);
    if (i >= 0) zstdSlots.splice(i, 1);
    zstdPoolBroken = true; // from now on zstd runs in the calling thread
    slot.job?.resolve(null);
    slot.job = null;
    for (const j of zstdQueue.splice(0)) j.resolve(null);
  };
  worker.on("error", dead);
  worker.on("exit", dead);
  zstdSlots.push(slot);
  return slot;
}

function zstdPump(): void {
  while (zstdQueue.length) {
    let slot = zstdSlots.find((s) => !s.job);
    if (!slot && zstdSlots.length < ZSTD_POOL_SIZE && !zstdPoolBroken) slot = zstdSpawn() ?? undefined;
    if (!slot) return;
    const job = zstdQueue.shift()!;
    slot.job = job;
    slot.worker.ref();
    slot.worker.postMessage({ data: job.data, level: job.level });
  }
  for (const s of zstdSlots) if (!s.job) s.worker.unref();
}

/** null when no worker could run the job (the caller then codes in its own thread) */
function zstdOnWorker(data: Uint8Array, level: number): Promise<Uint8Array | null> {
  if (zstdPoolBroken) return Promise.resolve(null);
  return new Promise((resolve) => {
    zstdQueue.push({ data, level, resolve });
    zstdPump();
  });
}

/** stop the zstd workers (tests, shutdown); a later call starts new ones */
export async function terminateZstdPool(): Promise<void> {
  const all = zstdSlots.splice(0);
  await Promise.all(all.map((s) => s.worker.terminate()));
}

export async function xzCompress(data: Uint8Array, preset: number): Promise<Uint8Array | null> {
  // NOTE (issue #24 item 3): lzma-native's compress() below reads only `preset` and `check`
  // of its options, as `options.preset || 6` and `options.check || CHECK_CRC32`: the filters and
  // CHECK_NONE given here are ignored, so every xz block so far is preset 6 (8 MiB dictionary, about
  // 20 ms and 90 MB to set up even for 1 KB) with a CRC-32. The native binding (addons.ts) gives
  // those same bytes without loading the wrapper; giving the intended options would change them.
  const easy = xzEasyEncoder();
  if (easy) return await easy(data, 6, XZ_CHECK_CRC32);
  const l = await lzma();
  if (!l) return null;
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return await new Promise<Uint8Array>((resolve, reject) => {
    // dictionary sized to the input: same output as the preset's 64 MiB dictionary for inputs
    // up to that size, but encoder and decoder memory scale with the input (xz -9 alone would
    // reserve ~674 MiB per call)
    const dict = Math.min(1 << 26, Math.max(1 << 16, 2 ** Math.ceil(Math.log2(Math.max(1, data.length)))));
    const opts = { filters: [{ id: l.FILTER_LZMA2, options: { preset, dict_size: dict } }], check: l.CHECK_NONE };
    l.compress(buf, opts, (out: Buffer | undefined, err?: Error) => {
      if (err || !out) reject(err ?? new Error("xz failed"));
      else resolve(out);
    });
  });
}

/**
 * xz with an explicit filter chain (balanced level): LZMA2 with the given literal-context /
 * literal-position / position bits, normal mode, binary-tree match finder (bt4), nice length 273 and
 * depth 512 unless told otherwise (xz -9e's settings: the same LZMA2 data as `xz -9e` for inputs up
 * to 64 MiB, whose .xz stream is 4 bytes larger for its CRC-64), dictionary sized to the input; `x86` puts liblzma's x86 BCJ filter in front (executables: call and
 * jump targets become absolute, so repeated calls repeat bytes). The .xz stream records its filter
 * chain, so `backendDecode(3, …)` decodes it as it decodes every other xz stream (no new backend id,
 * and decoders of earlier releases read it too). lzma-native's `compress()` would ignore these
 * options (it reads only `preset`), hence the stream encoder. CRC-32 check (4 bytes).
 */
export interface XzTuning {
  x86?: boolean;
  lc?: number;
  lp?: number;
  pb?: number;
  /** match length the encoder stops searching at (273 = xz -9e) */
  nice?: number;
  /** match finder search depth (0 = liblzma's default for nice; 512 = xz -9e) */
  depth?: number;
}
export async function xzTuned(data: Uint8Array, t: XzTuning = {}): Promise<Uint8Array | null> {
  // the addon's binding alone where it loads (addons.ts: the same bytes without lzma-native's
  // wrapper, which costs a CLI start 15-20 ms of CPU)
  const native = xzStreamEncoder();
  const l = native ?? (await lzma());
  if (!l || (!native && typeof (l as Lzma).createStream !== "function")) return null;
  const dictSize = Math.min(1 << 26, Math.max(1 << 16, 2 ** Math.ceil(Math.log2(Math.max(1, data.length)))));
  const lzma2 = {
    id: l.FILTER_LZMA2,
    options: {
      dictSize,
      lc: t.lc ?? 3,
      lp: t.lp ?? 0,
      pb: t.pb ?? 2,
      mode: 2, // LZMA_MODE_NORMAL
      niceLen: t.nice ?? 273,
      mf: 0x14, // LZMA_MF_BT4
      depth: t.depth ?? 512,
    },
  };
  const filters = t.x86 ? [{ id: l.FILTER_X86 }, lzma2] : [lzma2];
  if (native) return await native.encode(data, filters, 1, inCallingThread);
  const s = (l as Lzma).createStream("streamEncoder", { filters, check: 1, synchronous: inCallingThread });
  const chunks: Buffer[] = [];
  return await new Promise<Uint8Array>((resolve, reject) => {
    s.on("data", (c: Buffer) => chunks.push(c));
    s.on("error", (e: Error) => reject(e));
    s.on("end", () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    s.end(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  });
}

function zlibBounded<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof CodecError) throw e;
    const msg = e instanceof Error ? e.message : String(e);
    return fail("codec_corrupt", `backend stream invalid: ${msg}`);
  }
}

/** Decode a backend stream that must produce exactly `expected` bytes. */
export async function backendDecode(id: number, payload: Uint8Array, expected: number): Promise<Uint8Array> {
  let out: Uint8Array;
  switch (id) {
    case 0:
      out = zlibBounded(() => zlib.brotliDecompressSync(payload, { maxOutputLength: Math.max(1, expected) }));
      break;
    case 1:
      out = zlibBounded(() => zlib.gunzipSync(payload, { maxOutputLength: Math.max(1, expected) }));
      break;
    case 2: {
      const z = await zstd();
      if (!z) fail("codec_unknown_chamber", "zstd backend not available on this build");
      out = await zstdBounded(z, payload, expected);
      break;
    }
    case 3: {
      const l = await lzma();
      if (!l) fail("codec_unknown_chamber", "xz backend not available on this build");
      out = await xzBounded(l, payload, expected);
      break;
    }
    default:
      return fail("codec_bad_params", `unknown backend ${id}`);
  }
  if (out.length !== expected) fail("codec_corrupt", `backend produced ${out.length} bytes, expected ${expected}`);
  return out;
}

/** one-shot zstd decoding context: decodes straight into a buffer of the expected size */
interface OneShot {
  decompress(dst: Buffer, src: Uint8Array): number;
}
let zstdOneShot: OneShot | null | undefined;

async function zstdBounded(z: Zstd, payload: Uint8Array, expected: number): Promise<Uint8Array> {
  // fast path: ZSTD_decompressDCtx into exactly `expected` bytes (a longer stream fails for want of
  // room, so memory stays bounded by the declared size); any failure falls back to the stream
  // below, which reports the precise error
  if (zstdOneShot === undefined) {
    const dctx = (new z.Decompressor() as unknown as { dctx?: { decompress?: unknown } }).dctx;
    zstdOneShot = typeof dctx?.decompress === "function" ? (dctx as unknown as OneShot) : null;
  }
  if (zstdOneShot) {
    try {
      const out = Buffer.allocUnsafe(expected);
      if (zstdOneShot.decompress(out, payload) === expected) return out;
    } catch {
      // fall through to the stream
    }
  }
  const d = new z.DecompressStream();
  const chunks: Buffer[] = [];
  let total = 0;
  return await new Promise<Uint8Array>((resolve, reject) => {
    d.on("data", (c: Buffer) => {
      total += c.length;
      if (total > expected) {
        d.destroy();
        reject(new CodecError("codec_corrupt", "zstd stream longer than declared"));
        return;
      }
      chunks.push(c);
    });
    d.on("error", (e: Error) => reject(new CodecError("codec_corrupt", `zstd stream invalid: ${e.message}`)));
    d.on("end", () => resolve(Buffer.concat(chunks)));
    d.end(Buffer.from(payload));
  });
}

async function xzBounded(l: Lzma, payload: Uint8Array, expected: number): Promise<Uint8Array> {
  const d = l.createDecompressor({ memlimit: 256 * 1024 * 1024 });
  const chunks: Buffer[] = [];
  let total = 0;
  return await new Promise<Uint8Array>((resolve, reject) => {
    let done = false;
    d.on("data", (c: Buffer) => {
      total += c.length;
      if (total > expected && !done) {
        done = true;
        d.destroy();
        reject(new CodecError("codec_corrupt", "xz stream longer than declared"));
        return;
      }
      chunks.push(c);
    });
    d.on("error", (e: Error) => {
      if (done) return;
      done = true;
      reject(new CodecError("codec_corrupt", `xz stream invalid: ${e.message}`));
    });
    d.on("end", () => {
      if (done) return;
      done = true;
      resolve(Buffer.concat(chunks));
    });
    d.end(Buffer.from(payload));
  });
}
