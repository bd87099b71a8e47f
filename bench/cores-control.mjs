// The machine's own speed-up, as a control for the codec bench's speed-up lines: the same
// CPU-bound loop on one worker thread, then on two at once, three times (wall ms and CPU ms).
// On two free cores the two-thread wall time is about the one-thread one (×2 throughput); on a
// machine whose other work leaves this process about one core, it doubles (×1), whatever the
// codec does.
//
//   node bench/cores-control.mjs [--iterations 1e8]
import { Worker } from "node:worker_threads";

const i = process.argv.indexOf("--iterations");
const n = i > 0 ? Number(process.argv[i + 1]) : 1e8;
const src = `
const { parentPort } = require("node:worker_threads");
parentPort.on("message", (n) => {
  let x = 0;
  for (let i = 0; i < n; i++) x = (x * 31 + i) | 0;
  parentPort.postMessage(x);
});`;
const workers = [0, 1].map(() => new Worker(src, { eval: true }));
const run = (w, k) =>
  new Promise((res) => {
    w.once("message", res);
    w.postMessage(k);
  });
await Promise.all(workers.map((w) => run(w, 1e6)));
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e3;
};
for (let k = 0; k < 3; k++) {
  let c = cpu();
  let t = performance.now();
  await run(workers[0], n);
  const oneWall = performance.now() - t;
  const oneCpu = cpu() - c;
  c = cpu();
  t = performance.now();
  await Promise.all(workers.map((w) => run(w, n)));
  const twoWall = performance.now() - t;
  const twoCpu = cpu() - c;
  console.log(
    `one thread ${oneWall.toFixed(0)} ms (${oneCpu.toFixed(0)} CPU-ms); two threads ${twoWall.toFixed(0)} ms ` +
      `(${twoCpu.toFixed(0)} CPU-ms): speed-up ×${((2 * oneWall) / twoWall).toFixed(2)}`,
  );
}
process.exit(0);
