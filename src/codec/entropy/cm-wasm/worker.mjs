// Worker thread of the context-mixing pool (../cm-pool.ts): runs one job at a time with the
// WebAssembly build, so the slow model never blocks the caller's thread and independent streams
// run on separate cores. Replies { out } (null: could not run here, the caller runs the job
// itself) or { out: null, corrupt } when a stream to decode ends early. A decode job's prefix is
// given, or decoded here first from the head of another stream (text layout 5).
import { readFileSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";
import { decode, encode, largestMemory, WasmCorrupt, WasmOutOfMemory } from "./host.mjs";

const modules = new Map();
/** model.wasm (models 1 and 2) or model4.wasm (3-6, see ../cm-tables.ts), compiled once per worker */
function moduleOf(model) {
  const file = model >= 3 ? "./model4.wasm" : "./model.wasm";
  let m = modules.get(file);
  if (!m) {
    m = new WebAssembly.Module(readFileSync(new URL(file, import.meta.url)));
    modules.set(file, m);
  }
  return m;
}

/** the prefix bytes, or the first `stop` bytes of the stream they are decoded from */
function prefixOf(job) {
  const p = job.prefix;
  if (p === null || p instanceof Uint8Array) return p;
  return decode(moduleOf(job.model), workerData.tables, p.payload, p.rawLen, null, null, job.limit, p.stop);
}

parentPort.on("message", (job) => {
  try {
    const module = moduleOf(job.model);
    const out =
      job.op === "encode"
        ? encode(module, workerData.tables, job.input, job.colEnds, job.primeLen, job.limit)
        : decode(module, workerData.tables, job.payload, job.rawLen, job.colEnds, prefixOf(job), job.limit);
    parentPort.postMessage({ out, memory: largestMemory() }, out ? [out.buffer] : []);
  } catch (err) {
    if (err instanceof WasmCorrupt)
      parentPort.postMessage({ out: null, corrupt: err.message, memory: largestMemory() });
    else if (err instanceof WasmOutOfMemory || err instanceof RangeError)
      parentPort.postMessage({ out: null, memory: largestMemory() });
    else throw err; // a bug: the worker exits and the pool runs its job in the caller's thread
  }
});
