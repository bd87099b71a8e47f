import { fail } from "../errors.js";
import { ByteWriter } from "../format/varint.js";

/** LSB-first bit writer for raw low bits (values up to 53 bits). */
export class BitWriter {
  private out = new ByteWriter(1024);
  private acc = 0;
  private cnt = 0;
  /** write the low `n` bits of non-negative `v` (n ≤ 53) */
  write(v: number, n: number): void {
    while (n > 24) {
      const lo = v % 16777216;
      this.write24(lo, 24);
      v = Math.floor(v / 16777216);
      n -= 24;
    }
    if (n > 0) this.write24(v, n);
  }
  private write24(v: number, n: number): void {
    this.acc |= (v & ((1 << n) - 1)) << this.cnt;
    this.cnt += n;
    while (this.cnt >= 8) {
      this.out.byte(this.acc & 0xff);
      this.acc >>>= 8;
      this.cnt -= 8;
    }
  }
  finish(): Uint8Array {
    if (this.cnt > 0) this.out.byte(this.acc & 0xff);
    this.acc = 0;
    this.cnt = 0;
    return this.out.finish();
  }
}

/** LSB-first bit reader; reading past the end is an error (checked once at `end()`). */
export class BitReader {
  private pos: number;
  private acc = 0;
  private cnt = 0;
  private over = 0;
  constructor(
    private readonly buf: Uint8Array,
    start = 0,
    private readonly stop = buf.length,
  ) {
    this.pos = start;
  }
  read(n: number): number {
    if (n <= 24) return this.read24(n);
    let v = 0;
    let mul = 1;
    while (n > 0) {
      const k = Math.min(24, n);
      v += this.read24(k) * mul;
      mul *= 16777216;
      n -= k;
    }
    return v;
  }
  private read24(n: number): number {
    while (this.cnt < n) {
      if (this.pos < this.stop) this.acc |= this.buf[this.pos++]! << this.cnt;
      else this.over++;
      this.cnt += 8;
    }
    const v = this.acc & ((1 << n) - 1);
    this.acc >>>= n;
    this.cnt -= n;
    return v;
  }
  /** throws when more bits were read than the stream holds */
  end(): void {
    if (this.over > 0) fail("codec_corrupt", "raw bit stream overrun");
  }
}

/**
 * Scratch byte buffers of the one-pass coders (level fast), one per slot, reused from call to call
 * in this thread: a fresh multi-megabyte typed array costs about as much as the loop that fills
 * it, and each one grows V8's external memory and brings the next garbage collection closer. The
 * contents are stale: callers write before they read and copy out what they keep before the next
 * call. Buffers above SCRATCH_KEEP_BYTES are not kept.
 */
export const SCRATCH_KEEP_BYTES = 4 << 20;
const scratchSlots: Uint8Array[] = [];
/** slots: raw bits, rANS stream, 16-bit symbols, the float chamber's integers */
export const SCRATCH_BITS = 0;
export const SCRATCH_RANS = 1;
export const SCRATCH_SYMS16 = 2;
export const SCRATCH_FLOAT_INTS = 3;
export function scratchBytes(slot: number, size: number): Uint8Array {
  const have = scratchSlots[slot];
  if (have && have.length >= size) return have;
  // rounded up to a multiple of 8 so that any typed view fits
  const buf = new Uint8Array(Math.max(64, (size + 7) & ~7));
  if (buf.length <= SCRATCH_KEEP_BYTES) scratchSlots[slot] = buf;
  return buf;
}
