// Lab Phi context-mixing model — the WebAssembly build of ../cm.ts (AssemblyScript source;
// `npm run build:wasm` compiles it to model.wasm, and a test checks the committed binary
// equals a fresh build). Bit-identical to the TypeScript model: the same integer and float64
// operations in the same order; the lookup tables (stretch, squash, 1/(n+1.4), the APM row)
// are computed once in JS and copied in, so both builds read the same values.
//
// Use: alloc + setTables, init(...), then step(from, to, prime) over consecutive byte ranges (the
// host calls it in slices so the engine can tier the loop up to optimized code early), then
// finish() when encoding.

const N_HASHED: i32 = 8;
const N_IN: i32 = 13;

let STRETCH: usize = 0; // i16[4096]
let SQUASH: usize = 0; // i16[4096]
let DT: usize = 0; // f64[1024]
let APM_ROW: usize = 0; // u16[24]

export function alloc(n: usize): usize {
  return heap.alloc(n);
}

export function setTables(stretchT: usize, squashT: usize, dt: usize, apmRow: usize): void {
  STRETCH = stretchT;
  SQUASH = squashT;
  DT = dt;
  APM_ROW = apmRow;
}

// @ts-ignore: decorator
@inline function stretch(p: i32): i32 {
  return <i32>load<i16>(STRETCH + ((<usize>p) << 1));
}
// @ts-ignore: decorator
@inline function squashI(d: i32): i32 {
  return d > 2047 ? 4095 : d < -2047 ? 1 : <i32>load<i16>(SQUASH + ((<usize>(d + 2048)) << 1));
}
/** JS Math.round: nearest integer, ties toward +infinity */
// @ts-ignore: decorator
@inline function jsRound(x: f64): i32 {
  const r = Math.floor(x);
  return <i32>(x - r >= 0.5 ? r + 1 : r);
}
// @ts-ignore: decorator
@inline function squashF(d: f64): i32 {
  return squashI(jsRound(d));
}
// @ts-ignore: decorator
@inline function h2(a: u32, b: u32): u32 {
  let h: u32 = (a * 0x9e3779b1) ^ ((b + 0x7f4a7c15) * 0x85ebca77);
  h ^= h >>> 15;
  h = h * 0xc2b2ae3d;
  return h ^ (h >>> 13);
}
// @ts-ignore: decorator
@inline function upd(t: usize, i: i32, target: i32, limit: u32): void {
  const a = t + ((<usize>i) << 2);
  const v = load<u32>(a);
  const n = v & 1023;
  const p = <i32>(v >>> 10);
  const np = p + <i32>(<f64>(target - p) * load<f64>(DT + ((<usize>n) << 3)));
  store<u32>(a, ((<u32>np) << 10) | (n < limit ? n + 1 : n));
}
function fill32(p: usize, n: i32, v: u32): void {
  for (let i = 0; i < n; i++) store<u32>(p + ((<usize>i) << 2), v);
}
function fillF(p: usize, n: i32, v: f64): void {
  for (let i = 0; i < n; i++) store<f64>(p + ((<usize>i) << 3), v);
}
function apmTable(n: i32): usize {
  const t = heap.alloc(<usize>n * 48);
  for (let i = 0; i < n; i++) memory.copy(t + <usize>i * 48, APM_ROW, 48);
  return t;
}

