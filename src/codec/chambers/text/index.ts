import { cmDecode, cmEncode, cmEncodeAll } from "../../entropy/cm.js";
import { fail } from "../../errors.js";
import { ByteReader, ByteWriter } from "../../format/varint.js";
import type { Chamber } from "../types.js";
import { isExecutable, x86Decode, x86Encode } from "./x86.js";

/**
 * Model versions written in params[0]; a decoder refuses versions it does not know.
 *  1 — one context-mixing stream over the whole input (inputs below SPLIT_MIN).
 *  2 — segments: uvarint prime, uvarint k, k × uvarint raw length, (k − 1) × uvarint coded
 *      length, then the k streams. Segment i > 0 is coded by a model first trained on the
 *      `prime` bytes before it, so segments are coded at once on two cores and lose little.
 */
const V1 = 1;
const V2 = 2;

/** text inputs of at least SPLIT_MIN bytes are coded as two segments (v2) */
export const SPLIT_MIN = 1 << 20;
/** bytes before a segment that train its model */
export const PRIME = 1 << 18;

/** share of ASCII digits in a strided sample (numeric tables do not split well) */
function digitShare(data: Uint8Array): number {
  let digits = 0;
  let n = 0;
  for (let i = 0; i < data.length; i += 7, n++) {
    const c = data[i]!;
    if (c >= 48 && c <= 57) digits++;
  }
  return n ? digits / n : 0;
}

/** two segments, coded at once (v2); the caller uses v1 below SPLIT_MIN */
async function encodeSegments(data: Uint8Array): Promise<Uint8Array> {
  const n = data.length;
  // balance the work: segment 1 also trains on PRIME bytes, so segment 0 is that much longer
  const cut = (n + PRIME) >> 1;
  const [a, b] = await cmEncodeAll([
    { input: data.subarray(0, cut), colEnds: null, primeLen: 0 },
    { input: data.subarray(cut - PRIME, n), colEnds: null, primeLen: PRIME },
  ]);
  const w = new ByteWriter(a!.length + b!.length + 16);
  w.uvarint(PRIME);
  w.uvarint(2);
  w.uvarint(cut);
  w.uvarint(n - cut);
  w.uvarint(a!.length);
  w.bytes(a!);
  w.bytes(b!);
  return w.finish();
}

function decodeSegments(payload: Uint8Array, rawLen: number): Uint8Array {
  const r = new ByteReader(payload);
  const prime = r.uvarintMax(rawLen, "prime length");
  const k = r.uvarintMax(Math.max(1, rawLen), "segment count");
  if (k < 1) fail("codec_corrupt", "no segments");
  const lens: number[] = [];
  let total = 0;
  for (let i = 0; i < k; i++) {
    const len = r.uvarintMax(rawLen - total, "segment length");
    lens.push(len);
    total += len;
  }
  if (total !== rawLen) fail("codec_corrupt", "segment lengths do not add up to the declared length");
  const coded: number[] = [];
  for (let i = 0; i < k - 1; i++) coded.push(r.uvarintMax(r.remaining, "segment stream length"));
  const out = new Uint8Array(rawLen);
  let off = 0;
  for (let i = 0; i < k; i++) {
    const stream = i < k - 1 ? r.bytes(coded[i]!) : r.bytes(r.remaining);
    const prefix = i === 0 ? null : out.subarray(Math.max(0, off - prime), off);
    out.set(cmDecode(stream, lens[i]!, null, prefix), off);
    off += lens[i]!;
  }
  return out;
}

/**
 * text: UTF-8 text, XML, source code, CSV (and binary at max) — order-N context mixing
 * (entropy/cm.ts) into a binary arithmetic coder. Symmetric: decoding costs as much as encoding.
 * params: [model version, filter] — filter 1 = x86 E8/E9 call filter, used for ELF/PE inputs.
 */
export const text: Chamber = {
  name: "text",
  summary: "context mixing (orders 0-6, word, column, match model, 3 mixers, 3 SSE) + arithmetic coder",
  accepts: () => true,
  async encode(input, ctx) {
    const x86 = isExecutable(input);
    const data = x86 ? x86Encode(input) : input;
    // prose, markup and code lose about 1 % to the split; numeric tables and binary lose 2-5 %
    const split = data.length >= SPLIT_MIN && ctx.dataClass === "text" && digitShare(data) < 0.5;
    return {
      params: Uint8Array.of(split ? V2 : V1, x86 ? 1 : 0),
      payload: split ? await encodeSegments(data) : cmEncode(data),
    };
  },
  async decode(params, payload, rawLen, ctx) {
    if (params.length !== 2 || (params[0] !== V1 && params[0] !== V2) || params[1]! > 1)
      fail("codec_bad_params", "unknown text model version or filter");
    if (rawLen > ctx.maxModelOutputBytes)
      fail("codec_too_large", `context-mixing stream of ${rawLen} bytes exceeds maxModelOutputBytes`);
    const out = params[0] === V1 ? cmDecode(payload, rawLen) : decodeSegments(payload, rawLen);
    return params[1] === 1 ? x86Decode(out) : out;
  },
};
