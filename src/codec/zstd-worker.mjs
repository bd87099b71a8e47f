// Worker thread of the zstd pool (backends.ts): runs zstd-napi's one-shot compress off the
// caller's thread. Plain JavaScript, so it starts in any thread without a TypeScript loader.
import { createRequire } from "node:module";
import { parentPort } from "node:worker_threads";

const zstd = createRequire(import.meta.url)("zstd-napi");

parentPort.on("message", ({ data, level }) => {
  try {
    const out = zstd.compress(data, { compressionLevel: level });
    // a fresh copy: the library's buffer may share memory that must not be transferred
    const copy = new Uint8Array(out);
    parentPort.postMessage({ out: copy }, [copy.buffer]);
  } catch {
    parentPort.postMessage({ out: null });
  }
});
