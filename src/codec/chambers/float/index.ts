import { backendDecode } from "../../backends.js";
import { decodeInts, encodeInts, MAX_ABS } from "../../entropy/intcoder.js";
import { fail } from "../../errors.js";
import { ByteReader, ByteWriter } from "../../format/varint.js";
import { bestBackend } from "../general/index.js";
import type { Chamber, Level } from "../types.js";
import { transpose, untranspose } from "../util.js";

/**
 * float: float64 / float32 little-endian arrays.
 *  mode 0 (decimal, ALP-like): one exponent e for the array; v = n / 10^e with n a safe integer
 *    whenever that round-trips bit-exactly, the integers go through the integer coder
 *    (delta/zigzag/rANS); the other values are exceptions (position gaps + raw bits).
 *  mode 1 (XOR + byte planes, Gorilla/Chimp-like): each value's bits XOR the previous value's,
 *    then the bytes are split into planes (transposition) and coded by the best general backend.
 *  mode 2 (byte planes without XOR), same backend.
 * params: [width 4|8, mode, e | backend]
 */
const POW10 = Array.from({ length: 23 }, (_, i) => 10 ** i);

function readFloats(input: Uint8Array, width: 4 | 8): Float64Array {
  const n = input.length / width;
  const dv = new DataView(input.buffer, input.byteOffset, input.byteLength);
  const out = new Float64Array(n);
  if (width === 8) for (let i = 0; i < n; i++) out[i] = dv.getFloat64(i * 8, true);
  else for (let i = 0; i < n; i++) out[i] = dv.getFloat32(i * 4, true);
  return out;
}

function exact(v: number, e: number, width: 4 | 8): number | null {
  const p = POW10[e]!;
  const n = Math.round(v * p);
  if (!(Math.abs(n) < MAX_ABS) || Object.is(v, -0)) return null;
  let back = n / p;
  if (width === 4) back = Math.fround(back);
  return Object.is(back, v) ? n : null;
}

export function pickExponent(vals: Float64Array, width: 4 | 8): { e: number; hit: number } {
  const n = vals.length;
  const step = Math.max(1, Math.floor(n / 1024));
  let best = { e: 0, hit: -1 };
  for (let e = 0; e <= 18; e++) {
    let hit = 0;
    let tot = 0;
    for (let i = 0; i < n; i += step) {
      tot++;
      if (exact(vals[i]!, e, width) !== null) hit++;
    }
    const frac = tot ? hit / tot : 0;
    if (frac > best.hit + 1e-9) best = { e, hit: frac };
    if (frac === 1) break;
  }
  return best;
}

function xorPlanes(input: Uint8Array, width: 4 | 8, xor: boolean): Uint8Array {
  const data = Uint8Array.prototype.slice.call(input);
  if (xor) {
    for (let i = data.length - width; i >= width; i -= width)
      for (let b = 0; b < width; b++) data[i + b] = data[i + b]! ^ data[i - width + b]!;
  }
  return transpose(data, width);
}

function unXorPlanes(planes: Uint8Array, width: 4 | 8, xor: boolean): Uint8Array {
  const data = untranspose(planes, width);
  if (xor) {
    for (let i = width; i + width <= data.length; i += width)
      for (let b = 0; b < width; b++) data[i + b] = data[i + b]! ^ data[i - width + b]!;
  }
  return data;
}

export const float: Chamber<"float"> = {
  name: "float",
  slowDecode: false,
  summary: "float64/float32 arrays: decimal (ALP-like) → integer coder, or XOR + byte planes → backend",
  accepts: (b) => b.length % 4 === 0,
  async encode(input, ctx) {
    const width: 4 | 8 | null = input.length % 8 === 0 ? 8 : input.length % 4 === 0 ? 4 : null;
    if (!width) return null;
    return encodeWidth(input, width, ctx.level);
  },
  async decode(params, payload, rawLen, dctx) {
    if (params.length !== 3) fail("codec_bad_params", "float expects 3 parameter bytes");
    const width = params[0];
    const mode = params[1]!;
    if ((width !== 4 && width !== 8) || rawLen % width !== 0) fail("codec_bad_params", "bad float width");
    if (mode === 1 || mode === 2) {
      const planes = await backendDecode(params[2]!, payload, rawLen);
      return unXorPlanes(planes, width, mode === 1);
    }
    if (mode !== 0) fail("codec_bad_params", "unknown float mode");
    const e = params[2]!;
    if (e > 22) fail("codec_bad_params", "exponent out of range");
    void dctx;
    const n = rawLen / width;
    const r = new ByteReader(payload);
    const ints = decodeInts(r, n);
    const k = r.uvarintMax(n, "exception count");
    const gaps = decodeInts(r, k);
    const raw = r.bytes(k * width);
    if (r.remaining !== 0) fail("codec_corrupt", "trailing bytes in float payload");
    const out = new Uint8Array(rawLen);
    const p = POW10[e]!;
    // typed views are little-endian on every platform Node supports (x64, arm64)
    const view = width === 8 ? new Float64Array(out.buffer) : new Float32Array(out.buffer);
    for (let i = 0; i < n; i++) view[i] = ints[i]! / p;
    let pos = -1;
    for (let j = 0; j < k; j++) {
      pos += gaps[j]! + 1;
      if (!(pos >= 0 && pos < n)) fail("codec_corrupt", "exception position out of range");
      out.set(raw.subarray(j * width, j * width + width), pos * width);
    }
    return out;
  },
};

async function encodeWidth(input: Uint8Array, width: 4 | 8, level: Level) {
  const vals = readFloats(input, width);
  const n = vals.length;
  const { e, hit } = pickExponent(vals, width);
  const cands: { params: Uint8Array; payload: Uint8Array }[] = [];
  if (hit >= 0.5) {
    const ints = new Float64Array(n);
    const gaps: number[] = [];
    const raw = new ByteWriter(16);
    let last = -1;
    let prev = 0;
    for (let i = 0; i < n; i++) {
      const x = exact(vals[i]!, e, width);
      if (x === null) {
        ints[i] = prev; // keep the integer series smooth at exceptions
        gaps.push(i - last - 1);
        last = i;
        raw.bytes(input.subarray(i * width, i * width + width));
      } else {
        ints[i] = x;
        prev = x;
      }
    }
    const w = new ByteWriter(n);
    w.bytes(encodeInts(ints, n, level === "fast" ? { transforms: [1], fast: true } : {}));
    w.uvarint(gaps.length);
    w.bytes(encodeInts(gaps, gaps.length, { transforms: [0] }));
    w.bytes(raw.finish());
    cands.push({ params: Uint8Array.of(width, 0, e), payload: w.finish() });
  }
  // byte planes only when the decimal mode does not cover nearly every value
  if (hit < 0.99) {
    // plain byte planes (mode 2) are what the general chamber's stride transposition tries at
    // balanced and max, so only the XOR planes are coded here (mode 2 still decodes)
    const b = await bestBackend(xorPlanes(input, width, true), level);
    cands.push({ params: Uint8Array.of(width, 1, b.backend), payload: b.payload });
  }
  let best = cands[0]!;
  for (const c of cands) if (c.payload.length < best.payload.length) best = c;
  return best;
}
