import { fail } from "../errors.js";
import { ByteReader, ByteWriter } from "../format/varint.js";
import { type CmJob, type CmModel, cmDecodeOffThread } from "./cm.js";

/**
 * Two-segment context-mixing streams, so one input is coded on two threads at once.
 *
 *   uvarint prime, uvarint 2, uvarint len0, uvarint len1, uvarint coded0, stream0, stream1
 *
 * Segment 1's model is first trained on `prime` bytes that are not coded again, so the split
 * costs about 1 % on prose (repeats farther back are lost, which is why column-ordered JSON values
 * and numeric tables stay one stream). Where those bytes come from:
 *  - "adjacent" (text layouts 2 and 4): the `prime` bytes just before segment 1. Decoding is
 *    sequential: segment 1 waits for the end of segment 0.
 *  - "head" (text layout 5): the first `prime` bytes of the input. Segment 1's decoder decodes
 *    them itself from the head of segment 0's stream, so both segments decode at once (1.7-1.8×
 *    faster). Against adjacent priming it costs -0.09 % to +0.28 % on the corpus's large prose,
 *    +0.08 % on a Vite bundle and +3.7 % on Playwright's types.d.ts, whose nearby declarations
 *    repeat more than its head does.
 */
export type PrimeFrom = "adjacent" | "head";
export const PRIME = 1 << 18;
/** inputs of at least SPLIT_MIN bytes may be split (splitting 0.5-1 MiB text costs 2-3 %) */
export const SPLIT_MIN = 1 << 20;

/**
 * Whether splitting costs little: prose, markup and code lose about 1 %; numeric tables (over half
 * digits in a strided sample) lose 2-5 %, so they stay in one stream.
 */
export function splitsWell(data: Uint8Array): boolean {
  if (data.length < SPLIT_MIN) return false;
  let digits = 0;
  let n = 0;
  for (let i = 0; i < data.length; i += 7, n++) {
    const c = data[i]!;
    if (c >= 48 && c <= 57) digits++;
  }
  return digits < n / 2;
}

/** where segment 1 starts: segment 0 is PRIME bytes longer, since segment 1 also trains on PRIME */
export function splitPoint(n: number): number {
  return Math.floor((n + PRIME) / 2);
}

/** the two jobs for data split at `cut` */
export function segmentJobs(data: Uint8Array, cut: number, model: CmModel, from: PrimeFrom): [CmJob, CmJob] {
  let second = data.subarray(cut - PRIME);
  if (from === "head") {
    second = new Uint8Array(PRIME + data.length - cut);
    second.set(data.subarray(0, PRIME));
    second.set(data.subarray(cut), PRIME);
  }
  return [
    { input: data.subarray(0, cut), colEnds: null, primeLen: 0, model },
    { input: second, colEnds: null, primeLen: PRIME, model },
  ];
}

export function writeSegments(n: number, cut: number, a: Uint8Array, b: Uint8Array): Uint8Array {
  const w = new ByteWriter(a.length + b.length + 16);
  w.uvarint(PRIME);
  w.uvarint(2);
  w.uvarint(cut);
  w.uvarint(n - cut);
  w.uvarint(a.length);
  w.bytes(a);
  w.bytes(b);
  return w.finish();
}

export async function decodeSegments(
  payload: Uint8Array,
  rawLen: number,
  model: CmModel,
  from: PrimeFrom,
): Promise<Uint8Array> {
  const r = new ByteReader(payload);
  const prime = r.uvarintMax(rawLen, "prime length");
  // every segment after the first trains on `prime` bytes first: more than two would let a hostile
  // container make the decoder train on (count × prime) bytes, quadratic in the declared length
  const k = r.uvarintMax(2, "segment count");
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
  const streams = lens.map((_, i) => (i < k - 1 ? r.bytes(coded[i]!) : r.bytes(r.remaining)));
  const out = new Uint8Array(rawLen);
  if (from === "head") {
    if (k > 1 && prime > lens[0]!) fail("codec_corrupt", "prime longer than the first segment");
    const head = { payload: streams[0]!, rawLen: lens[0]!, stop: prime };
    const parts = await Promise.all(
      streams.map((s, i) => cmDecodeOffThread(s, lens[i]!, null, i === 0 ? null : head, model)),
    );
    let off = 0;
    for (const p of parts) {
      out.set(p, off);
      off += p.length;
    }
    return out;
  }
  let off = 0;
  for (let i = 0; i < k; i++) {
    const prefix = i === 0 ? null : out.subarray(Math.max(0, off - prime), off);
    out.set(await cmDecodeOffThread(streams[i]!, lens[i]!, null, prefix, model), off);
    off += lens[i]!;
  }
  return out;
}
