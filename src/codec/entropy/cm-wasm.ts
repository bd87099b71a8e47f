import { readFileSync } from "node:fs";
import { Worker } from "node:worker_threads";
import { fail } from "../errors.js";
import { APM_ROW, type CmModel, DT, MODEL_LIMIT, SQUASH, STRETCH } from "./cm-tables.js";
import { decode, encode, type ModelTables, WasmCorrupt, WasmOutOfMemory } from "./cm-wasm/host.mjs";

/**
 * The WebAssembly build of the context-mixing model (cm-wasm/model.as.ts → model.wasm; host
 * glue in cm-wasm/host.mjs). Functions return null when WebAssembly cannot run here (no module,
 * or memory cannot grow): callers fall back to the TypeScript model, which produces the same bits.
 * cmEncodeParallel codes independent jobs on the main thread and one worker thread at once.
 */

/** the part of the WebAssembly JS API used here (@types/node declares it only as types) */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
}
const Wasm = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;
const MODEL_URL = new URL("./cm-wasm/model.wasm", import.meta.url);
const WORKER_URL = new URL("./cm-wasm/worker.mjs", import.meta.url);
const TABLES: ModelTables = { stretch: STRETCH, squash: SQUASH, dt: DT, apmRow: APM_ROW };

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
): Uint8Array | null {
  const m = module();
  if (!m) return null;
  try {
    return decode(m, TABLES, payload, rawLen, colEnds, prefix, limit);
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

interface Pending {
  resolve: (out: Uint8Array | null) => void;
}
let worker: Worker | null | undefined;
const waiting = new Map<number, Pending>();
let nextId = 1;

function theWorker(): Worker | null {
  if (worker === undefined) {
    try {
      const w = new Worker(WORKER_URL, { workerData: { tables: TABLES } });
      w.unref(); // never keeps the process alive
      w.on("message", (msg: { id: number; out: Uint8Array | null; error?: string | null }) => {
        const p = waiting.get(msg.id);
        waiting.delete(msg.id);
        p?.resolve(msg.out ? new Uint8Array(msg.out) : null);
      });
      const drop = (): void => {
        worker = null; // do not retry: jobs run on the main thread from now on
        for (const p of waiting.values()) p.resolve(null);
        waiting.clear();
      };
      w.on("error", drop);
      w.on("exit", drop);
      worker = w;
    } catch {
      worker = null;
    }
  }
  return worker;
}

function inWorker(job: CmJob): Promise<Uint8Array | null> {
  const w = module() ? theWorker() : null;
  if (!w) return Promise.resolve(null);
  const id = nextId++;
  return new Promise((resolve) => {
    waiting.set(id, { resolve });
    w.ref(); // keep the process alive while a job is out
    w.postMessage({
      id,
      input: job.input,
      colEnds: job.colEnds,
      primeLen: job.primeLen,
      limit: MODEL_LIMIT[job.model],
    });
  }).finally(() => {
    if (waiting.size === 0) worker?.unref();
  }) as Promise<Uint8Array | null>;
}

/**
 * Code independent jobs at once: the first on this thread, the others on the worker. A job the
 * worker cannot take is coded here afterwards. `fallback` codes one job when WebAssembly cannot.
 */
export async function cmEncodeParallel(jobs: CmJob[], fallback: (job: CmJob) => Uint8Array): Promise<Uint8Array[]> {
  const remote = jobs.slice(1).map((j) => inWorker(j));
  const here = (j: CmJob): Uint8Array =>
    cmEncodeWasm(j.input, j.colEnds, j.primeLen, MODEL_LIMIT[j.model]) ?? fallback(j);
  const first = jobs.length ? [here(jobs[0]!)] : [];
  const rest = await Promise.all(remote);
  return [...first, ...rest.map((out, i) => out ?? here(jobs[i + 1]!))];
}
