/**
 * decompressOffThread(container): decompress() on the decode pool's worker threads. A module of
 * its own so that a caller decoding in its own thread (the CLI) does not load the pool.
 */
import { poolDecode } from "../decode-pool.js";
import { fail } from "../errors.js";
import { decompress, inspect } from "./decompress.js";
import { type DecompressOptions, plain } from "./shared.js";

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
