import { fail } from "../errors.js";
import { ArithDecoder, ArithEncoder } from "./arith.js";
import { cmDecodePool, cmEncodePool, type PrefixFrom } from "./cm-pool.js";
import { APM_ROW, type CmModel, DT, MODEL_LIMIT, MODEL_WASM, STRETCH, squash, wasmOnly } from "./cm-tables.js";
import { type CmJob, cmDecodeWasm, cmEncodeWasm } from "./cm-wasm.js";

export type { CmModel } from "./cm-tables.js";
export type { CmJob } from "./cm-wasm.js";

/**
 * Order-N context-mixing byte model (lpaq-like, plain JS):
 *  - order-0 and order-1 direct tables, hashed order-2/3/4/6 tables and a word model
 *    (current word × previous word), plus an optional column model for tabular text
 *    (byte above in the previous line × column);
 *  - nibble-bucketed hash slots (one 64-byte line per context per nibble);
 *  - adaptive-rate probability counters (22-bit p, 10-bit count);
 *  - a match model (longest recent repeat of ≥ 6 bytes predicts the next bit);
 *  - one logistic mixer, weight set chosen by match length × partial byte;
 *  - two APM/SSE stages (order-1 and order-2 hashed), then a binary arithmetic coder.
 * Memory is sized to the input: tables of 2^bits 32-bit slots, bits = clamp(log2(n)+1, 16, 22).
 */

const N_HASHED = 8; // o2 o3 o4 o6 word×prev column o5 word
const N_IN = 2 + N_HASHED + 3; // o0 o1 + hashed + match (2) + bias

function h2(a: number, b: number): number {
  let h = Math.imul(a, 0x9e3779b1) ^ Math.imul(b + 0x7f4a7c15, 0x85ebca77);
  h ^= h >>> 15;
  h = Math.imul(h, 0xc2b2ae3d);
  return (h ^ (h >>> 13)) >>> 0;
}

class APM {
  private t: Uint16Array;
  private idx = 0;
  constructor(n: number) {
    this.t = new Uint16Array(n * 24);
    this.t.set(APM_ROW);
    for (let filled = 24; filled < this.t.length; filled *= 2) this.t.copyWithin(filled, 0, filled);
  }
  pp(pr: number, cx: number): number {
    const s = (STRETCH[pr]! + 2048) * 23;
    const wt = s & 0xfff;
    this.idx = (s >>> 12) + cx * 24;
    return ((this.t[this.idx]! * (4096 - wt) + this.t[this.idx + 1]! * wt) >>> 16) | 0;
  }
  update(y: number): void {
    const g = (y << 16) + (y << 7) - y - y;
    const i = this.idx;
    this.t[i] = this.t[i]! + ((g - this.t[i]!) >> 7);
    this.t[i + 1] = this.t[i + 1]! + ((g - this.t[i + 1]!) >> 7);
  }
}

export class CMModel {
  private readonly bits: number;
  private readonly o0 = new Uint32Array(256 * 1);
  private readonly o1 = new Uint32Array(65536);
  /** all hashed tables in one array; table k occupies [k << bits, (k + 1) << bits) */
  private readonly tab: Uint32Array;
  private readonly base = new Int32Array(N_HASHED);
  private readonly hctx = new Uint32Array(N_HASHED);
  private readonly slot = new Int32Array(N_IN);
  private readonly st = new Int32Array(N_IN);
  private readonly w: Float64Array;
  private wOff = 0;
  private wOff2 = 0;
  private readonly w2 = new Float64Array(N_IN * 256).fill(0.15);
  private p1 = 2048;
  private p2 = 2048;
  private p3 = 2048;
  private wOff3 = 0;
  private readonly w3 = new Float64Array(N_IN * 256).fill(0.15);
  private readonly mm: Uint32Array; // match model counters: [len bucket][expected bit]
  private readonly mtab: Int32Array;
  private readonly mbits: number;
  private mptr = 0;
  private mlen = 0;
  private mexp = -1; // expected byte or -1
  private mslot = 0;
  private mslot2 = 0;
  private readonly mm2 = new Uint32Array(1 << 18).fill(0x80000000);
  private readonly apm1: APM;
  private readonly apm2: APM;
  private readonly apm3: APM;
  private readonly apmMask: number;
  private apm2Base = 0;
  private c0 = 1;
  private nib = 1;
  private bitPos = 0;
  private c4 = 0;
  private c8 = 0;
  private word = 0;
  private prevWord = 0;
  private lineStart = 0;
  private prevLineStart = 0;
  private pos = 0;
  private pmix = 2048;
  private readonly lr: number;

