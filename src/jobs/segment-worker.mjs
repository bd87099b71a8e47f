// piscina worker of the suite-job runner (runner.ts): codes one unit of a segment. Plain
// JavaScript so that it starts in any thread. It imports the module the runner names in
// `workerData.module` (the codec bundled into one JavaScript file, src/threads/bundle.mjs), else
// the compiled segment-job.js of a build, else the TypeScript through tsx.
import { move, transferableSymbol, valueSymbol, workerData } from "piscina";

let job;
if (workerData?.module) {
  job = await import(workerData.module);
} else {
  try {
    job = await import("./segment-job.js");
  } catch (err) {
    if (err?.code !== "ERR_MODULE_NOT_FOUND") throw err;
    const { tsImport } = await import("tsx/esm/api");
    job = await tsImport("./segment-job.ts", import.meta.url);
  }
}

export default async function run(task) {
  const reply = await job.run(task);
  // the outputs and the input's buffer are transferred back, not cloned
  return move({ [transferableSymbol]: job.transferList(reply), [valueSymbol]: reply });
}
