import { readFileSync } from "node:fs";
import { fail } from "../errors.js";
import { APM_ROW, type CmModel, DT, type ModelWasm, SQUASH, STRETCH } from "./cm-tables.js";
import { decode, encode, type ModelTables, WasmCorrupt, WasmOutOfMemory } from "./cm-wasm/host.mjs";

/**
 * The WebAssembly builds of the context-mixing models (cm-wasm/model.as.ts → model.wasm for
 * models 1 and 2, model3.as.ts → model3.wasm for model 3; host glue in cm-wasm/host.mjs).
 * Functions return null when WebAssembly cannot run here (no module, or memory cannot grow):
 * callers fall back to the TypeScript model for models 1 and 2 (the same bits); model 3 has no
 * fallback.
 * These run in the calling thread; cm-pool.ts runs them on worker threads.
 */

/** the part of the WebAssembly JS API used here (@types/node declares it only as types) */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
}
const Wasm = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;
export const TABLES: ModelTables = { stretch: STRETCH, squash: SQUASH, dt: DT, apmRow: APM_ROW };

const mods = new Map<ModelWasm, object | null>();
/** the compiled module of models 1-2 (model.wasm) or 3 (model3.wasm, needs WebAssembly SIMD) */
function module(file: ModelWasm = "model.wasm"): object | null {
  let m = mods.get(file);
  if (m === undefined) {
    try {
      m = Wasm ? new Wasm.Module(readFileSync(new URL(`./cm-wasm/${file}`, import.meta.url))) : null;
    } catch {
      m = null;
    }
    mods.set(file, m);
  }
  return m;
}

/** whether the WebAssembly module (of models 1-2, or the given one) compiles here */
export function hasWasm(file: ModelWasm = "model.wasm"): boolean {
  return module(file) !== null;
}

function outOfMemory(err: unknown): boolean {
  return err instanceof WasmOutOfMemory || err instanceof RangeError;
}

export function cmEncodeWasm(
  input: Uint8Array,
  colEnds: Uint32Array | null,
  primeLen: number,
  limit: number,
  file: ModelWasm = "model.wasm",
): Uint8Array | null {
  const m = module(file);
  if (!m) return null;
  try {
    return encode(m, TABLES, input, colEnds, primeLen, limit);
  } catch (err) {
    if (outOfMemory(err)) return null;
    throw err;
  }
}

export function cmDecodeWasm(
  payload: Uint8Array,
  rawLen: number,
  colEnds: Uint32Array | null,
  prefix: Uint8Array | null,
  limit: number,
  stop = rawLen,
  file: ModelWasm = "model.wasm",
): Uint8Array | null {
  const m = module(file);
  if (!m) return null;
  try {
    return decode(m, TABLES, payload, rawLen, colEnds, prefix, limit, stop);
  } catch (err) {
    if (err instanceof WasmCorrupt) fail("codec_corrupt", err.message);
    if (outOfMemory(err)) return null;
    throw err;
  }
}

export interface CmJob {
  /** bytes to code; the first primeLen only train the model */
  input: Uint8Array;
  colEnds: Uint32Array | null;
  primeLen: number;
  model: CmModel;
}
