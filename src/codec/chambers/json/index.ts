import zlib from "node:zlib";
import { backendDecode } from "../../backends.js";
import { type CmModel, cmDecodeOffThread, cmEncodeAll } from "../../entropy/cm.js";
import { fail } from "../../errors.js";
import { ByteReader, ByteWriter } from "../../format/varint.js";
import { bestBackend } from "../general/index.js";
import type { Chamber, DecodeCtx, Level } from "../types.js";
import { columnsOf, joinJson, LIT, STR, splitJson } from "./split.js";

/**
 * stream coders after the backend ids 0-3: context mixing with model 1 (4), 2 (5), 3 (6), 7 (7)
 * or 9 (8). Codec library 1.3.0 writes 7 and 8; 4-6 (earlier releases) still decode.
 */
const CM_CODERS: Record<number, CmModel> = { 4: 1, 5: 2, 6: 3, 7: 7, 8: 9 };
const MAX_CODER = 8;
/**
 * At max each stream's model is 7 (text contexts) or 9 (records: the bytes one and two records
 * above), whichever codes the stream's first CM_SAMPLE bytes smaller. On the corpus (issue #24)
 * 9 wins mesh.json's values (5 % smaller), 7 the other documents (1-4 %).
 */
const CM_CHOICES: [coder: number, model: CmModel][] = [
  [7, 7],
  [8, 9],
];
const CM_SAMPLE = 1 << 16;
/** params[2] of json_residual: the payload lists strided columns (see chooseStrides) */
const STRIDED = 1;

interface Coded {
  coder: number;
  bytes: Uint8Array;
}

/**
 * Streams through context mixing, all at once on the pool: a trial of each CM_CHOICES model on
 * every stream's head, then the whole streams with the winners (a stream no longer than the
 * sample keeps its trial output).
 */
async function cmCode(streams: { input: Uint8Array; colEnds: Uint32Array | null }[]): Promise<Coded[]> {
  const trials = await cmEncodeAll(
    streams.flatMap((st) =>
      CM_CHOICES.map(([, model]) => ({
        input: st.input.subarray(0, CM_SAMPLE),
        colEnds: st.colEnds,
        primeLen: 0,
        model,
      })),
    ),
  );
  const picks = streams.map((_, i) => {
    let best = 0;
    for (let k = 1; k < CM_CHOICES.length; k++)
      if (trials[i * CM_CHOICES.length + k]!.length < trials[i * CM_CHOICES.length + best]!.length) best = k;
    return best;
  });
  const rest = streams.flatMap((st, i) =>
    st.input.length <= CM_SAMPLE
      ? []
      : [{ input: st.input, colEnds: st.colEnds, primeLen: 0, model: CM_CHOICES[picks[i]!]![1] }],
  );
  const full = await cmEncodeAll(rest);
  let r = 0;
  return streams.map((st, i) => ({
    coder: CM_CHOICES[picks[i]!]![0],
    bytes: st.input.length <= CM_SAMPLE ? trials[i * CM_CHOICES.length + picks[i]!]! : full[r++]!,
  }));
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
    const [s, v] = await cmCode([
      { input: skeleton, colEnds: null },
      { input: values, colEnds },
    ]);
    return [s!, v!];
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

/**
 * Strided columns (issue #24, mesh.json at max): a column of a long array whose values repeat
 * with a period — x, y, z of vertex positions (3), u, v of texture coordinates (2), the corners of
 * double-sided triangles (6) — is cut into `stride` sub-columns, value i going to sub-column
 * i mod stride, so each coordinate is modelled in its own context and next to its own kind. The
 * stride of a column is the one of COLUMN_STRIDES whose sub-columns brotli-5 codes smallest (a cheap
 * stand-in for the model: it picked the model's best stride on mesh.json's columns but one, which
 * it placed second), kept only when it saves STRIDE_GAIN over the column as it is.
 */
export const COLUMN_STRIDES = [2, 3, 4, 6, 8] as const;
/** columns with fewer values keep stride 1 */
export const STRIDE_MIN_VALUES = 256;
/** a stride is kept when brotli-5 of the sub-columns is at most this share of the column's */
export const STRIDE_GAIN = 0.98;
/** strides a decoder accepts (an encoder writes only COLUMN_STRIDES) */
const MAX_STRIDE = 64;

/** per column its stride (1 = as it is), from the values of each column in document order */
export function chooseStrides(values: Uint8Array[], column: Uint32Array, columns: number): Uint8Array {
  const byCol: number[][] = Array.from({ length: columns }, () => []);
  for (let i = 0; i < column.length; i++) byCol[column[i]!]!.push(i);
  const strides = new Uint8Array(columns).fill(1);
  const b5 = (ix: number[], k: number): number => {
    const parts: Uint8Array[] = [];
    const zero = new Uint8Array(1);
    for (let r = 0; r < k; r++) for (let j = r; j < ix.length; j += k) parts.push(values[ix[j]!]!, zero);
    return zlib.brotliCompressSync(Buffer.concat(parts), { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } })
      .length;
  };
  for (let c = 0; c < columns; c++) {
    const ix = byCol[c]!;
    if (ix.length < STRIDE_MIN_VALUES) continue;
    let best = b5(ix, 1) * STRIDE_GAIN;
    for (const k of COLUMN_STRIDES) {
      const size = b5(ix, k);
      if (size < best) {
        best = size;
        strides[c] = k;
      }
    }
  }
  return strides;
}

