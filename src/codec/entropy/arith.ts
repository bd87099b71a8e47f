/**
 * Binary arithmetic coder (carry-less, 32-bit low/high, 12-bit probabilities), as in the
 * lpaq/paq family. p is the probability that the bit is 1, in [1, 4095].
 */
export class ArithEncoder {
  private x1 = 0;
  private x2 = 0xffffffff;
  out: Uint8Array;
  pos = 0;
  constructor(capacity: number) {
    this.out = new Uint8Array(Math.max(64, capacity));
  }
  private put(b: number): void {
    if (this.pos >= this.out.length) {
      const next = new Uint8Array(this.out.length * 2);
      next.set(this.out);
      this.out = next;
    }
    this.out[this.pos++] = b;
  }
  encode(y: number, p: number): void {
    const range = this.x2 - this.x1;
    const xmid = this.x1 + (range >>> 12) * p + (((range & 0xfff) * p) >>> 12);
    if (y) this.x2 = xmid;
    else this.x1 = xmid + 1;
    while (((this.x1 ^ this.x2) & 0xff000000) === 0) {
      this.put(this.x2 >>> 24);
      this.x1 = (this.x1 << 8) >>> 0;
      this.x2 = ((this.x2 << 8) | 255) >>> 0;
    }
  }
  finish(): Uint8Array {
    // enough bytes of x1 to disambiguate
    this.put(this.x1 >>> 24);
    this.put((this.x1 >>> 16) & 255);
    this.put((this.x1 >>> 8) & 255);
    this.put(this.x1 & 255);
    return this.out.slice(0, this.pos);
  }
}

export class ArithDecoder {
  private x1 = 0;
  private x2 = 0xffffffff;
  private x = 0;
  private pos: number;
  /** bytes requested past the end of the stream (a valid stream needs at most 0) */
  overrun = 0;
  constructor(
    private readonly buf: Uint8Array,
    start = 0,
  ) {
    this.pos = start;
    for (let i = 0; i < 4; i++) this.x = ((this.x << 8) | this.next()) >>> 0;
  }
  private next(): number {
    if (this.pos < this.buf.length) return this.buf[this.pos++]!;
    this.overrun++;
    return 0;
  }
  decode(p: number): number {
    const range = this.x2 - this.x1;
    const xmid = this.x1 + (range >>> 12) * p + (((range & 0xfff) * p) >>> 12);
    let y: number;
    if (this.x <= xmid) {
      y = 1;
      this.x2 = xmid;
    } else {
      y = 0;
      this.x1 = xmid + 1;
    }
    while (((this.x1 ^ this.x2) & 0xff000000) === 0) {
      this.x1 = (this.x1 << 8) >>> 0;
      this.x2 = ((this.x2 << 8) | 255) >>> 0;
      this.x = ((this.x << 8) | this.next()) >>> 0;
    }
    return y;
  }
  get consumed(): number {
    return this.pos;
  }
}