// tables and inputs (set by init)
/** counter confidence limit (model parameter: 255 in model 1, 30 in model 2) */
let gLimit: u32 = 255;
let gBuf: usize = 0;
let gN: i32 = 0;
let gColEnds: usize = 0;
let gNCol: i32 = 0;
let gEnc: bool = true;
let gOut: usize = 0;
let gOutCap: i32 = 0;
let gBits: i32 = 0;
let gMbits: i32 = 0;
let gApmMask: i32 = 0;
let o0: usize = 0;
let o1: usize = 0;
let tab: usize = 0;
let base: usize = 0;
let hctx: usize = 0;
let w: usize = 0;
let w2: usize = 0;
let w3: usize = 0;
let mm: usize = 0;
let mm2: usize = 0;
let mtab: usize = 0;
let t1: usize = 0;
let t2: usize = 0;
let t3: usize = 0;
// model and coder state between steps (the byte loop keeps them in locals)
let sX1: u32 = 0;
let sX2: u32 = 0xffffffff;
let sX: u32 = 0;
let sOp: i32 = 0;
let sOverrun: i32 = 0;
let sMptr: i32 = 0;
let sMlen: i32 = 0;
let sMexp: i32 = -1;
let sC4: u32 = 0;
let sC8: u32 = 0;
let sWord: u32 = 0;
let sPrevWord: u32 = 0;
let sLineStart: i32 = 0;
let sPrevLineStart: i32 = 0;
let sPos: i32 = 0;
let sCol: i32 = 0;
let sValueIndex: u32 = 0;
let sValueStart: i32 = 0;
let sApm2Base: u32 = 0;

/**
 * mode 0: code buf[0..n) into out (capacity outCap); mode 1: decode from out[0..outCap) into
 * buf. Call once per instance.
 */
export function init(
  buf: usize,
  n: i32,
  colEnds: usize,
  nCol: i32,
  mode: i32,
  out: usize,
  outCap: i32,
  limit: u32,
): void {
  gLimit = limit;
  gBuf = buf;
  gN = n;
  gColEnds = colEnds;
  gNCol = nCol;
  gEnc = mode === 0;
  gOut = out;
  gOutCap = outCap;
  let bits = <i32>Math.ceil(Math.log2(<f64>max(1, n))) + 1;
  bits = max(12, min(22, bits));
  gBits = bits;
  o0 = heap.alloc(256 * 4);
  fill32(o0, 256, 0x80000000);
  o1 = heap.alloc(65536 * 4);
  fill32(o1, 65536, 0x80000000);
  tab = heap.alloc((<usize>N_HASHED << bits) * 4);
  fill32(tab, N_HASHED << bits, 0x80000000);
  base = heap.alloc(N_HASHED * 4);
  hctx = heap.alloc(N_HASHED * 4);
  w = heap.alloc(N_IN * 256 * 4 * 8);
  fillF(w, N_IN * 256 * 4, 0.15);
  w2 = heap.alloc(N_IN * 256 * 8);
  fillF(w2, N_IN * 256, 0.15);
  w3 = heap.alloc(N_IN * 256 * 8);
  fillF(w3, N_IN * 256, 0.15);
  mm = heap.alloc(128 * 4);
  fill32(mm, 128, 0x80000000);
  mm2 = heap.alloc((1 << 18) * 4);
  fill32(mm2, 1 << 18, 0x80000000);
  gMbits = max(12, min(22, bits));
  mtab = heap.alloc((<usize>1 << gMbits) * 4);
  fill32(mtab, 1 << gMbits, 0xffffffff);
  gApmMask = (1 << min(16, bits)) - 1;
  t1 = apmTable(gApmMask + 1);
  t2 = apmTable(gApmMask + 1);
  t3 = apmTable(256 * 65);
  if (!gEnc) {
    for (let k = 0; k < 4; k++) {
      let b: u32 = 0;
      if (sOp < outCap) b = load<u8>(out + sOp++);
      else sOverrun++;
      sX = (sX << 8) | b;
    }
  }
}

/**
 * code or decode bytes [from, to); returns 0, or -1 (encoder: out full; decoder: stream ends
 * early). prime = 1: the bytes are already in buf and only train the model (nothing is coded) —
 * a segment's model starts from the bytes before it.
 */
