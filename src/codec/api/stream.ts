/**
 * compressStream / decompressStream: node:stream Transforms over length-prefixed framed containers.
 */
import { Transform, type TransformCallback } from "node:stream";
import { CodecError, fail } from "../errors.js";
import { isFramed } from "../format/container.js";
import { ByteReader, ByteWriter } from "../format/varint.js";
import { OrderedWindow } from "../window.js";
import { compress } from "./compress.js";
import { decompress } from "./decompress.js";
import type { CompressOptions, DecompressOptions } from "./shared.js";

/**
 * Streaming: the input is cut into chunks of `chunkSize` bytes (default 4 MiB); each chunk
 * becomes one framed container, written as uvarint(length) + container, in input order. Up to
 * CHUNK_WINDOW chunks are coded at once, so memory is bounded by that many chunks and containers.
 */
export function compressStream(options: CompressOptions & { chunkSize?: number } = {}): Transform {
  const size = options.chunkSize ?? 4 * 1024 * 1024;
  if (!(Number.isSafeInteger(size) && size >= 4096)) fail("codec_bad_option", "chunkSize must be an integer ≥ 4096");
  let pending: Buffer[] = [];
  let have = 0;
  const { chunkSize: _c, bare: _b, ...opts } = options;
  const window = new OrderedWindow<Uint8Array>();
  const record = async (part: Uint8Array): Promise<Uint8Array> => {
    const c = await compress(part, opts);
    const w = new ByteWriter(c.length + 8);
    w.uvarint(c.length);
    w.bytes(c);
    return w.finish();
  };
  const emit = async (t: Transform, part: Uint8Array): Promise<void> => {
    for (const r of await window.add(record(part))) t.push(r);
  };
  return new Transform({
    async transform(chunk: Buffer, _enc, cb: TransformCallback) {
      try {
        pending.push(chunk);
        have += chunk.length;
        while (have >= size) {
          const all = Buffer.concat(pending);
          await emit(this, all.subarray(0, size));
          pending = [all.subarray(size)];
          have = all.length - size;
        }
        cb();
      } catch (e) {
        cb(e as Error);
      }
    },
    async flush(cb: TransformCallback) {
      try {
        if (have > 0) await emit(this, Buffer.concat(pending));
        for (const r of await window.drain()) this.push(r);
        cb();
      } catch (e) {
        cb(e as Error);
      }
    },
  });
}

export function decompressStream(options: DecompressOptions & { maxContainerBytes?: number } = {}): Transform {
  const maxContainer = options.maxContainerBytes ?? 64 * 1024 * 1024;
  let buf: Buffer = Buffer.alloc(0);
  const window = new OrderedWindow<Uint8Array>();
  const drain = async (t: Transform, final: boolean): Promise<void> => {
    for (;;) {
      if (buf.length === 0) return;
      const r = new ByteReader(buf);
      let len: number;
      try {
        len = r.uvarint();
      } catch (e) {
        if (!final && e instanceof CodecError && e.code === "codec_truncated") return;
        throw e;
      }
      if (len > maxContainer) fail("codec_too_large", "stream record larger than maxContainerBytes");
      if (r.remaining < len) {
        if (final) fail("codec_truncated", "stream ends inside a record");
        return;
      }
      const c = buf.subarray(r.pos, r.pos + len);
      if (!isFramed(c)) fail("codec_bad_magic", "stream record is not a framed container");
      for (const out of await window.add(decompress(c, options))) t.push(out);
      buf = buf.subarray(r.pos + len);
    }
  };
  return new Transform({
    async transform(chunk: Buffer, _e, cb: TransformCallback) {
      try {
        buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
        await drain(this, false);
        cb();
      } catch (e) {
        cb(e as Error);
      }
    },
    async flush(cb: TransformCallback) {
      try {
        await drain(this, true);
        for (const out of await window.drain()) this.push(out);
        cb();
      } catch (e) {
        cb(e as Error);
      }
    },
  });
}
