import { fail } from "../errors.js";

/** Growable byte buffer used by every encoder. */
export class ByteWriter {
  buf: Uint8Array;
  pos = 0;
  constructor(initial = 256) {
    this.buf = new Uint8Array(Math.max(16, initial));
  }
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }
  byte(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b & 0xff;
  }
  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }
  /** Unsigned LEB128 of a non-negative safe integer. */
  uvarint(v: number): void {
    if (!Number.isSafeInteger(v) || v < 0) throw new RangeError(`uvarint out of range: ${v}`);
    this.ensure(8);
    while (v >= 0x80) {
      this.buf[this.pos++] = (v % 128) | 0x80;
      v = Math.floor(v / 128);
    }
    this.buf[this.pos++] = v;
  }
  /** Zigzag + LEB128 of a signed safe integer. */
  svarint(v: number): void {
    this.uvarint(v < 0 ? -2 * v - 1 : 2 * v);
  }
  u32le(v: number): void {
    this.ensure(4);
    this.buf[this.pos++] = v & 0xff;
    this.buf[this.pos++] = (v >>> 8) & 0xff;
    this.buf[this.pos++] = (v >>> 16) & 0xff;
    this.buf[this.pos++] = (v >>> 24) & 0xff;
  }
  /** length-prefixed sub-block */
  block(b: Uint8Array): void {
    this.uvarint(b.length);
    this.bytes(b);
  }
  finish(): Uint8Array {
    return this.buf.slice(0, this.pos);
  }
}

/** Bounds-checked reader: every read past the end is a codec_truncated error. */
export class ByteReader {
  pos: number;
  constructor(
    readonly buf: Uint8Array,
    start = 0,
    readonly end = buf.length,
  ) {
    this.pos = start;
  }
  get remaining(): number {
    return this.end - this.pos;
  }
  byte(): number {
    if (this.pos >= this.end) fail("codec_truncated", "unexpected end of data");
    return this.buf[this.pos++]!;
  }
  bytes(n: number): Uint8Array {
    if (n < 0 || n > this.end - this.pos) fail("codec_truncated", `needs ${n} bytes, ${this.end - this.pos} left`);
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  uvarint(): number {
    let v = 0;
    let mul = 1;
    for (let i = 0; i < 8; i++) {
      const b = this.byte();
      v += (b & 0x7f) * mul;
      if (b < 0x80) {
        if (!Number.isSafeInteger(v)) fail("codec_corrupt", "varint out of range");
        return v;
      }
      mul *= 128;
    }
    return fail("codec_corrupt", "varint too long");
  }
  /** uvarint that must be ≤ max */
  uvarintMax(max: number, what: string): number {
    const v = this.uvarint();
    if (v > max) fail("codec_corrupt", `${what} ${v} exceeds ${max}`);
    return v;
  }
  svarint(): number {
    const u = this.uvarint();
    return u % 2 === 1 ? -(u + 1) / 2 : u / 2;
  }
  u32le(): number {
    const b = this.bytes(4);
    return (b[0]! | (b[1]! << 8) | (b[2]! << 16) | (b[3]! << 24)) >>> 0;
  }
  block(): Uint8Array {
    return this.bytes(this.uvarintMax(this.end - this.pos, "block length"));
  }
}