  /** column mode: cumulative value counts per column of a 0-terminated value stream */
  private readonly colEnds: Uint32Array | null;
  private col = 0;
  private valueIndex = 0;
  private valueStart = 0;

  constructor(
    private readonly buf: Uint8Array,
    n: number,
    colEnds: Uint32Array | null,
    private readonly limit: number,
  ) {
    const lr = 1.5e-8;
    this.colEnds = colEnds;
    this.bits = Math.max(12, Math.min(22, Math.ceil(Math.log2(Math.max(1, n))) + 1));
    this.tab = new Uint32Array(N_HASHED << this.bits).fill(0x80000000);
    this.apmMask = (1 << Math.min(16, this.bits)) - 1;
    this.apm1 = new APM(this.apmMask + 1);
    this.apm2 = new APM(this.apmMask + 1);
    this.apm3 = new APM(256 * 65);
    this.o0.fill(0x80000000);
    this.o1.fill(0x80000000);
    this.w = new Float64Array(N_IN * 256 * 4).fill(0.15);
    this.mm = new Uint32Array(64 * 2).fill(0x80000000);
    this.mbits = Math.max(12, Math.min(22, this.bits));
    this.mtab = new Int32Array(1 << this.mbits).fill(-1);
    this.lr = lr;
    this.byteContexts();
    this.nibbleSlots();
  }

  /** probability (12 bit) that the next bit is 1 */
  p(): number {
    const st = this.st;
    const c0 = this.c0;
    let i = 0;
    st[i++] = STRETCH[this.o0[c0]! >>> 20]!;
    this.slot[1] = ((this.c4 & 0xff) << 8) | c0;
    st[i++] = STRETCH[this.o1[this.slot[1]]! >>> 20]!;
    const nib = this.nib;
    for (let k = 0; k < N_HASHED; k++) {
      const s = this.base[k]! + nib;
      this.slot[2 + k] = s;
      st[i++] = STRETCH[this.tab[s]! >>> 20]!;
    }
    // match model
    let mctx = 0;
    if (this.mexp >= 0) {
      const expBit = (this.mexp >>> (7 - this.bitPos)) & 1;
      const lb = this.mlen > 15 ? 15 + Math.min(16, (this.mlen - 15) >> 2) : this.mlen;
      this.mslot = lb * 2 + expBit;
      st[i++] = STRETCH[this.mm[this.mslot]! >>> 20]!;
      mctx = this.mlen < 16 ? 1 : this.mlen < 32 ? 2 : 3;
      this.mslot2 = (((this.mexp << 8) | c0) << 2) | (mctx - 1);
      st[i++] = STRETCH[this.mm2[this.mslot2]! >>> 20]!;
    } else {
      this.mslot = -1;
      st[i++] = 0;
      st[i++] = 0;
    }
    st[i++] = 256;
    this.wOff = (mctx * 256 + c0) * N_IN;
    this.wOff2 = (this.c4 & 0xff) * N_IN;
    this.wOff3 = ((this.c4 >>> 8) & 0xff) * N_IN;
    const w = this.w;
    const w2 = this.w2;
    const w3 = this.w3;
    let dot = 0;
    let dot2 = 0;
    let dot3 = 0;
    for (let k = 0; k < N_IN; k++) {
      dot += w[this.wOff + k]! * st[k]!;
      dot2 += w2[this.wOff2 + k]! * st[k]!;
      dot3 += w3[this.wOff3 + k]! * st[k]!;
    }
    this.p1 = squash(Math.round(dot));
    this.p2 = squash(Math.round(dot2));
    this.p3 = squash(Math.round(dot3));
    this.pmix = squash(Math.round((dot + dot2 + dot3) / 3));
    const c1 = this.c4 & 0xff;
    const a1 = this.apm1.pp(this.pmix, (c0 | (c1 << 8)) & this.apmMask);
    const a2 = this.apm2.pp(this.pmix, (this.apm2Base + c0 * 0x9e5) & this.apmMask);
    const mk =
      this.mexp >= 0 ? 256 + ((Math.min(this.mlen, 31) << 1) | ((this.mexp >>> (7 - this.bitPos)) & 1)) * 256 : 0;
    const a3 = this.apm3.pp(this.pmix, mk + c0);
    let pr = (this.pmix + a1 + a2 + a3 + 2) >> 2;
    if (pr < 1) pr = 1;
    else if (pr > 4095) pr = 4095;
    return pr;
  }

