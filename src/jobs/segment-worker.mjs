// piscina worker of the suite-job runner (runner.ts): codes one unit of a segment. Plain
// JavaScript so that it starts in any thread; it loads the codec (TypeScript) directly (a build,
// or a thread with a TypeScript loader) or through tsx, as the codec's decode-worker.mjs does.
import { move } from "piscina";

let job;
try {
  job = await import("./segment-job.js");
} catch (err) {
  if (err?.code !== "ERR_MODULE_NOT_FOUND") throw err;
  const { tsImport } = await import("tsx/esm/api");
  job = await tsImport("./segment-job.ts", import.meta.url);
}

export default async function run(task) {
  const reply = await job.run(task);
  // the output's buffer is transferred back, not cloned
  return reply instanceof Uint8Array ? move(reply) : reply;
}
