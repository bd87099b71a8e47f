// Lab Phi context-mixing models 4-6 (AssemblyScript; `npm run build:wasm` compiles it to model4.wasm
// with SIMD enabled, and a test checks the committed binary equals a fresh build). Model 3
// (model3.as.ts, kept unchanged for its containers) plus, measured on the quick corpus (issue #24):
//  - a fourth mixer whose weight set is chosen by which of the seven hashed contexts were found in
//    the table for this nibble (7 bits) and the bit position, and a second layer that mixes the
//    four mixers' outputs with weights chosen by the partial byte (instead of their mean);
//  - three context profiles, passed in bits 8+ of init's `limit` (the host's MODEL_LIMIT[model]):
//    0 (model 4) text: model 3's contexts, hashed counters that slow to 1/33 (model 3: 1/16.4);
//    1 (model 5) binary: sparse contexts (bytes 2-4 back, bytes 5-8 back with the last byte,
//      bytes 3-4 back) instead of the word and line contexts, mixers learning twice as fast;
//    2 (model 6) records: a record length detected from repeated distances between equal bytes
//      (paq8's record model) and, once found, the contexts of the byte one record above with the
//      last byte and of the bytes one and two records above instead of the word contexts.
//    3 (model 3): model3.as.ts bit for bit (no fourth mixer, no second layer, model 3's rates),
//      so one module per thread also decodes (and the JSON chambers still write) model-3 streams.
// The encoder picks the profile (chambers/text: a trial on the input's head); the decoder runs it.
// There is no TypeScript twin: models 3-6 run only as WebAssembly (always available in Node).
//
// Use: alloc + setTables, init(...), then step(from, to, prime) over consecutive byte ranges,
// then finish() when encoding — the same interface as model.wasm (host.mjs drives both).

import {
  allocModel,
  apmAt,
  apmUpd,
  base,
  dot,
  gApmMask,
  h2,
  hctx,
  LR,
  mm,
  mm2,
  mtab,
  nibbleBuckets,
  o0,
  o1,
  p16,
  p32,
  setTablesOps,
  squash,
  stretch,
  t1,
  t2,
  t3,
  train,
  upd,
  upd16,
  w,
  w2,
  w3,
  w4,
  wf,
  dot1,
  train1,
  gHits,
} from "./model4-ops.as";

const LRF: i32 = 6;

export function alloc(n: usize): usize {
  return heap.alloc(n);
}

/** the same tables as model.wasm takes; model 3 computes its own integer rates (dt unused) */
export function setTables(stretchT: usize, squashT: usize, dt: usize, apmRow: usize): void {
  setTablesOps(stretchT, squashT, apmRow);
}

let gLimit: u32 = 30;
/**
 * 0 text, 1 binary (sparse contexts), 2 records (contexts of the byte one and two records above),
 * 3 model 3 bit for bit (its contexts, rates and three averaged mixers), so that one module per
 * thread serves the containers of model 3 too
 */
let profile: u32 = 0;
/**
 * bit 10 of `limit` (models 7-9: profiles 0-2 with it): tables 4 times larger than the input's
 * bytes (up to 2^21 slots per context; models 3-6: twice, up to 2^20), a 65,536-row hashed
 * order-2 APM (4,096 rows) and the final probability from the APMs alone, weighted 3:3:2
 * (models 3-6: their mean with the mixer's). Measured on the quick corpus (issue #24): 0.8 %
 * smaller for 10-15 % more time.
 */
let gen2: bool = false;
/**
 * bit 11 of `limit` (models 10-12: models 7-9 with it): 2^22 slots per context for inputs over
 * 1 MiB (models 7-9: 2^21), which the text chamber codes as one stream since it no longer splits
 * them; inputs of at most 1 MiB get model 7-9's tables. Measured one stream, model 7 → 10:
 * enwiki_sample.xml 1,286,751 → 1,276,620 B, bible.txt 695,594 → 691,762 B; 2^23 saved 5,403 and
 * 2,203 B more for 57 MB more memory and 20 % more time. Inputs of 0.5-1 MiB gained 0.5-2.7 % at
 * 2^22 too, but two such models at once on the worker pool took the benchmark's peak RSS from 305
 * to 381 MB.
 */
