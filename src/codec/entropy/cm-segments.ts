import { fail } from "../errors.js";
import { ByteReader, ByteWriter } from "../format/varint.js";
import { type CmJob, type CmModel, cmDecodeOffThread } from "./cm.js";

/**
 * Two-segment context-mixing streams, so one input is coded on two threads at once.
 *
 *   uvarint prime, uvarint 2, uvarint len0, uvarint len1, uvarint coded0, stream0, stream1
 *
 * Segment 1's model is first trained on the `prime` bytes before it (they are not coded again),
 * so the split costs about 1 % on prose (repeats farther back than that are lost, which is why
 * column-ordered JSON values and numeric tables stay one stream).
 */
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
export function segmentJobs(data: Uint8Array, cut: number, model: CmModel): [CmJob, CmJob] {
  return [
    { input: data.subarray(0, cut), colEnds: null, primeLen: 0, model },
    { input: data.subarray(cut - PRIME), colEnds: null, primeLen: PRIME, model },
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

export async function decodeSegments(payload: Uint8Array, rawLen: number, model: CmModel): Promise<Uint8Array> {
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
    out.set(await cmDecodeOffThread(stream, lens[i]!, null, prefix, model), off);
    off += lens[i]!;
  }
  return out;
}