  update(y: number): void {
    // mixer
    const err = ((y << 12) - this.p1) * this.lr;
    const err2 = ((y << 12) - this.p2) * this.lr;
    const err3 = ((y << 12) - this.p3) * this.lr;
    const w = this.w;
    const w2 = this.w2;
    const w3 = this.w3;
    const st = this.st;
    for (let k = 0; k < N_IN; k++) {
      w[this.wOff + k] = w[this.wOff + k]! + err * st[k]!;
      w2[this.wOff2 + k] = w2[this.wOff2 + k]! + err2 * st[k]!;
      w3[this.wOff3 + k] = w3[this.wOff3 + k]! + err3 * st[k]!;
    }
    this.apm1.update(y);
    this.apm2.update(y);
    this.apm3.update(y);
    // counters
    const target = y ? 4194303 : 0;
    upd(this.o0, this.c0, target, this.limit);
    upd(this.o1, this.slot[1]!, target, this.limit);
    for (let k = 0; k < N_HASHED; k++) upd(this.tab, this.slot[2 + k]!, target, this.limit);
    if (this.mslot >= 0) {
      upd(this.mm, this.mslot, target, this.limit);
      upd(this.mm2, this.mslot2, target, this.limit);
      if (((this.mexp >>> (7 - this.bitPos)) & 1) !== y) {
        this.mexp = -1;
        this.mlen = 0;
      }
    }
    // advance
    this.c0 = (this.c0 << 1) | y;
    this.nib = (this.nib << 1) | y;
    this.bitPos++;
    if (this.bitPos === 8) {
      const c = this.c0 & 0xff;
      this.c0 = 1;
      this.nib = 1;
      this.bitPos = 0;
      this.endByte(c);
    } else if (this.bitPos === 4) {
      this.nib = 1;
      this.nibbleSlots();
    }
  }

