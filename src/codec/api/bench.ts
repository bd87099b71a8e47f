/**
 * bench(bytes): omni at the given levels beside the classic peers, each decoded back and compared
 * byte for byte; classic(bytes): the classic engine (the smaller of brotli-11 and gzip-9).
 */
import { promisify } from "node:util";
import zlib from "node:zlib";
import { brotliAsync, gzipAsync, xzCompress, zstdCompress } from "../backends.js";
import type { Level } from "../chambers/types.js";
import { compressWithReport } from "./compress.js";
import { decompress } from "./decompress.js";
import { decompressOffThread } from "./offthread.js";

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
    const { backendDecode } = await import("../backends.js");
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
