import { createHash } from "node:crypto";
import * as workerThreads from "node:worker_threads";
import { keepJobsInThread } from "../codec/entropy/cm-pool.js";
import { CodecError, compress, compressInCallingThread, decompress, isFramed, type Level } from "../codec/index.js";
import { threadCpuMs } from "./thread-cpu.js";

/**
 * One unit of a segment, coded inside a piscina worker thread (segment-worker.mjs loads this
 * module): a chunk of input becomes one stream record (compress), one record becomes its bytes
 * (decompress), or a chunk is compressed and decoded back and both hashes compared (roundtrip).
 * The records are exactly what the codec's `compressStream({ level, chunkSize })` writes for a
 * chunk of at most `chunkSize` bytes (one record: the container's length as an unsigned LEB128,
 * then `compress(chunk, { level })`), so `labphi decompress` reads them; a record is decoded
 * the way `decompressStream` decodes it (its container through `decompress`), but with the
 * output capped at `maxOutputBytes` (the runner's 4 MiB per record): a container declaring more
 * is refused from its header (`codec_too_large`) before anything is allocated, and one that decodes
 * to another size than it declares fails with `codec_corrupt`. This thread is already off the caller's event loop, so context
 * mixing, brotli and gzip run here instead of on the codec's own pool or libuv's.
 *
 * Memory (docs/suite.md, "Where the worker's memory goes"): a unit is coded without copying its
 * input (the codec reads the view it is given) and its output travels back as the codec made it,
 * with the input's buffer, so the runner fills that buffer again instead of allocating a new one.
 */
keepJobsInThread();
compressInCallingThread();

export type SegmentOp = "compress" | "decompress" | "roundtrip";

export interface UnitTask {
  op: SegmentOp;
  level: Level;
  /** the unit: a view from offset 0 of a buffer transferred in (possibly longer than the view) */
  input: Uint8Array;
  /** decompress: the most output the record may declare (the codec's 256 MiB default otherwise) */
  maxOutputBytes?: number;
}

interface Returned {
  /** the task's input, its buffer handed back for reuse */
  input: Uint8Array;
  /** milliseconds the unit took in this thread (bench:suite's critical path adds them up) */
  ms?: number;
  /**
   * milliseconds this thread was on a CPU meanwhile (Linux: /proc/thread-self/schedstat); `ms` −
   * `cpu` is the time it was ready but waited for a core (other processes, other threads)
   */
  cpu?: number;
}

/** `out`: the unit's output, to be written in order (each part owns its whole buffer) */
export type UnitReply = Returned & ({ out: Uint8Array[] } | { error: { code: string; message: string } });

/** a view that owns its whole ArrayBuffer (transferable without cloning the rest) */
function own(u: Uint8Array): Uint8Array {
  return u.byteOffset === 0 && u.byteLength === u.buffer.byteLength ? u : u.slice();
}

/** the unsigned LEB128 of a record's length (the codec's ByteWriter.uvarint) */
export function recordHeader(length: number): Uint8Array {
  const bytes: number[] = [];
  let v = length;
  while (v >= 0x80) {
    bytes.push((v % 128) | 0x80);
    v = Math.floor(v / 128);
  }
  bytes.push(v);
  return Uint8Array.from(bytes);
}

/**
 * One stream record (uvarint length, then a framed container) decoded as decompressStream decodes
 * it, with the output capped: the codec checks the declared size against `maxOutputBytes` before
 * it allocates, and the output has exactly the declared size (else codec_corrupt).
 */
async function decodeRecord(record: Uint8Array, maxOutputBytes: number | undefined): Promise<Uint8Array[]> {
  let i = 0;
  let length = 0;
  for (let shift = 0; ; shift += 7) {
    if (i >= record.length || shift > 49) throw new CodecError("codec_truncated", "stream record header is cut");
    const b = record[i++] as number;
    length += (b & 0x7f) * 2 ** shift;
    if (!(b & 0x80)) break;
  }
  if (record.length - i !== length) throw new CodecError("codec_truncated", "stream ends inside a record");
  const container = record.subarray(i);
  if (!isFramed(container)) throw new CodecError("codec_bad_magic", "stream record is not a framed container");
  const out = await decompress(container, maxOutputBytes === undefined ? {} : { maxOutputBytes });
  const parts = out.length === 0 ? [] : [own(out)];
  // the decoder's working arrays (e.g. 8 bytes per value for delta) are dead now: a scavenge frees
  // them at once instead of after ~64 MB of them (the runner exposes gc to its threads)
  scavenge?.({ type: "minor" });
  return parts;
}

const scavenge = (globalThis as { gc?: (options?: { type: "minor" | "major" }) => void }).gc;

const sha256 = (u: Uint8Array) => createHash("sha256").update(u).digest("hex");

async function code(task: UnitTask): Promise<{ out: Uint8Array[] } | { error: { code: string; message: string } }> {
  if (task.op === "decompress") return { out: await decodeRecord(task.input, task.maxOutputBytes) };
  const container = own(await compress(task.input, { level: task.level }));
  // the codec's dead buffers of this unit (brotli's output pieces and their join, about 2 MB) are
  // freed now instead of waiting for V8's external-memory trigger (about 64 MB per thread):
  // measured with bench:suite, 2 threads, 256 MB: worker peak 208-247 MB in 7 runs instead of
  // 230-252 in 3 (issue #23 item 6; docs/suite.md, "Many cores")
  scavenge?.({ type: "minor" });
  if (task.op === "roundtrip") {
    // decoded the way decompressStream decodes a record (same options, same checks)
    const back = await decompress(container);
    const want = sha256(task.input);
    const got = sha256(back);
    if (back.length !== task.input.length || got !== want) {
      return {
        error: {
          code: "roundtrip_mismatch",
          message: `decoded ${back.length} bytes (sha256 ${got.slice(0, 16)}…) differ from the ${task.input.length} input bytes (sha256 ${want.slice(0, 16)}…)`,
        },
      };
    }
  }
  return { out: [recordHeader(container.length), container] };
}

export async function run(task: UnitTask): Promise<UnitReply> {
  const t0 = performance.now();
  const c0 = threadCpuMs();
  const times = () => {
    const c1 = threadCpuMs();
    return { ms: performance.now() - t0, ...(c0 !== undefined && c1 !== undefined ? { cpu: c1 - c0 } : {}) };
  };
  try {
    const done = await code(task);
    return { ...done, input: task.input, ...times() };
  } catch (err) {
    const error =
      err instanceof CodecError
        ? { code: err.code, message: err.message }
        : { code: "bug", message: err instanceof Error ? err.message : String(err) };
    return { error, input: task.input, ...times() };
  }
}

/** worker_threads.isMarkedAsUntransferable (Node 21+); on Node 20 nothing is marked. */
const untransferable = (workerThreads as { isMarkedAsUntransferable?: (o: unknown) => boolean })
  .isMarkedAsUntransferable;

/** The buffers a reply hands over instead of copying: the outputs and the input's buffer. */
export function transferList(reply: UnitReply): ArrayBuffer[] {
  const list = new Set<ArrayBuffer>();
  if ("out" in reply) for (const p of reply.out) list.add(p.buffer as ArrayBuffer);
  list.add(reply.input.buffer as ArrayBuffer);
  // A detached buffer (length 0) cannot be transferred again, and one Node marked untransferable
  // (its Buffer pool: Node 22+ refuses it with DataCloneError) is copied instead.
  return [...list].filter((b) => b.byteLength > 0 && !untransferable?.(b));
}
