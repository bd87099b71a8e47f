import { backendDecode } from "../../backends.js";
import { type CmModel, cmDecodeOffThread, cmEncodeAll } from "../../entropy/cm.js";
import { fail } from "../../errors.js";
import { ByteReader, ByteWriter } from "../../format/varint.js";
import { bestBackend } from "../general/index.js";
import type { Chamber, DecodeCtx, Level } from "../types.js";
import { columnsOf, joinJson, LIT, STR, splitJson } from "./split.js";

/** stream coders after the backend ids 0-3: context mixing with model 1 (4), 2 (5) or 3 (6) */
const CM_CODERS: Record<number, CmModel> = { 4: 1, 5: 2, 6: 3 };
const JSON_MODEL: CmModel = 3;
const CM = 6; // the coder id of JSON_MODEL

interface Coded {
  coder: number;
  bytes: Uint8Array;
}

/** skeleton and values: at max both through context mixing, coded at once on two threads */
async function codeStreams(
  skeleton: Uint8Array,
  values: Uint8Array,
  colEnds: Uint32Array | null,
  level: Level,
): Promise<[Coded, Coded]> {
  if (level === "max") {
    // values stay one stream: column-ordered values repeat across the whole document, and a
    // second segment would lose those long-range matches (13 % on gsoc-2018.json)
    const [v, s] = await cmEncodeAll([
      { input: values, colEnds, primeLen: 0, model: JSON_MODEL },
      { input: skeleton, colEnds: null, primeLen: 0, model: JSON_MODEL },
    ]);
    return [
      { coder: CM, bytes: s! },
      { coder: CM, bytes: v! },
    ];
  }
  const s = await bestBackend(skeleton, level);
  const v = await bestBackend(values, level);
  return [
    { coder: s.backend, bytes: s.payload },
    { coder: v.backend, bytes: v.payload },
  ];
}
async function decodeStream(
  coder: number,
  bytes: Uint8Array,
  len: number,
  ctx: DecodeCtx,
  colEnds: Uint32Array | null = null,
): Promise<Uint8Array> {
  const model = CM_CODERS[coder];
  if (model && len > ctx.maxModelOutputBytes)
    fail("codec_too_large", `context-mixing stream of ${len} bytes exceeds maxModelOutputBytes`);
  return model ? cmDecodeOffThread(bytes, len, colEnds, null, model) : backendDecode(coder, bytes, len);
}

/** cumulative value counts per column, in column order */
function columnEnds(column: Uint32Array, columns: number): Uint32Array {
  const ends = new Uint32Array(columns);
  for (let i = 0; i < column.length; i++) ends[column[i]!]!++;
  for (let k = 1; k < columns; k++) ends[k] = ends[k]! + ends[k - 1]!;
  return ends;
}

function valueBlob(values: Uint8Array[], order: number[]): Uint8Array {
  let total = 0;
  for (const v of values) total += v.length + 1;
  const out = new Uint8Array(total);
  let p = 0;
  for (const i of order) {
    out.set(values[i]!, p);
    p += values[i]!.length + 1; // 0x00 terminator already zero
  }
  return out;
}

/** Split the blob at 0x00 terminators into exactly n values. */
function cutValues(blob: Uint8Array, n: number): Uint8Array[] {
  const out: Uint8Array[] = new Array(n);
  let s = 0;
  let k = 0;
  for (let i = 0; i < blob.length; i++) {
    if (blob[i] === 0) {
      if (k >= n) fail("codec_corrupt", "more values than markers");
      out[k++] = blob.subarray(s, i);
      s = i + 1;
    }
  }
  if (k !== n || s !== blob.length) fail("codec_corrupt", "value stream does not match the skeleton");
  return out;
}

function countMarkers(skel: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < skel.length; i++) if (skel[i] === STR || skel[i] === LIT) n++;
  return n;
}

/** both JSON chambers code their streams with context mixing at level max: slow to decode */
function jsonChamber<N extends string>(name: N, columnar: boolean): Chamber<N> {
  return {
    name,
    slowDecode: true,
    summary: columnar
      ? "JSON: skeleton+keys stream and values regrouped column by column (per key path)"
      : "JSON: skeleton+keys stream split from the value stream",
    accepts: (b) => splitJson(b) !== null,
    async encode(input, ctx) {
      const split = splitJson(input);
      if (!split) return null;
      const n = split.values.length;
      let order = Array.from({ length: n }, (_, i) => i);
      let ends: Uint32Array | null = null;
      if (columnar) {
        const cols = columnsOf(split.skeleton);
        if (!cols || cols.column.length !== n) return null;
        order = order.sort((a, b) => cols.column[a]! - cols.column[b]! || a - b);
        ends = columnEnds(cols.column, cols.columns);
      }
      // verify the split restores the input exactly before spending time on coding
      const back = joinJson(split.skeleton, split.values, input.length);
      if (!back || Buffer.compare(back, input) !== 0) return null;
      const blob = valueBlob(split.values, order);
      const [s, v] = await codeStreams(split.skeleton, blob, ends, ctx.level);
      const w = new ByteWriter(s.bytes.length + v.bytes.length + 16);
      w.uvarint(split.skeleton.length);
      w.uvarint(blob.length);
      w.block(s.bytes);
      w.bytes(v.bytes);
      return { params: Uint8Array.of(s.coder, v.coder), payload: w.finish() };
    },
    async decode(params, payload, rawLen, dctx) {
      if (params.length !== 2 || params[0]! > 6 || params[1]! > 6) fail("codec_bad_params", "bad JSON coders");
      const r = new ByteReader(payload);
      const skelLen = r.uvarintMax(rawLen, "skeleton length");
      const blobLen = r.uvarintMax(2 * rawLen + 1, "value stream length");
      const skel = await decodeStream(params[0]!, r.block(), skelLen, dctx);
      const n = countMarkers(skel);
      const cols = columnar ? columnsOf(skel) : null;
      if (columnar && (!cols || cols.column.length !== n)) fail("codec_corrupt", "skeleton does not parse");
      const ends = cols ? columnEnds(cols.column, cols.columns) : null;
      const blob = await decodeStream(params[1]!, r.bytes(r.remaining), blobLen, dctx, ends);
      const cut = cutValues(blob, n);
      let values = cut;
      if (cols) {
        const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => cols.column[a]! - cols.column[b]! || a - b);
        values = new Array(n);
        for (let k = 0; k < n; k++) values[order[k]!] = cut[k]!;
      }
      const out = joinJson(skel, values, rawLen);
      if (!out) fail("codec_corrupt", "JSON streams do not rebuild the declared length");
      return out;
    },
  };
}

export const jsonKeys = jsonChamber("json_keys", false);
export const jsonResidual = jsonChamber("json_residual", true);