  private endByte(c: number): void {
    this.c8 = ((this.c8 << 8) | (this.c4 >>> 24)) >>> 0;
    this.c4 = ((this.c4 << 8) | c) >>> 0;
    if (this.buf[this.pos] !== c) this.buf[this.pos] = c; // decoder: the model reads its own output
    this.pos++;
    const isWord = (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c >= 128;
    if (isWord) this.word = h2(this.word, c >= 65 && c <= 90 ? c + 32 : c);
    else if (this.word !== 0) {
      this.prevWord = this.word;
      this.word = 0;
    }
    if (c === 10) {
      this.prevLineStart = this.lineStart;
      this.lineStart = this.pos;
    }
    if (this.colEnds && c === 0) {
      this.valueIndex++;
      this.valueStart = this.pos;
      while (this.col < this.colEnds.length && this.valueIndex >= this.colEnds[this.col]!) this.col++;
    }
    // match model
    if (this.mlen > 0 && this.mexp === c) {
      this.mlen++;
      this.mptr++;
    } else this.mlen = 0;
    if (this.pos >= 6) {
      const mh = h2(this.c4, this.c8 & 0xffff) >>> (32 - this.mbits);
      if (this.mlen === 0) {
        const cand = this.mtab[mh]!;
        if (cand > 0) {
          let len = 0;
          while (len < 32 && cand - 1 - len >= 0 && this.buf[cand - 1 - len] === this.buf[this.pos - 1 - len]) len++;
          if (len >= 6) {
            this.mlen = len;
            this.mptr = cand;
          }
        }
      }
      this.mtab[mh] = this.pos;
    }
    this.mexp = this.mlen > 0 && this.mptr < this.pos ? this.buf[this.mptr]! : -1;
    if (this.mexp < 0) this.mlen = 0;
    this.byteContexts();
    this.nibbleSlots();
  }

  private byteContexts(): void {
    const c4 = this.c4;
    const hc = this.hctx;
    hc[0] = h2(c4 & 0xffff, 2);
    this.apm2Base = hc[0] >>> 8;
    hc[1] = h2(c4 & 0xffffff, 3);
    hc[2] = h2(c4, 4);
    hc[3] = h2(c4 ^ Math.imul(this.c8 & 0xffff, 0x2f0b4c57), 6);
    hc[4] = h2(this.word ^ Math.imul(this.prevWord, 0x5bd1e995), 7);
    const col = this.pos - this.lineStart;
    const above = this.prevLineStart + col < this.lineStart ? this.buf[this.prevLineStart + col]! : 256;
    if (this.colEnds) {
      const inValue = Math.min(this.pos - this.valueStart, 255);
      hc[5] = h2(this.col * 256 + inValue, (c4 & 0xffff) | 0x1000000);
    } else hc[5] = h2((above << 12) | Math.min(col, 4095), (c4 & 0xff) | 0x800);
    hc[6] = h2(c4 ^ Math.imul(this.c8 & 0xff, 0x2f0b4c57), 5);
    hc[7] = h2(this.word + (c4 & 0xff) * 0x1000193, 8);
  }

  private nibbleSlots(): void {
    const shift = 32 - this.bits;
    for (let k = 0; k < N_HASHED; k++) {
      const h = this.bitPos === 0 ? this.hctx[k]! : h2(this.hctx[k]!, this.c0);
      this.base[k] = (k << this.bits) + (((h >>> shift) & ~15) | 0);
    }
  }
}

function upd(t: Uint32Array, i: number, target: number, limit: number): void {
  const v = t[i]!;
  const n = v & 1023;
  const p = v >>> 10;
  const np = p + (((target - p) * DT[n]!) | 0);
  t[i] = ((np << 10) | (n < limit ? n + 1 : n)) >>> 0;
}

/**
 * CM-code bytes; output = arithmetic-coded stream (length known from the container). Runs the
 * WebAssembly build of this model (cm-wasm/), which produces the same bits about twice as fast;
 * the TypeScript model below is the reference and the fallback when WebAssembly cannot run.
 * primeLen > 0: input[0..primeLen) only trains the model (the decoder gets it as `prefix`).
 */
export function cmEncode(
  input: Uint8Array,
  colEnds: Uint32Array | null = null,
  primeLen = 0,
  model: CmModel = 1,
): Uint8Array {
  const w = cmEncodeWasm(input, colEnds, primeLen, MODEL_LIMIT[model], MODEL_WASM[model]);
  if (w) return w;
  if (wasmOnly(model)) noModel3(model);
  return cmEncodeJs(input, colEnds, primeLen, model);
}

/** models 3-6 exist only as WebAssembly (with SIMD): no TypeScript fallback */
function noModel3(model: CmModel): never {
  return fail(
    "codec_too_large",
    `context-mixing model ${model} cannot run here (WebAssembly module or memory unavailable)`,
  );
}

/** decode rawLen bytes (or only the first `stop`: the model is sized for rawLen either way) */
export function cmDecode(
  payload: Uint8Array,
  rawLen: number,
  colEnds: Uint32Array | null = null,
  prefix: Uint8Array | null = null,
  model: CmModel = 1,
  stop = rawLen,
): Uint8Array {
  const w = cmDecodeWasm(payload, rawLen, colEnds, prefix, MODEL_LIMIT[model], stop, MODEL_WASM[model]);
  if (w) return w;
  if (wasmOnly(model)) noModel3(model);
  return cmDecodeJs(payload, rawLen, colEnds, prefix, model, stop);
}

/**
 * Code independent jobs at once on the worker pool (cm-pool.ts), off the caller's thread; the
 * chambers use this and cmDecodeOffThread, the synchronous pair above runs in the calling thread.
 */
export function cmEncodeAll(jobs: CmJob[]): Promise<Uint8Array[]> {
  return cmEncodePool(jobs, (j) => cmEncode(j.input, j.colEnds, j.primeLen, j.model));
}

/**
 * cmDecode on the worker pool. `prefix`: the bytes the model was trained on first, or where to
 * decode them from (the first `stop` bytes of another stream, decoded in the same worker).
 */
export function cmDecodeOffThread(
  payload: Uint8Array,
  rawLen: number,
  colEnds: Uint32Array | null = null,
  prefix: Uint8Array | PrefixFrom | null = null,
  model: CmModel = 1,
): Promise<Uint8Array> {
  return cmDecodePool({ payload, rawLen, colEnds, prefix, limit: MODEL_LIMIT[model], model }, (d) =>
    cmDecode(d.payload, d.rawLen, d.colEnds, d.prefix, model, d.stop),
  );
}

/** the reference TypeScript model of models 1 and 2 (the same bits as their WebAssembly build) */
export function cmEncodeJs(
  input: Uint8Array,
  colEnds: Uint32Array | null = null,
  primeLen = 0,
  model: CmModel = 1,
): Uint8Array {
  if (wasmOnly(model)) noModel3(model);
  // the model stores a byte only where buf differs from it, so the input is never written here
  const m = new CMModel(input, input.length, colEnds, MODEL_LIMIT[model]);
  const enc = new ArithEncoder((input.length >> 2) + 64);
  for (let i = 0; i < input.length; i++) {
    const c = input[i]!;
    for (let k = 7; k >= 0; k--) {
      const y = (c >> k) & 1;
      const p = m.p();
      if (i >= primeLen) enc.encode(y, p);
      m.update(y);
    }
  }
  return enc.finish();
}

export function cmDecodeJs(
  payload: Uint8Array,
  rawLen: number,
  colEnds: Uint32Array | null = null,
  prefix: Uint8Array | null = null,
  model: CmModel = 1,
  stop = rawLen,
): Uint8Array {
  if (wasmOnly(model)) noModel3(model);
  const pl = prefix ? prefix.length : 0;
  const buf = new Uint8Array(pl + rawLen);
  if (prefix) buf.set(prefix);
  const m = new CMModel(buf, buf.length, colEnds, MODEL_LIMIT[model]);
  for (let i = 0; i < pl; i++) {
    const c = buf[i]!;
    for (let k = 7; k >= 0; k--) {
      m.p();
      m.update((c >> k) & 1);
    }
  }
  const dec = new ArithDecoder(payload);
  const end = pl + Math.min(stop, rawLen);
  for (let i = pl; i < end; i++) {
    let c = 0;
    for (let k = 0; k < 8; k++) {
      const y = dec.decode(m.p());
      m.update(y);
      c = (c << 1) | y;
    }
    buf[i] = c;
    if (dec.overrun > 4) fail("codec_corrupt", "context-mixing stream ends early");
  }
  return buf.subarray(pl, end);
}
