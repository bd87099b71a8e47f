import { decodeInts, encodeInts, encodeIntsFast, MAX_ABS } from "../../entropy/intcoder.js";
import { fail } from "../../errors.js";
import { ByteReader } from "../../format/varint.js";
import type { Chamber } from "../types.js";
import { asInt32, int32Bytes } from "../util.js";

/**
 * delta: monotonic sequences and timestamps (int32 or int64 little-endian).
 * Delta or delta-of-delta, zigzag; runs of equal residuals (a regular clock is one run)
 * become (value, length) pairs; the rest is token rANS. params: [width 4|8].
 */
function readI64(input: Uint8Array): number[] | null {
  if (input.length % 8 !== 0) return null;
  const dv = new DataView(input.buffer, input.byteOffset, input.byteLength);
  const out: number[] = new Array(input.length / 8);
  for (let i = 0; i < out.length; i++) {
    const v = dv.getBigInt64(i * 8, true);
    if (v >= BigInt(MAX_ABS) || v <= -BigInt(MAX_ABS)) return null;
    out[i] = Number(v);
  }
  return out;
}

export const delta: Chamber<"delta"> = {
  name: "delta",
  slowDecode: false,
  summary: "monotonic sequences / timestamps: delta or delta-of-delta, zero runs, rANS",
  accepts: (b) => b.length % 4 === 0,
  async encode(input, ctx) {
    if (input.length % 4 !== 0) return null;
    const v = asInt32(input);
    const fast = ctx.level === "fast";
    let best = {
      params: Uint8Array.of(4),
      // fast: one pass, delta or delta-of-delta by a sampled estimate (no trial encodings)
      payload: fast ? encodeIntsFast(v, v.length, [1, 2]) : encodeInts(v, v.length, { transforms: [1, 2] }),
    };
    // int64 interpretation (epoch milliseconds and the like); skipped at level fast
    const wide = fast ? null : readI64(input);
    if (wide) {
      const p = encodeInts(wide, wide.length, { transforms: [1, 2] });
      if (p.length < best.payload.length) best = { params: Uint8Array.of(8), payload: p };
    }
    return best;
  },
  async decode(params, payload, rawLen) {
    const width = params[0];
    if (params.length !== 1 || (width !== 4 && width !== 8)) fail("codec_bad_params", "delta width must be 4 or 8");
    if (rawLen % width !== 0) fail("codec_corrupt", "length not a multiple of the width");
    const n = rawLen / width;
    const r = new ByteReader(payload);
    const vals = decodeInts(r, n);
    if (r.remaining !== 0) fail("codec_corrupt", "trailing bytes in payload");
    if (width === 4) return int32Bytes(vals, n);
    const out = new Uint8Array(rawLen);
    const dv = new DataView(out.buffer);
    for (let i = 0; i < n; i++) {
      if (!Number.isSafeInteger(vals[i]!)) fail("codec_corrupt", "value out of range");
      dv.setBigInt64(i * 8, BigInt(vals[i]!), true);
    }
    return out;
  },
};
