// Worker thread of the decode pool (decode-pool.ts): runs whole decodes off the caller's event
// loop. Plain JavaScript so that it starts in any thread; it loads the codec (TypeScript) either
// directly (a build or a thread with a TypeScript loader) or through tsx, a runtime dependency.
import { parentPort } from "node:worker_threads";

let job;
try {
  job = await import("./decode-job.js");
} catch (err) {
  if (err?.code !== "ERR_MODULE_NOT_FOUND") throw err;
  const { tsImport } = await import("tsx/esm/api");
  job = await tsImport("./decode-job.ts", import.meta.url);
}

parentPort.on("message", async (msg) => {
  // the main thread's pool answering a context-mixing job of this decode (decode-job.ts)
  if (msg.cmReply !== undefined) return job.poolReply(msg.cmReply, msg.reply);
  const reply = await job.run(msg.container, msg.options);
  parentPort.postMessage(reply, reply.out ? [reply.out.buffer] : []);
});
parentPort.postMessage({ ready: true });
