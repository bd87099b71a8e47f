import { InputCorrupt, RecordScanner } from "./planning.js";
import type { PositionalReader } from "./storage/types.js";

/**
 * The units a segment is coded in: fixed-size slices of its input (compress, roundtrip), read
 * straight into reused buffers, or whole stream records (decompress).
 */

export const DEFAULT_CHUNK_BYTES = 4 * 1024 * 1024;

/**
 * Buffers of `size` bytes for input units, used again once a unit comes back from its thread
 * (the thread hands the buffer back with the output): a segment allocates its unit buffers once
 * instead of one per unit, and at most `keep` wait here unused.
 */
export class UnitBuffers {
  private readonly free: ArrayBuffer[] = [];
  /** buffers made so far (each `size` bytes): what the units of this process ever held at once, at most */
  allocated = 0;

  constructor(
    readonly size: number,
    private readonly keep: number,
  ) {}

  take(): ArrayBuffer {
    const spare = this.free.pop();
    if (spare) return spare;
    this.allocated++;
    return new ArrayBuffer(this.size);
  }

  /** a buffer back (ignored unless it is one of ours: the right size, not detached) */
  give(buffer: ArrayBufferLike): void {
    if (buffer instanceof ArrayBuffer && buffer.byteLength === this.size && this.free.length < this.keep) {
      this.free.push(buffer);
    }
  }

  get spare(): number {
    return this.free.length;
  }
}

/**
 * The input bytes of the units in flight in this process (read, on the pool, or waiting to be
 * written), counted across every segment it runs at once and held to `limit` (issue #23 item 6:
 * the worker's memory grows with the threads, not with the segments and their windows). A unit
 * is counted from before it is read until its output is taken for writing. `acquire` waits while
 * the limit is reached, except that one unit may always start when nothing is in flight (so a
 * unit larger than the limit cannot block forever).
 */
export class InflightBytes {
  private used = 0;
  /** the most bytes ever in flight at once */
  peak = 0;
  private readonly waiters = new Set<() => void>();

  constructor(readonly limit: number) {}

  get inFlight(): number {
    return this.used;
  }

  /** takes `bytes` now if they fit (or nothing is in flight); false otherwise */
  tryAcquire(bytes: number): boolean {
    if (this.used > 0 && this.used + bytes > this.limit) return false;
    this.used += bytes;
    if (this.used > this.peak) this.peak = this.used;
    return true;
  }

  /** resolves once some bytes were released (then try again), or rejects when `signal` aborts */
  released(signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const done = () => {
        this.waiters.delete(done);
        signal?.removeEventListener("abort", aborted);
        resolve();
      };
      const aborted = () => {
        this.waiters.delete(done);
        reject(signal?.reason ?? new Error("aborted"));
      };
      if (signal?.aborted) return aborted();
      signal?.addEventListener("abort", aborted, { once: true });
      this.waiters.add(done);
    });
  }

  release(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
    for (const w of [...this.waiters]) w();
  }
}

/** `buffers.size`-byte units (the last one shorter): each a view from offset 0 of its own buffer. */
export async function* fixedUnits(input: AsyncIterable<Buffer>, buffers: UnitBuffers): AsyncGenerator<Uint8Array> {
  const size = buffers.size;
  let cur = new Uint8Array(buffers.take());
  let fill = 0;
  for await (const chunk of input) {
    let i = 0;
    while (i < chunk.length) {
      const n = Math.min(size - fill, chunk.length - i);
      cur.set(chunk.subarray(i, i + n), fill);
      fill += n;
      i += n;
      if (fill === size) {
        yield cur;
        cur = new Uint8Array(buffers.take());
        fill = 0;
      }
    }
  }
  if (fill > 0) yield cur.subarray(0, fill);
  else buffers.give(cur.buffer);
}

/** `buffers.size`-byte units of [start, start + length) read straight into their buffers. */
export async function* readUnits(
  reader: PositionalReader,
  start: number,
  length: number,
  buffers: UnitBuffers,
): AsyncGenerator<Uint8Array> {
  try {
    for (let done = 0; done < length; ) {
      const want = Math.min(buffers.size, length - done);
      const buffer = buffers.take();
      const n = await reader.read(new Uint8Array(buffer, 0, want), start + done);
      if (n < want) {
        buffers.give(buffer);
        throw new Error(`the input ends at ${start + done + n} bytes, inside this segment`);
      }
      done += n;
      yield new Uint8Array(buffer, 0, n);
    }
  } finally {
    await reader.close();
  }
}

/** Whole records (header included), each owning its buffer. */
export async function* recordUnits(input: AsyncIterable<Buffer>): AsyncGenerator<Uint8Array> {
  let cur: Uint8Array | null = null;
  let fill = 0;
  const scanner = new RecordScanner((header, len) => {
    cur = new Uint8Array(header.length + len);
    cur.set(header);
    fill = header.length;
  });
  for await (const chunk of input) {
    let i = 0;
    while (i < chunk.length) {
      if (scanner.remaining === 0) {
        i = scanner.readHeader(chunk, i);
        continue;
      }
      const rec = cur as unknown as Uint8Array;
      const n = Math.min(scanner.remaining, chunk.length - i);
      rec.set(chunk.subarray(i, i + n), fill);
      fill += n;
      i += n;
      scanner.remaining -= n;
      if (scanner.remaining === 0) {
        yield rec;
        cur = null;
      }
    }
  }
  if (scanner.inRecord) throw new InputCorrupt("the input ends inside a stream record (truncated)");
}
