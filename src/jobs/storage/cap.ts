import { createHash } from "node:crypto";
import type { Readable } from "node:stream";

/**
 * Counting and hashing of a stream on its way into a store, cut at `maxBytes`: the bytes that fit
 * are passed on (and hashed), then the source is left (the generator returns, which destroys it)
 * and `over` is set. Shared by both stores so they count, hash and cut the same way.
 */
export class CappedBody {
  bytes = 0;
  over = false;
  private readonly hash = createHash("sha256");

  constructor(private readonly maxBytes: number | undefined) {}

  get sha256(): string {
    return this.hash.digest("hex");
  }

  async *read(source: Readable): AsyncGenerator<Buffer> {
    const max = this.maxBytes;
    for await (const data of source) {
      const chunk = typeof data === "string" ? Buffer.from(data) : (data as Buffer);
      if (max !== undefined && this.bytes + chunk.length > max) {
        const fit = chunk.subarray(0, max - this.bytes);
        this.over = true;
        if (fit.length > 0) {
          this.hash.update(fit);
          this.bytes += fit.length;
          yield fit;
        }
        return;
      }
      this.hash.update(chunk);
      this.bytes += chunk.length;
      yield chunk;
    }
  }
}

const KEY_SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,199}$/;

/** Keys are `/`-separated segments of [A-Za-z0-9._-] (no `.`/`..`, no leading dot): safe as paths and S3 keys. */
export function checkKey(key: string, what = "key"): string[] {
  const parts = key.split("/");
  if (parts.length === 0 || !parts.every((p) => KEY_SEGMENT.test(p))) {
    throw new Error(`invalid object ${what}: ${JSON.stringify(key)}`);
  }
  return parts;
}
