import { parentPort } from "node:worker_threads";
import { ownedRequest, type PoolReply, sendJobsTo } from "./entropy/cm-pool.js";
import { CodecError } from "./errors.js";
import { type DecompressOptions, decompress } from "./index.js";

/**
 * One decode inside a decode-pool worker (decode-worker.mjs loads this module). Its context-mixing
 * streams are decoded on the main thread's pool (asked for through the parent, ../decode-pool.ts),
 * so that a model's memory lives only in the pool's workers, which end once idle after a large one
 * (entropy/cm-pool.ts RETIRE_BYTES), instead of staying in this thread until its next decode.
 */
const waiting = new Map<number, (reply: PoolReply) => void>();
let nextId = 0;
sendJobsTo(
  (req) =>
    new Promise((resolve) => {
      if (!parentPort) return resolve({ out: null });
      const id = nextId++;
      waiting.set(id, resolve);
      const { msg, transfer } = ownedRequest(req);
      parentPort.postMessage({ cm: msg, id }, transfer);
    }),
);

/** the pool's reply to the request `id` (decode-worker.mjs passes it on) */
export function poolReply(id: number, reply: PoolReply): void {
  const resolve = waiting.get(id);
  waiting.delete(id);
  resolve?.(reply);
}

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
