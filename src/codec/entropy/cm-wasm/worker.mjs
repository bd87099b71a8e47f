// Worker thread for the context-mixing model: encodes one job at a time with the WebAssembly
// build, so a second segment (or the second stream of a JSON document) is coded on another core.
import { readFileSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";
import { encode, WasmOutOfMemory } from "./host.mjs";

const module = new WebAssembly.Module(readFileSync(new URL("./model.wasm", import.meta.url)));

parentPort.on("message", ({ id, input, colEnds, primeLen, limit }) => {
  try {
    const out = encode(module, workerData.tables, input, colEnds, primeLen, limit);
    parentPort.postMessage({ id, out }, out ? [out.buffer] : []);
  } catch (err) {
    parentPort.postMessage({ id, out: null, error: err instanceof WasmOutOfMemory ? null : String(err) });
  }
});