let big: bool = false;
/**
 * bit 12 of `limit` (models 13 and 14: the text profile of models 10 and 7 with it): contexts of
 * whole UTF-8 characters instead of the line-column one and the word-and-last-byte one — the last
 * two characters, and the last three, each with the bytes of the current character so far. Byte
 * contexts cut a 3-byte character anywhere; these are aligned to characters. Measured one stream,
 * model 10 → 13: genji_ja.txt (Japanese) 274,304 → 247,678 B; it loses where characters are
 * shorter or words are spaced (crime_and_punishment_ru.txt 293,428 → 313,316 B, the first 1.5 MB
 * of bible.txt +0.8 %), so the text chamber tries it only on text with many 3-byte characters.
 */
let chars: bool = false;
/** the last three whole characters (their UTF-8 bytes, up to 4 in a u32) and the current one's bytes so far */
let sCh1: u32 = 0;
let sCh2: u32 = 0;
let sCh3: u32 = 0;
let sCur: u32 = 0;
let sCurLeft: i32 = 0;
let cpos: usize = 0;
let rlen: i32 = 0;
let rlen1: i32 = 0;
let rlen2: i32 = 0;
let rcount1: i32 = 0;
let rcount2: i32 = 0;
let gBuf: usize = 0;
let gColEnds: usize = 0;
let gNCol: i32 = 0;
let gEnc: bool = true;
let gOut: usize = 0;
let gOutCap: i32 = 0;
let gBits: i32 = 0;
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
 * Forget everything (heap and state) so the instance codes a new stream: the host reuses one
 * instance per thread, whose memory then stays at its largest size instead of piling up garbage.
 * Call before setTables.
 */
export function reset(): void {
  heap.reset();
  sX1 = 0;
  sX2 = 0xffffffff;
  sX = 0;
  sOp = 0;
  sOverrun = 0;
  sMptr = 0;
  sMlen = 0;
  sMexp = -1;
  sC4 = 0;
  sC8 = 0;
  sWord = 0;
  sPrevWord = 0;
  sLineStart = 0;
  sPrevLineStart = 0;
  sPos = 0;
  sCol = 0;
  sValueIndex = 0;
  sValueStart = 0;
  sApm2Base = 0;
  sCh1 = 0;
  sCh2 = 0;
  sCh3 = 0;
  sCur = 0;
  sCurLeft = 0;
}

/**
 * mode 0: code buf[0..n) into out (capacity outCap); mode 1: decode from out[0..outCap) into
 * buf. Call once per instance, or after reset(). Tables: 2^bits slots per context,
 * bits = clamp(⌈log2 n⌉ + 1, 12, 20) (gen2: clamp(⌈log2 n⌉ + 2, 12, 21); big: 22 when n > 2^20); the
 * match table has 2^(bits − 1) entries.
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
  gLimit = limit & 0xff;
  profile = (limit >>> 8) & 3;
  gen2 = (limit & 0x400) !== 0;
  big = (limit & 0x800) !== 0;
  chars = (limit & 0x1000) !== 0;
  cpos = heap.alloc(256 * 16);
  memory.fill(cpos, 0, 256 * 16);
  rlen = 0;
  rlen1 = 0;
  rlen2 = 0;
  rcount1 = 0;
  rcount2 = 0;
  gBuf = buf;
  gColEnds = colEnds;
  gNCol = nCol;
  gEnc = mode === 0;
  gOut = out;
  gOutCap = outCap;
  const log2n = <i32>Math.ceil(Math.log2(<f64>max(1, n)));
  const bits = big && log2n > 20 ? 22 : gen2 ? max(12, min(21, log2n + 2)) : max(12, min(20, log2n + 1));
  gBits = bits;
  allocModel(bits, profile === 0, gen2);
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
 * early). prime = 1: the bytes are already in buf and only train the model (nothing is coded).
 */