export function step(from: i32, to: i32, prime: i32): i32 {
  const buf = gBuf;
  const colEnds = gColEnds;
  const nCol = gNCol;
  const enc = gEnc;
  const out = gOut;
  const outCap = gOutCap;
  const bits = gBits;
  const shift = 32 - bits;
  const mbits = gMbits;
  const apmMask = gApmMask;
  const limit = gLimit;
  const lr: f64 = 1.5e-8;
  let x1 = sX1;
  let x2 = sX2;
  let x = sX;
  let op = sOp;
  let overrun = sOverrun;
  let mptr = sMptr;
  let mlen = sMlen;
  let mexp = sMexp;
  let c0: i32 = 1;
  let nib: i32 = 1;
  let bitPos: i32 = 0;
  let c4 = sC4;
  let c8 = sC8;
  let word = sWord;
  let prevWord = sPrevWord;
  let lineStart = sLineStart;
  let prevLineStart = sPrevLineStart;
  let pos = sPos;
  let col = sCol;
  let valueIndex = sValueIndex;
  let valueStart = sValueStart;
  let apm2Base = sApm2Base;
  let newByte = true;
  let status = 0;

  for (let i = from; i < to; i++) {
    const c: i32 = enc || prime ? <i32>load<u8>(buf + i) : 0;
    for (let b = 7; b >= 0; b--) {
      if (newByte) {
        // byte contexts (after each byte, and once at the start)
        newByte = false;
        const h0 = h2(c4 & 0xffff, 2);
        store<u32>(hctx, h0);
        apm2Base = h0 >>> 8;
        store<u32>(hctx + 4, h2(c4 & 0xffffff, 3));
        store<u32>(hctx + 8, h2(c4, 4));
        store<u32>(hctx + 12, h2(c4 ^ ((c8 & 0xffff) * 0x2f0b4c57), 6));
        store<u32>(hctx + 16, h2(word ^ (prevWord * 0x5bd1e995), 7));
        const cl = pos - lineStart;
        const above: u32 = prevLineStart + cl < lineStart ? <u32>load<u8>(buf + prevLineStart + cl) : 256;
        if (nCol > 0) {
          const inValue = <u32>min(pos - valueStart, 255);
          store<u32>(hctx + 20, h2(<u32>col * 256 + inValue, (c4 & 0xffff) | 0x1000000));
        } else store<u32>(hctx + 20, h2((above << 12) | <u32>min(cl, 4095), (c4 & 0xff) | 0x800));
        store<u32>(hctx + 24, h2(c4 ^ ((c8 & 0xff) * 0x2f0b4c57), 5));
        store<u32>(hctx + 28, h2(word + (c4 & 0xff) * 0x1000193, 8));
        for (let k = 0; k < N_HASHED; k++) {
          const h = load<u32>(hctx + (<usize>k << 2));
          store<i32>(base + (<usize>k << 2), (k << bits) + <i32>((h >>> shift) & ~15));
        }
      }
      // ---- predict (inputs, slots and mixer terms unrolled into locals)
      const u0 = <f64>stretch(<i32>(load<u32>(o0 + (<usize>c0 << 2)) >>> 20));
      const slot1 = (<i32>(c4 & 0xff) << 8) | c0;
      const u1 = <f64>stretch(<i32>(load<u32>(o1 + (<usize>slot1 << 2)) >>> 20));
      const q0 = load<i32>(base + 0) + nib;
      const u2 = <f64>stretch(<i32>(load<u32>(tab + (<usize>q0 << 2)) >>> 20));
      const q1 = load<i32>(base + 4) + nib;
      const u3 = <f64>stretch(<i32>(load<u32>(tab + (<usize>q1 << 2)) >>> 20));
      const q2 = load<i32>(base + 8) + nib;
      const u4 = <f64>stretch(<i32>(load<u32>(tab + (<usize>q2 << 2)) >>> 20));
      const q3 = load<i32>(base + 12) + nib;
      const u5 = <f64>stretch(<i32>(load<u32>(tab + (<usize>q3 << 2)) >>> 20));
      const q4 = load<i32>(base + 16) + nib;
      const u6 = <f64>stretch(<i32>(load<u32>(tab + (<usize>q4 << 2)) >>> 20));
      const q5 = load<i32>(base + 20) + nib;
      const u7 = <f64>stretch(<i32>(load<u32>(tab + (<usize>q5 << 2)) >>> 20));
      const q6 = load<i32>(base + 24) + nib;
      const u8 = <f64>stretch(<i32>(load<u32>(tab + (<usize>q6 << 2)) >>> 20));
      const q7 = load<i32>(base + 28) + nib;
      const u9 = <f64>stretch(<i32>(load<u32>(tab + (<usize>q7 << 2)) >>> 20));
      let mctx = 0;
      let mslot = -1;
      let mslot2 = 0;
      let expBit = 0;
      let u10: f64 = 0;
      let u11: f64 = 0;
      if (mexp >= 0) {
        expBit = (mexp >>> (7 - bitPos)) & 1;
        const lb = mlen > 15 ? 15 + min(16, (mlen - 15) >> 2) : mlen;
        mslot = lb * 2 + expBit;
        u10 = <f64>stretch(<i32>(load<u32>(mm + (<usize>mslot << 2)) >>> 20));
        mctx = mlen < 16 ? 1 : mlen < 32 ? 2 : 3;
        mslot2 = (((mexp << 8) | c0) << 2) | (mctx - 1);
        u11 = <f64>stretch(<i32>(load<u32>(mm2 + (<usize>mslot2 << 2)) >>> 20));
      }
      const u12: f64 = 256;
      const wp = w + (<usize>((mctx * 256 + c0) * N_IN) << 3);
      const wp2 = w2 + (<usize>(<i32>(c4 & 0xff) * N_IN) << 3);
      const wp3 = w3 + (<usize>(<i32>((c4 >>> 8) & 0xff) * N_IN) << 3);
      let dot: f64 = 0;
      dot += load<f64>(wp, 0) * u0;
      dot += load<f64>(wp, 8) * u1;
      dot += load<f64>(wp, 16) * u2;
      dot += load<f64>(wp, 24) * u3;
      dot += load<f64>(wp, 32) * u4;
      dot += load<f64>(wp, 40) * u5;
      dot += load<f64>(wp, 48) * u6;
      dot += load<f64>(wp, 56) * u7;
      dot += load<f64>(wp, 64) * u8;
      dot += load<f64>(wp, 72) * u9;
      dot += load<f64>(wp, 80) * u10;
      dot += load<f64>(wp, 88) * u11;
      dot += load<f64>(wp, 96) * u12;
      let dot2: f64 = 0;
      dot2 += load<f64>(wp2, 0) * u0;
      dot2 += load<f64>(wp2, 8) * u1;
      dot2 += load<f64>(wp2, 16) * u2;
      dot2 += load<f64>(wp2, 24) * u3;
      dot2 += load<f64>(wp2, 32) * u4;
      dot2 += load<f64>(wp2, 40) * u5;
      dot2 += load<f64>(wp2, 48) * u6;
      dot2 += load<f64>(wp2, 56) * u7;
      dot2 += load<f64>(wp2, 64) * u8;
      dot2 += load<f64>(wp2, 72) * u9;
      dot2 += load<f64>(wp2, 80) * u10;
      dot2 += load<f64>(wp2, 88) * u11;
      dot2 += load<f64>(wp2, 96) * u12;
      let dot3: f64 = 0;
      dot3 += load<f64>(wp3, 0) * u0;
      dot3 += load<f64>(wp3, 8) * u1;
      dot3 += load<f64>(wp3, 16) * u2;
      dot3 += load<f64>(wp3, 24) * u3;
      dot3 += load<f64>(wp3, 32) * u4;
      dot3 += load<f64>(wp3, 40) * u5;
      dot3 += load<f64>(wp3, 48) * u6;
      dot3 += load<f64>(wp3, 56) * u7;
      dot3 += load<f64>(wp3, 64) * u8;
      dot3 += load<f64>(wp3, 72) * u9;
      dot3 += load<f64>(wp3, 80) * u10;
      dot3 += load<f64>(wp3, 88) * u11;
      dot3 += load<f64>(wp3, 96) * u12;
      const p1 = squashF(dot);
      const p2 = squashF(dot2);
      const p3 = squashF(dot3);
      const pmix = squashF((dot + dot2 + dot3) / 3);
      const sp = (stretch(pmix) + 2048) * 23;
      const wt = sp & 0xfff;
      const lo = sp >>> 12;
      const c1 = <i32>(c4 & 0xff);
      const i1 = t1 + (<usize>(lo + ((c0 | (c1 << 8)) & apmMask) * 24) << 1);
      const a1 = <i32>((<u32>load<u16>(i1) * <u32>(4096 - wt) + <u32>load<u16>(i1 + 2) * <u32>wt) >>> 16);
      const i2 = t2 + (<usize>(lo + (<i32>((apm2Base + <u32>c0 * 0x9e5) & <u32>apmMask)) * 24) << 1);
      const a2 = <i32>((<u32>load<u16>(i2) * <u32>(4096 - wt) + <u32>load<u16>(i2 + 2) * <u32>wt) >>> 16);
      const mk = mexp >= 0 ? 256 + ((min(mlen, 31) << 1) | expBit) * 256 : 0;
      const i3 = t3 + (<usize>(lo + (mk + c0) * 24) << 1);
      const a3 = <i32>((<u32>load<u16>(i3) * <u32>(4096 - wt) + <u32>load<u16>(i3 + 2) * <u32>wt) >>> 16);
      let pr = (pmix + a1 + a2 + a3 + 2) >> 2;
      if (pr < 1) pr = 1;
      else if (pr > 4095) pr = 4095;
      // ---- code
      let y: i32;
      const range = x2 - x1;
      const xmid = x1 + (range >>> 12) * <u32>pr + (((range & 0xfff) * <u32>pr) >>> 12);
      if (prime) y = (c >> b) & 1;
      else if (enc) {
        y = (c >> b) & 1;
        if (y) x2 = xmid;
        else x1 = xmid + 1;
        while (((x1 ^ x2) & 0xff000000) === 0) {
          if (op >= outCap) {
            status = -1;
            break;
          }
          store<u8>(out + op++, <u8>(x2 >>> 24));
          x1 = x1 << 8;
          x2 = (x2 << 8) | 255;
        }
      } else {
        if (x <= xmid) {
          y = 1;
          x2 = xmid;
        } else {
          y = 0;
          x1 = xmid + 1;
        }
        while (((x1 ^ x2) & 0xff000000) === 0) {
          x1 = x1 << 8;
          x2 = (x2 << 8) | 255;
          let nb: u32 = 0;
          if (op < outCap) nb = load<u8>(out + op++);
          else overrun++;
          x = (x << 8) | nb;
        }
      }
      // ---- update
      const yt = <f64>(y << 12);
      const err = (yt - <f64>p1) * lr;
      const err2 = (yt - <f64>p2) * lr;
      const err3 = (yt - <f64>p3) * lr;
      store<f64>(wp, load<f64>(wp, 0) + err * u0, 0);
      store<f64>(wp, load<f64>(wp, 8) + err * u1, 8);
      store<f64>(wp, load<f64>(wp, 16) + err * u2, 16);
      store<f64>(wp, load<f64>(wp, 24) + err * u3, 24);
      store<f64>(wp, load<f64>(wp, 32) + err * u4, 32);
      store<f64>(wp, load<f64>(wp, 40) + err * u5, 40);
      store<f64>(wp, load<f64>(wp, 48) + err * u6, 48);
      store<f64>(wp, load<f64>(wp, 56) + err * u7, 56);
      store<f64>(wp, load<f64>(wp, 64) + err * u8, 64);
      store<f64>(wp, load<f64>(wp, 72) + err * u9, 72);
      store<f64>(wp, load<f64>(wp, 80) + err * u10, 80);
      store<f64>(wp, load<f64>(wp, 88) + err * u11, 88);
      store<f64>(wp, load<f64>(wp, 96) + err * u12, 96);
      store<f64>(wp2, load<f64>(wp2, 0) + err2 * u0, 0);
      store<f64>(wp2, load<f64>(wp2, 8) + err2 * u1, 8);
      store<f64>(wp2, load<f64>(wp2, 16) + err2 * u2, 16);
      store<f64>(wp2, load<f64>(wp2, 24) + err2 * u3, 24);
      store<f64>(wp2, load<f64>(wp2, 32) + err2 * u4, 32);
      store<f64>(wp2, load<f64>(wp2, 40) + err2 * u5, 40);
      store<f64>(wp2, load<f64>(wp2, 48) + err2 * u6, 48);
      store<f64>(wp2, load<f64>(wp2, 56) + err2 * u7, 56);
      store<f64>(wp2, load<f64>(wp2, 64) + err2 * u8, 64);
      store<f64>(wp2, load<f64>(wp2, 72) + err2 * u9, 72);
      store<f64>(wp2, load<f64>(wp2, 80) + err2 * u10, 80);
      store<f64>(wp2, load<f64>(wp2, 88) + err2 * u11, 88);
      store<f64>(wp2, load<f64>(wp2, 96) + err2 * u12, 96);
      store<f64>(wp3, load<f64>(wp3, 0) + err3 * u0, 0);
      store<f64>(wp3, load<f64>(wp3, 8) + err3 * u1, 8);
      store<f64>(wp3, load<f64>(wp3, 16) + err3 * u2, 16);
      store<f64>(wp3, load<f64>(wp3, 24) + err3 * u3, 24);
      store<f64>(wp3, load<f64>(wp3, 32) + err3 * u4, 32);
      store<f64>(wp3, load<f64>(wp3, 40) + err3 * u5, 40);
      store<f64>(wp3, load<f64>(wp3, 48) + err3 * u6, 48);
      store<f64>(wp3, load<f64>(wp3, 56) + err3 * u7, 56);
      store<f64>(wp3, load<f64>(wp3, 64) + err3 * u8, 64);
      store<f64>(wp3, load<f64>(wp3, 72) + err3 * u9, 72);
      store<f64>(wp3, load<f64>(wp3, 80) + err3 * u10, 80);
      store<f64>(wp3, load<f64>(wp3, 88) + err3 * u11, 88);
      store<f64>(wp3, load<f64>(wp3, 96) + err3 * u12, 96);
      const g = (y << 16) + (y << 7) - y - y;
      store<u16>(i1, <u16>(<i32>load<u16>(i1) + ((g - <i32>load<u16>(i1)) >> 7)));
      store<u16>(i1 + 2, <u16>(<i32>load<u16>(i1 + 2) + ((g - <i32>load<u16>(i1 + 2)) >> 7)));
      store<u16>(i2, <u16>(<i32>load<u16>(i2) + ((g - <i32>load<u16>(i2)) >> 7)));
      store<u16>(i2 + 2, <u16>(<i32>load<u16>(i2 + 2) + ((g - <i32>load<u16>(i2 + 2)) >> 7)));
      store<u16>(i3, <u16>(<i32>load<u16>(i3) + ((g - <i32>load<u16>(i3)) >> 7)));
      store<u16>(i3 + 2, <u16>(<i32>load<u16>(i3 + 2) + ((g - <i32>load<u16>(i3 + 2)) >> 7)));
      const target = y ? 4194303 : 0;
      upd(o0, c0, target, limit);
      upd(o1, slot1, target, limit);
      upd(tab, q0, target, limit);
      upd(tab, q1, target, limit);
      upd(tab, q2, target, limit);
      upd(tab, q3, target, limit);
      upd(tab, q4, target, limit);
      upd(tab, q5, target, limit);
      upd(tab, q6, target, limit);
      upd(tab, q7, target, limit);
      if (mslot >= 0) {
        upd(mm, mslot, target, limit);
        upd(mm2, mslot2, target, limit);
        if (expBit !== y) {
          mexp = -1;
          mlen = 0;
        }
      }
      c0 = (c0 << 1) | y;
      nib = (nib << 1) | y;
      bitPos++;
      if (bitPos === 8) {
        const cb = c0 & 0xff;
        c0 = 1;
        nib = 1;
        bitPos = 0;
        c8 = (c8 << 8) | (c4 >>> 24);
        c4 = (c4 << 8) | <u32>cb;
        store<u8>(buf + pos, <u8>cb);
        pos++;
        const isWord = (cb >= 97 && cb <= 122) || (cb >= 65 && cb <= 90) || cb >= 128;
        if (isWord) word = h2(word, <u32>(cb >= 65 && cb <= 90 ? cb + 32 : cb));
        else if (word !== 0) {
          prevWord = word;
          word = 0;
        }
        if (cb === 10) {
          prevLineStart = lineStart;
          lineStart = pos;
        }
        if (nCol > 0 && cb === 0) {
          valueIndex++;
          valueStart = pos;
          while (col < nCol && valueIndex >= load<u32>(colEnds + (<usize>col << 2))) col++;
        }
        if (mlen > 0 && mexp === cb) {
          mlen++;
          mptr++;
        } else mlen = 0;
        if (pos >= 6) {
          const mh = h2(c4, c8 & 0xffff) >>> (32 - mbits);
          const ma = mtab + (<usize>mh << 2);
          if (mlen === 0) {
            const cand = load<i32>(ma);
            if (cand > 0) {
              let len = 0;
              while (len < 32 && cand - 1 - len >= 0 && load<u8>(buf + cand - 1 - len) === load<u8>(buf + pos - 1 - len))
                len++;
              if (len >= 6) {
                mlen = len;
                mptr = cand;
              }
            }
          }
          store<i32>(ma, pos);
        }
        mexp = mlen > 0 && mptr < pos ? <i32>load<u8>(buf + mptr) : -1;
        if (mexp < 0) mlen = 0;
        newByte = true;
      } else if (bitPos === 4) {
        nib = 1;
        for (let k = 0; k < N_HASHED; k++) {
          const h = h2(load<u32>(hctx + (<usize>k << 2)), <u32>c0);
          store<i32>(base + (<usize>k << 2), (k << bits) + <i32>((h >>> shift) & ~15));
        }
      }
    }
    if (status < 0 || (!enc && overrun > 4)) {
      status = -1;
      break;
    }
  }
  sX1 = x1;
  sX2 = x2;
  sX = x;
  sOp = op;
  sOverrun = overrun;
  sMptr = mptr;
  sMlen = mlen;
  sMexp = mexp;
  sC4 = c4;
  sC8 = c8;
  sWord = word;
  sPrevWord = prevWord;
  sLineStart = lineStart;
  sPrevLineStart = prevLineStart;
  sPos = pos;
  sCol = col;
  sValueIndex = valueIndex;
  sValueStart = valueStart;
  sApm2Base = apm2Base;
  return status;
}

/** encoder: flush the coder; returns the output length, or -1 when out is too small */
export function finish(): i32 {
  if (sOp + 4 > gOutCap) return -1;
  const out = gOut;
  store<u8>(out + sOp++, <u8>(sX1 >>> 24));
  store<u8>(out + sOp++, <u8>(sX1 >>> 16));
  store<u8>(out + sOp++, <u8>(sX1 >>> 8));
  store<u8>(out + sOp++, <u8>sX1);
  return sOp;
}
