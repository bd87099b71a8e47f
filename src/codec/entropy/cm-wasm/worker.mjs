// Worker thread of the context-mixing pool (../cm-pool.ts): runs one job at a time with the
// WebAssembly build, so the slow model never blocks the caller's thread and independent streams
// run on separate cores. Replies { out } (null: could not run here, the caller runs the job
// itself) or { out: null, corrupt } when a stream to decode ends early.
import { readFileSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";
import { decode, encode, WasmCorrupt, WasmOutOfMemory } from "./host.mjs";

const module = new WebAssembly.Module(readFileSync(new URL("./model.wasm", import.meta.url)));

parentPort.on("message", (job) => {
  try {
    const out =
      job.op === "encode"
        ? encode(module, workerData.tables, job.input, job.colEnds, job.primeLen, job.limit)
        : decode(module, workerData.tables, job.payload, job.rawLen, job.colEnds, job.prefix, job.limit);
    parentPort.postMessage({ out }, out ? [out.buffer] : []);
  } catch (err) {
    if (err instanceof WasmCorrupt) parentPort.postMessage({ out: null, corrupt: err.message });
    else if (err instanceof WasmOutOfMemory || err instanceof RangeError) parentPort.postMessage({ out: null });
    else throw err; // a bug: the worker exits and the pool runs its job in the caller's thread
  }
});