export function step(from: i32, to: i32, prime: i32): i32 {
  const buf = gBuf;
  const colEnds = gColEnds;
  const nCol = gNCol;
  const enc = gEnc;
  const out = gOut;
  const outCap = gOutCap;
  const bits = gBits;
  const mbits = max(12, bits - 1);
  const apmMask = gApmMask;
  const limit = gLimit;
  const lim16: u32 = min(limit, 15);
  const legacy = profile === 3;
  const v2 = gen2;
  const apm2Mask: u32 = v2 ? 65535 : 4095;
  const lr: i32 = legacy ? 64 : profile === 1 ? LR * 2 : LR;
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
  let ch1 = sCh1;
  let ch2 = sCh2;
  let ch3 = sCh3;
  let cur = sCur;
  let curLeft = sCurLeft;
  const utf = chars;
  let newByte = true;
  let status = 0;

  for (let i = from; i < to; i++) {
    const c: i32 = enc || prime ? <i32>load<u8>(buf + i) : 0;
    for (let b = 7; b >= 0; b--) {
      if (newByte) {
        // byte contexts (after each byte, and once at the start): model 2's without order 6
        newByte = false;
        const h0 = h2(c4 & 0xffff, 2);
        store<u32>(hctx, h0);
        apm2Base = h0 >>> 8;
        store<u32>(hctx + 4, h2(c4 & 0xffffff, 3));
        store<u32>(hctx + 8, h2(c4, 4));
        if (profile === 1) {
          // binary: sparse contexts instead of the word and line contexts
          store<u32>(hctx + 12, h2(c4 & 0xffffff00, 9)); // bytes 2-4 back
          store<u32>(hctx + 16, h2(c8, c4 & 0xff)); // bytes 5-8 back and the last byte
          store<u32>(hctx + 24, h2(c4 & 0xffff0000, 11)); // bytes 3-4 back
        } else {
          store<u32>(hctx + 12, h2(word ^ (prevWord * 0x5bd1e995), 7));
          store<u32>(hctx + 24, h2(word + (c4 & 0xff) * 0x1000193, 8));
          if (profile === 2 && rlen > 0) {
            const a1: u32 = pos >= rlen ? <u32>load<u8>(buf + pos - rlen) : 256;
            const a2: u32 = pos >= 2 * rlen ? <u32>load<u8>(buf + pos - 2 * rlen) : 256;
            store<u32>(hctx + 12, h2((a1 << 8) | (c4 & 0xff), 12 + (<u32>rlen << 4)));
            store<u32>(hctx + 24, h2((a1 << 9) | a2, 13 + (<u32>rlen << 4)));
          }
        }
        if (utf) {
          // whole characters: the last two and the last three, each with the current one's bytes so far
          const pair = ch1 ^ (ch2 * 0x2f0b4c57);
          store<u32>(hctx + 24, h2(pair, cur + 0x3000000));
          store<u32>(hctx + 16, h2(pair ^ (ch3 * 0x5bd1e995), cur + 0x5000000));
        } else if (profile !== 1) {
          const cl = pos - lineStart;
          const above: u32 = prevLineStart + cl < lineStart ? <u32>load<u8>(buf + prevLineStart + cl) : 256;
          if (nCol > 0) {
            const inValue = <u32>min(pos - valueStart, 255);
            store<u32>(hctx + 16, h2(<u32>col * 256 + inValue, (c4 & 0xffff) | 0x1000000));
          } else store<u32>(hctx + 16, h2((above << 12) | <u32>min(cl, 4095), (c4 & 0xff) | 0x800));
        }
        store<u32>(hctx + 20, h2(c4 ^ ((c8 & 0xff) * 0x2f0b4c57), 5));
        nibbleBuckets(1, bits);
      }
      // ---- predict: 12 inputs (stretched probabilities) in three i32x4 vectors
      const u0 = p32(o0, c0);
      const slot1 = (<i32>(c4 & 0xff) << 8) | c0;
      const u1 = p32(o1, slot1);
      const q0 = load<i32>(base, 0) + nib;
      const q1 = load<i32>(base, 4) + nib;
      const q2 = load<i32>(base, 8) + nib;
      const q3 = load<i32>(base, 12) + nib;
      const q4 = load<i32>(base, 16) + nib;
      const q5 = load<i32>(base, 20) + nib;
      const q6 = load<i32>(base, 24) + nib;
      let mctx = 0;
      let mslot = -1;
      let mslot2 = 0;
      let expBit = 0;
      let u10: i32 = 0;
      let u11: i32 = 0;
      if (mexp >= 0) {
        expBit = (mexp >>> (7 - bitPos)) & 1;
        const lb = mlen > 15 ? 15 + min(16, (mlen - 15) >> 2) : mlen;
        mslot = lb * 2 + expBit;
        u10 = p32(mm, mslot);
        mctx = mlen < 16 ? 1 : mlen < 32 ? 2 : 3;
        mslot2 = (((mexp << 8) | c0) << 2) | (mctx - 1);
        u11 = p32(mm2, mslot2);
      }
      const s0 = i32x4.replace_lane(i32x4.replace_lane(i32x4.replace_lane(i32x4.splat(u0), 1, u1), 2, p16(q0)), 3, p16(q1));
      const s1 = i32x4.replace_lane(
        i32x4.replace_lane(i32x4.replace_lane(i32x4.splat(p16(q2)), 1, p16(q3)), 2, p16(q4)),
        3,
        p16(q5),
      );
      const s2 = i32x4.replace_lane(i32x4.replace_lane(i32x4.replace_lane(i32x4.splat(p16(q6)), 1, u10), 2, u11), 3, 256);
      // three mixers (weight sets by match length × partial byte, by last byte, by the byte before)
      const wp = w + (<usize>(mctx * 256 + c0) << 6);
      const wp2 = w2 + (<usize>(c4 & 0xff) << 6);
      const wp3 = w3 + (<usize>((c4 >>> 8) & 0xff) << 6);
      const d1 = dot(wp, s0, s1, s2);
      const d2 = dot(wp2, s0, s1, s2);
      const d3 = dot(wp3, s0, s1, s2);
      const p1 = squash(d1);
      const p2 = squash(d2);
      const p3 = squash(d3);
      const wp4 = w4 + (<usize>((gHits << 3) | bitPos) << 6);
      const wpf = wf + (<usize>c0 << 4);
      let d4 = 0;
      let p4 = 0;
      let sf = i32x4.splat(0);
      let pmix: i32;
      if (legacy) pmix = squash((d1 + d2 + d3) / 3);
      else {
        d4 = dot(wp4, s0, s1, s2);
        p4 = squash(d4);
        sf = i32x4.max_s(
          i32x4.splat(-2047),
          i32x4.min_s(
            i32x4.splat(2047),
            i32x4.replace_lane(i32x4.replace_lane(i32x4.replace_lane(i32x4.splat(d1), 1, d2), 2, d3), 3, d4),
          ),
        );
        pmix = squash(dot1(wpf, sf));
      }
      // three APM stages: order 1, hashed order 2, match state
      const sp = (stretch(pmix) + 2048) * 23;
      const wt = sp & 0xfff;
      const lo = sp >>> 12;
      const i1 = t1 + (<usize>(lo + ((c0 | (<i32>(c4 & 0xff) << 8)) & apmMask) * 24) << 1);
      const i2 = t2 + (<usize>(lo + (<i32>((apm2Base + <u32>c0 * 0x9e5) & apm2Mask)) * 24) << 1);
      const mk = mexp >= 0 ? 256 + ((min(mlen, 31) << 1) | expBit) * 256 : 0;
      const i3 = t3 + (<usize>(lo + (mk + c0) * 24) << 1);
      let pr = v2
        ? (apmAt(i1, wt) * 3 + apmAt(i2, wt) * 3 + apmAt(i3, wt) * 2 + 4) >> 3
        : (pmix + apmAt(i1, wt) + apmAt(i2, wt) + apmAt(i3, wt) + 2) >> 2;
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
      train(wp, s0, s1, s2, ((y << 12) - p1) * lr);
      train(wp2, s0, s1, s2, ((y << 12) - p2) * lr);
      train(wp3, s0, s1, s2, ((y << 12) - p3) * lr);
      if (!legacy) {
        train(wp4, s0, s1, s2, ((y << 12) - p4) * lr);
        train1(wpf, sf, ((y << 12) - pmix) * LRF);
      }
      const g = (y << 16) + (y << 7) - y - y;
      apmUpd(i1, g);
      apmUpd(i2, g);
      apmUpd(i3, g);
      upd(o0, c0, y, limit);
      upd(o1, slot1, y, limit);
      upd16(q0, y, lim16);
      upd16(q1, y, lim16);
      upd16(q2, y, lim16);
      upd16(q3, y, lim16);
      upd16(q4, y, lim16);
      upd16(q5, y, lim16);
      upd16(q6, y, lim16);
      if (mslot >= 0) {
        upd(mm, mslot, y, limit);
        upd(mm2, mslot2, y, limit);
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
        if (cb >= 0xe0 && v2) {
          // a 3- or 4-byte UTF-8 character (CJK and most other scripts without spaces) is a word
          prevWord = word;
          word = h2(0x4c0, <u32>cb);
        } else if (isWord) word = h2(word, <u32>(cb >= 65 && cb <= 90 ? cb + 32 : cb));
        else if (word !== 0) {
          prevWord = word;
          word = 0;
        }
        if (utf) {
          if (curLeft > 0) {
            cur = (cur << 8) | <u32>cb;
            curLeft--;
          } else {
            cur = <u32>cb;
            curLeft = cb >= 0xf0 ? 3 : cb >= 0xe0 ? 2 : cb >= 0xc0 ? 1 : 0;
          }
          if (curLeft === 0) {
            ch3 = ch2;
            ch2 = ch1;
            ch1 = cur;
            cur = 0;
          }
        }
        if (profile === 2) {
          // record length: the distance between the last five occurrences of a byte, repeated
          const ca = cpos + (<usize>cb << 4);
          const p1 = load<i32>(ca);
          const p2 = load<i32>(ca, 4);
          const p3 = load<i32>(ca, 8);
          const r = pos - p1;
          if (r > 1 && p1 > 0 && r === p1 - p2 && r === p2 - p3) {
            if (r === rlen1) rcount1++;
            else if (r === rlen2) rcount2++;
            else if (rcount1 > rcount2) {
              rlen2 = r;
              rcount2 = 1;
            } else {
              rlen1 = r;
              rcount1 = 1;
            }
            if (rcount1 > 15 && rlen !== rlen1) {
              rlen = rlen1;
              rcount1 = 0;
              rcount2 = 0;
            } else if (rcount2 > 15 && rlen !== rlen2) {
              rlen = rlen2;
              rcount1 = 0;
              rcount2 = 0;
            }
          }
          store<i32>(ca, p2, 8);
          store<i32>(ca, p1, 4);
          store<i32>(ca, pos);
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
        // match model: the longest recent repeat (≥ 6 bytes) predicts the next byte
        if (mlen > 0 && mexp === cb) {
          mlen++;
          mptr++;
        } else mlen = 0;
        if (pos >= 6) {
          const ma = mtab + (<usize>(h2(c4, c8 & 0xffff) >>> (32 - mbits)) << 2);
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
        nibbleBuckets(<u32>c0, bits);
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
  sCh1 = ch1;
  sCh2 = ch2;
  sCh3 = ch3;
  sCur = cur;
  sCurLeft = curLeft;
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
