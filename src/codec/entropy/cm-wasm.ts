import { readFileSync } from "node:fs";
import { fail } from "../errors.js";
import { APM_ROW, type CmModel, DT, SQUASH, STRETCH } from "./cm-tables.js";
import { decode, encode, type ModelTables, WasmCorrupt, WasmOutOfMemory } from "./cm-wasm/host.mjs";

/**
 * The WebAssembly build of the context-mixing model (cm-wasm/model.as.ts → model.wasm; host
 * glue in cm-wasm/host.mjs). Functions return null when WebAssembly cannot run here (no module,
 * or memory cannot grow): callers fall back to the TypeScript model, which produces the same bits.
 * These run in the calling thread; cm-pool.ts runs them on worker threads.
 */

/** the part of the WebAssembly JS API used here (@types/node declares it only as types) */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
}
const Wasm = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;
const MODEL_URL = new URL("./cm-wasm/model.wasm", import.meta.url);
export const TABLES: ModelTables = { stretch: STRETCH, squash: SQUASH, dt: DT, apmRow: APM_ROW };

let mod: object | null | undefined;
function module(): object | null {
  if (mod === undefined) {
    try {
      mod = Wasm ? new Wasm.Module(readFileSync(MODEL_URL)) : null;
    } catch {
      mod = null;
    }
  }
  return mod ?? null;
}

/** whether the WebAssembly module compiles here */
export function hasWasm(): boolean {
  return module() !== null;
}

function outOfMemory(err: unknown): boolean {
  return err instanceof WasmOutOfMemory || err instanceof RangeError;
}

export function cmEncodeWasm(
  input: Uint8Array,
  colEnds: Uint32Array | null,
  primeLen: number,
  limit: number,
): Uint8Array | null {
  const m = module();
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
): Uint8Array | null {
  const m = module();
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
