/**
 * Lookup tables of the context-mixing model (entropy/cm.ts and its WebAssembly build), computed
 * once here so both builds read identical values.
 */

/** squash(d) = 4096 / (1 + e^(-d/256)), d in [-2047, 2047], clamped to [1, 4095] */
export const SQUASH = new Int16Array(4096);
/** stretch = inverse of squash: p (12 bit) → d */
export const STRETCH = new Int16Array(4096);
{
  for (let i = 0; i < 4096; i++) {
    const x = (i - 2048) / 256;
    let v = Math.round(4096 / (1 + Math.exp(-x)));
    if (v > 4095) v = 4095;
    if (v < 1) v = 1;
    SQUASH[i] = v;
  }
  let pi = 0;
  for (let x = -2047; x <= 2047; x++) {
    const v = SQUASH[x + 2048]!;
    for (let j = pi; j <= v; j++) STRETCH[j] = x;
    pi = v + 1;
  }
  for (let j = pi; j < 4096; j++) STRETCH[j] = 2047;
}
export const squash = (d: number): number => (d > 2047 ? 4095 : d < -2047 ? 1 : SQUASH[(d + 2048) | 0]!);

/** adaptation rate of a counter seen n times: 1 / (n + 1.4) */
export const DT = new Float64Array(1024);
for (let i = 0; i < 1024; i++) DT[i] = 1 / (i + 1.4);

/** initial APM row: 24 interpolation points of squash, scaled to 16 bits */
export const APM_ROW = new Uint16Array(24);
for (let j = 0; j < 24; j++) APM_ROW[j] = Math.min(65535, squash(Math.round((j * 4096) / 23 - 2048)) * 16);

/**
 * Model versions. Models 1 and 2 differ only in the counters' confidence limit (how many
 * observations a counter averages before its rate stops falling): 255 in model 1; 30 in model 2,
 * which tracks changing statistics (concatenated documents, code, markup) better — 0.5 % smaller
 * on the corpus heads it was measured on, 2-4 % on READMEs and code — and loses ≤ 0.7 % on long
 * uniform prose. Both run as the TypeScript reference (cm.ts) and its WebAssembly build
 * (cm-wasm/model.wasm). Model 3 (cm-wasm/model3.as.ts → model3.wasm) is a faster model with other
 * predictions: checked 16-bit nibble buckets, integer SIMD mixers, no order-6 context; it runs
 * only as WebAssembly (limit 30 for its direct counters, 15 for its 16-bit hashed ones).
 */
export type CmModel = 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 | 10 | 11 | 12 | 13 | 14;
/**
 * Models 4, 5 and 6 are one module (cm-wasm/model4.as.ts → model4.wasm): model 3 plus a mixer
 * whose weight set is chosen by which hashed contexts were found, a second mixing layer, and one
 * of three context profiles, passed to the module in bits 8+ of its `limit` argument:
 * 4 = text (word contexts; slower-adapting hashed counters), 5 = binary (sparse contexts instead
 * of the word and line contexts), 6 = records (a record length detected from repeated byte
 * distances; contexts of the bytes one and two records above).
 * Model 3 runs in model4.wasm too (profile 3 reproduces model3.wasm bit for bit: a test compares
 * them), so a thread that codes JSON (model 3) and text (models 4-6) keeps one module's memory;
 * model3.wasm stays as the reference of that profile.
 * Models 7, 8 and 9 are models 4, 5 and 6 with bit 10 of `limit` set (model4.as.ts, `gen2`):
 * tables twice as large (up to 2^21 slots per context), a larger order-2 APM, and the final
 * probability from the three APMs alone. The encoder writes them since codec library 1.3.0.
 * Models 10, 11 and 12 are models 7, 8 and 9 with bit 11 set (`big`): 2^22 slots per context for
 * an input over 1 MiB (which the text chamber codes as one stream), so it keeps more of its
 * contexts; identical to models 7-9 on inputs of at most 1 MiB. The text chamber writes them since
 * codec library 1.4.0.
 * Models 13 and 14 are the text profile of models 10 and 7 with bit 12 set (`chars`): contexts of
 * whole UTF-8 characters (the last two and the last three, with the current one's bytes so far)
 * instead of the line-column and word-and-last-byte contexts. The text chamber tries model 13 on
 * text with many multi-byte characters and writes it (or 14, in two segments from 8 MiB) since
 * codec library 1.5.0.
 */
const GEN2 = 1 << 10;
const BIG = 1 << 11;
const CHARS = 1 << 12;
export const MODEL_LIMIT: Record<CmModel, number> = {
  1: 255,
  2: 30,
  3: 30 | (3 << 8),
  4: 30,
  5: 30 | (1 << 8),
  6: 30 | (2 << 8),
  7: 30 | GEN2,
  8: 30 | (1 << 8) | GEN2,
  9: 30 | (2 << 8) | GEN2,
  10: 30 | GEN2 | BIG,
  11: 30 | (1 << 8) | GEN2 | BIG,
  12: 30 | (2 << 8) | GEN2 | BIG,
  13: 30 | GEN2 | BIG | CHARS,
  14: 30 | GEN2 | CHARS,
};
/** the WebAssembly module of each model, next to cm-wasm/host.mjs */
export type ModelWasm = "model.wasm" | "model3.wasm" | "model4.wasm";
export const MODEL_WASM: Record<CmModel, ModelWasm> = {
  1: "model.wasm",
  2: "model.wasm",
  3: "model4.wasm",
  4: "model4.wasm",
  5: "model4.wasm",
  6: "model4.wasm",
  7: "model4.wasm",
  8: "model4.wasm",
  9: "model4.wasm",
  10: "model4.wasm",
  11: "model4.wasm",
  12: "model4.wasm",
  13: "model4.wasm",
  14: "model4.wasm",
};
/** whether a model exists only as WebAssembly (no TypeScript reference in cm.ts) */
export const wasmOnly = (model: CmModel): boolean => model >= 3;