/**
 * Sub-column of every value and the number of sub-columns: column c with stride k owns k
 * consecutive sub-column ids; value i of the column (document order) goes to the (i mod k)-th.
 */
function subColumns(
  column: Uint32Array,
  columns: number,
  strides: Uint8Array,
): { column: Uint32Array; columns: number } {
  const base = new Uint32Array(columns);
  let total = 0;
  for (let c = 0; c < columns; c++) {
    base[c] = total;
    total += strides[c]!;
  }
  const seen = new Uint32Array(columns);
  const out = new Uint32Array(column.length);
  for (let i = 0; i < column.length; i++) {
    const c = column[i]!;
    out[i] = base[c]! + (seen[c]! % strides[c]!);
    seen[c]!++;
  }
  return { column: out, columns: total };
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
      ? "JSON: skeleton+keys stream and values regrouped column by column (per key path; periodic long arrays by position in the period)"
      : "JSON: skeleton+keys stream split from the value stream",
    accepts: (b) => splitJson(b) !== null,
    async encode(input, ctx) {
      const split = splitJson(input);
      if (!split) return null;
      const n = split.values.length;
      let order = Array.from({ length: n }, (_, i) => i);
      let ends: Uint32Array | null = null;
      let strided: Uint8Array | null = null;
      if (columnar) {
        let cols = columnsOf(split.skeleton);
        if (!cols || cols.column.length !== n) return null;
        const strides = chooseStrides(split.values, cols.column, cols.columns);
        if (strides.some((k) => k > 1)) {
          strided = strides;
          cols = subColumns(cols.column, cols.columns, strides);
        }
        const col = cols.column;
        order = order.sort((a, b) => col[a]! - col[b]! || a - b);
        ends = columnEnds(col, cols.columns);
      }
      // verify the split restores the input exactly before spending time on coding
      const back = joinJson(split.skeleton, split.values, input.length);
      if (!back || Buffer.compare(back, input) !== 0) return null;
      const blob = valueBlob(split.values, order);
      const [s, v] = await codeStreams(split.skeleton, blob, ends, ctx.level);
      const w = new ByteWriter(s.bytes.length + v.bytes.length + 16);
      w.uvarint(split.skeleton.length);
      w.uvarint(blob.length);
      if (strided) {
        // strided columns (params[2] = 1): how many, then (column, stride) pairs
        const list = [...strided.keys()].filter((c) => strided[c]! > 1);
        w.uvarint(list.length);
        for (const c of list) {
          w.uvarint(c);
          w.uvarint(strided[c]!);
        }
      }
      w.block(s.bytes);
      w.bytes(v.bytes);
      // the third parameter byte only when a column is strided: every other container keeps 2 bytes
      return {
        params: strided ? Uint8Array.of(s.coder, v.coder, STRIDED) : Uint8Array.of(s.coder, v.coder),
        payload: w.finish(),
      };
    },
    async decode(params, payload, rawLen, dctx) {
      // [skeleton coder, value coder] or, since issue #24 (json_residual only), [.., .., 1] = strided columns
      const ok = params.length === 2 || (columnar && params.length === 3 && params[2] === STRIDED);
      if (!ok || params[0]! > MAX_CODER || params[1]! > MAX_CODER) fail("codec_bad_params", "bad JSON coders");
      const r = new ByteReader(payload);
      const skelLen = r.uvarintMax(rawLen, "skeleton length");
      const blobLen = r.uvarintMax(2 * rawLen + 1, "value stream length");
      let stridePairs: [number, number][] = [];
      if (params.length === 3) {
        const count = r.uvarintMax(rawLen, "strided columns");
        for (let k = 0; k < count; k++) {
          const c = r.uvarintMax(rawLen, "strided column");
          const stride = r.uvarintMax(MAX_STRIDE, "column stride");
          if (stride < 2) fail("codec_corrupt", "column stride below 2");
          stridePairs.push([c, stride]);
        }
        if (!count) fail("codec_corrupt", "strided columns flag without strided columns");
      }
      const skel = await decodeStream(params[0]!, r.block(), skelLen, dctx);
      const n = countMarkers(skel);
      let cols = columnar ? columnsOf(skel) : null;
      if (columnar && (!cols || cols.column.length !== n)) fail("codec_corrupt", "skeleton does not parse");
      if (cols && stridePairs.length) {
        const strides = new Uint8Array(cols.columns).fill(1);
        for (const [c, stride] of stridePairs) {
          if (c >= cols.columns || strides[c] !== 1) fail("codec_corrupt", "bad strided column");
          strides[c] = stride;
        }
        cols = subColumns(cols.column, cols.columns, strides);
        stridePairs = [];
      }
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
