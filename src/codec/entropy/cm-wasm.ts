import { readFileSync } from "node:fs";
import { fail } from "../errors.js";
import { APM_ROW, DT, SQUASH, STRETCH } from "./cm-tables.js";

/**
 * Host side of the WebAssembly context-mixing model (cm-wasm/model.as.ts → model.wasm).
 * One module, compiled once; one instance (own linear memory) per call, so the tables of a large
 * input are freed with the instance. Input is coded in slices of SLICE bytes: the engine starts a
 * call in its baseline tier and moves to optimized code for later calls.
 * Returns null when WebAssembly cannot run here (no module, or memory cannot grow): the caller
 * falls back to the TypeScript model, which produces the same bits.
 */
interface Exports {
  memory: { buffer: ArrayBuffer };
  alloc(n: number): number;
  setTables(stretch: number, squash: number, dt: number, apmRow: number): void;
  init(buf: number, n: number, colEnds: number, nCol: number, mode: number, out: number, outCap: number): void;
  step(from: number, to: number): number;
  finish(): number;
}

/** the part of the WebAssembly JS API used here (@types/node declares it only as types) */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
}
const Wasm = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;

const SLICE = 1 << 16;
let mod: object | null | undefined;

function module(): object | null {
  if (mod === undefined) {
    try {
      mod = Wasm ? new Wasm.Module(readFileSync(new URL("./cm-wasm/model.wasm", import.meta.url))) : null;
    } catch {
      mod = null;
    }
  }
  return mod ?? null;
}

class WasmOutOfMemory extends Error {}

function instance(): { e: Exports; put: (a: ArrayBufferView) => number } | null {
  const m = module();
  if (!m || !Wasm) return null;
  const e = new Wasm.Instance(m, {
    env: {
      abort: () => {
        throw new WasmOutOfMemory("context-mixing model could not allocate its tables");
      },
    },
  }).exports as unknown as Exports;
  const put = (a: ArrayBufferView): number => {
    const p = e.alloc(Math.max(1, a.byteLength));
    new Uint8Array(e.memory.buffer, p, a.byteLength).set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
    return p;
  };
  e.setTables(put(STRETCH), put(SQUASH), put(DT), put(APM_ROW));
  return { e, put };
}

function guarded<T>(fn: () => T): T | null {
  try {
    return fn();
  } catch (err) {
    if (err instanceof WasmOutOfMemory || err instanceof RangeError) return null;
    throw err;
  }
}

export function cmEncodeWasm(input: Uint8Array, colEnds: Uint32Array | null): Uint8Array | null {
  return guarded(() => {
    const inst = instance();
    if (!inst) return null;
    const { e, put } = inst;
    const n = input.length;
    const buf = put(input);
    const ce = colEnds ? put(colEnds) : 0;
    // at most 12 bits per input bit (probabilities are clamped to [1, 4095]) + the 4-byte flush
    const cap = n + (n >> 1) + 64;
    const out = e.alloc(cap);
    e.init(buf, n, ce, colEnds ? colEnds.length : 0, 0, out, cap);
    for (let i = 0; i < n; i += SLICE) if (e.step(i, Math.min(n, i + SLICE)) < 0) return null;
    const len = e.finish();
    if (len < 0) return null;
    return new Uint8Array(e.memory.buffer, out, len).slice();
  });
}

export function cmDecodeWasm(payload: Uint8Array, rawLen: number, colEnds: Uint32Array | null): Uint8Array | null {
  return guarded(() => {
    const inst = instance();
    if (!inst) return null;
    const { e, put } = inst;
    const pl = put(payload);
    const ce = colEnds ? put(colEnds) : 0;
    const buf = e.alloc(Math.max(1, rawLen));
    e.init(buf, rawLen, ce, colEnds ? colEnds.length : 0, 1, pl, payload.length);
    for (let i = 0; i < rawLen; i += SLICE)
      if (e.step(i, Math.min(rawLen, i + SLICE)) < 0) fail("codec_corrupt", "context-mixing stream ends early");
    return new Uint8Array(e.memory.buffer, buf, rawLen).slice();
  });
}
