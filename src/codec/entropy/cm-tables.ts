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
export type CmModel = 1 | 2 | 3;
export const MODEL_LIMIT: Record<CmModel, number> = { 1: 255, 2: 30, 3: 30 };
/** the WebAssembly module of each model, next to cm-wasm/host.mjs */
export type ModelWasm = "model.wasm" | "model3.wasm";
export const MODEL_WASM: Record<CmModel, ModelWasm> = { 1: "model.wasm", 2: "model.wasm", 3: "model3.wasm" };
