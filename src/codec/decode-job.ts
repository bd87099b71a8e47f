import { keepJobsInThread } from "./entropy/cm-pool.js";
import { CodecError } from "./errors.js";
import { type DecompressOptions, decompress } from "./index.js";

/**
 * One decode inside a decode-pool worker (decode-worker.mjs loads this module). This thread is
 * already off the caller's event loop, so context mixing runs here too instead of on a pool.
 */
keepJobsInThread();

export type JobReply = { out: Uint8Array } | { error: { code: CodecError["code"]; message: string } } | { bug: string };

export async function run(container: Uint8Array, options: DecompressOptions): Promise<JobReply> {
  try {
    const out = await decompress(container, options);
    // transferable: the output must own its whole buffer
    const own = out.byteOffset === 0 && out.byteLength === out.buffer.byteLength ? out : out.slice();
    return { out: own };
  } catch (err) {
    if (err instanceof CodecError) return { error: { code: err.code, message: err.message } };
    return { bug: err instanceof Error ? err.message : String(err) };
  }
}
