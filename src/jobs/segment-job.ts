import { createHash } from "node:crypto";
import type { Transform } from "node:stream";
import { keepJobsInThread } from "../codec/entropy/cm-pool.js";
import { CodecError, compressStream, decompressStream, type Level } from "../codec/index.js";

/**
 * One unit of a segment, coded inside a piscina worker thread (segment-worker.mjs loads this
 * module): a chunk of input becomes one stream record (compress), one record becomes its bytes
 * (decompress), or a chunk is compressed and decoded back and both hashes compared (roundtrip).
 * Always through the codec's streaming API, so the records are exactly what `compressStream`
 * writes and `labphi decompress` reads. This thread is already off the caller's event loop, so
 * context mixing runs here instead of on the codec's own pool.
 */
keepJobsInThread();

export type SegmentOp = "compress" | "decompress" | "roundtrip";

export interface UnitTask {
  op: SegmentOp;
  level: Level;
  /** owns its ArrayBuffer (transferred in) */
  input: Uint8Array;
}

export type UnitReply = Uint8Array | { error: { code: string; message: string } };

/** a view that owns its whole ArrayBuffer (transferable without cloning the rest) */
function own(u: Uint8Array): Uint8Array {
  return u.byteOffset === 0 && u.byteLength === u.buffer.byteLength ? u : u.slice();
}

async function through(t: Transform, input: Uint8Array): Promise<Uint8Array> {
  const parts: Buffer[] = [];
  t.on("data", (c: Buffer) => parts.push(c));
  await new Promise<void>((resolve, reject) => {
    t.once("end", resolve);
    t.once("error", reject);
    t.end(Buffer.from(input.buffer, input.byteOffset, input.byteLength));
  });
  return Buffer.concat(parts);
}

const sha256 = (u: Uint8Array) => createHash("sha256").update(u).digest("hex");

export async function run(task: UnitTask): Promise<UnitReply> {
  try {
    if (task.op === "decompress") return own(await through(decompressStream(), task.input));
    const record = await through(
      compressStream({ level: task.level, chunkSize: Math.max(4096, task.input.length) }),
      task.input,
    );
    if (task.op === "roundtrip") {
      const back = await through(decompressStream(), record);
      if (back.length !== task.input.length || sha256(back) !== sha256(task.input)) {
        return {
          error: {
            code: "roundtrip_mismatch",
            message: `decoded ${back.length} bytes (sha256 ${sha256(back).slice(0, 16)}…) differ from the ${task.input.length} input bytes (sha256 ${sha256(task.input).slice(0, 16)}…)`,
          },
        };
      }
    }
    return own(record);
  } catch (err) {
    if (err instanceof CodecError) return { error: { code: err.code, message: err.message } };
    return { error: { code: "bug", message: err instanceof Error ? err.message : String(err) } };
  }
}
