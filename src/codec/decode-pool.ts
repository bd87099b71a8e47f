import os from "node:os";
import { Worker } from "node:worker_threads";
import { type PoolRequest, runOnPool } from "./entropy/cm-pool.js";
import { CodecError, type CodecErrorCode } from "./errors.js";

/**
 * Worker threads that run whole decodes (every chamber, not only context mixing), so a container
 * that expands to tens of MiB never stalls the caller's event loop: the caller's thread only
 * copies the container out and receives the output (transferred, not copied).
 *
 * Each worker runs one decode at a time; more wait in a FIFO queue (callers bound how many they
 * send: the HTTP service admits a fixed number of decodes at once). A worker's context-mixing
 * streams are decoded on this thread's pool (entropy/cm-pool.ts): the worker asks (`cm`), this
 * thread runs them there and answers (`cmReply`), so models live only in the pool's workers, which
 * end once idle after a large one (the worker starts no pool of its own). A worker that dies during a
 * job (out of memory, a bug) fails that job and is replaced on the next one. When no worker can
 * start at all (no TypeScript loader for the worker, a platform without threads), decodes run in
 * the caller's thread: same bytes, same errors, only not off the loop.
 */
export const DECODE_POOL_SIZE = Math.max(1, Math.min(4, os.availableParallelism()));

const WORKER_URL = new URL("./decode-worker.mjs", import.meta.url);

/** what the worker answers for one job */
type Reply =
  | { out: Uint8Array }
  | { error: { code: CodecErrorCode; message: string } }
  | { bug: string }
  | { ready: true };
/** a worker asks this thread's context-mixing pool to run one of its decode's streams */
interface CmAsk {
  cm: PoolRequest;
  id: number;
}

interface Job {
  container: Uint8Array;
  options: object;
  here: () => Promise<Uint8Array>;
  resolve: (out: Uint8Array) => void;
  reject: (err: unknown) => void;
}
interface Slot {
  worker: Worker;
  job: Job | null;
  /** the worker loaded the codec (a failure before that is a startup failure, not a decode's) */
  ready: boolean;
  stopping: boolean;
}

const slots: Slot[] = [];
const queue: Job[] = [];
/** a worker could not start: every decode runs in the caller's thread from then on */
let unavailable = false;
let started = 0;

function spawn(): Slot | null {
  let worker: Worker;
  try {
    worker = new Worker(WORKER_URL);
  } catch {
    return null;
  }
  started++;
  worker.unref();
  const slot: Slot = { worker, job: null, ready: false, stopping: false };
  worker.on("message", (msg: Reply | CmAsk) => {
    if ("cm" in msg) {
      // a context-mixing stream of the worker's decode, for this thread's pool (decode-job.ts)
      void runOnPool(msg.cm).then((reply) =>
        worker.postMessage({ cmReply: msg.id, reply }, reply.out ? [reply.out.buffer as ArrayBuffer] : []),
      );
      return;
    }
    if ("ready" in msg) {
      slot.ready = true;
      return;
    }
    const job = slot.job;
    slot.job = null;
    if (job) {
      if ("out" in msg) job.resolve(msg.out);
      else if ("error" in msg) job.reject(new CodecError(msg.error.code, msg.error.message));
      else job.reject(new Error(`decoder failed in its worker: ${msg.bug}`));
    }
    next(slot);
  });
  const drop = (err?: unknown): void => {
    const i = slots.indexOf(slot);
    if (i < 0) return;
    slots.splice(i, 1);
    const job = slot.job;
    slot.job = null;
    if (!slot.ready && !slot.stopping) {
      // the worker never loaded the codec: decode here from now on (and everything queued)
      unavailable = true;
      if (job) runHere(job);
      for (const q of queue.splice(0)) runHere(q);
      return;
    }
    if (job) {
      if (slot.stopping) runHere(job);
      else job.reject(new Error(`decode worker exited during a job${err instanceof Error ? `: ${err.message}` : ""}`));
    }
    // a queued job gets a fresh worker
    const q = queue.shift();
    if (q) dispatch(q);
  };
  worker.on("error", drop);
  worker.on("exit", () => drop());
  return slot;
}

function runHere(job: Job): void {
  job.here().then(job.resolve, job.reject);
}

function post(slot: Slot, job: Job): void {
  slot.job = job;
  slot.worker.ref(); // keep the process alive while a job is out
  // an own copy, transferred: posting a view would clone its whole backing buffer
  const copy = job.container.slice();
  slot.worker.postMessage({ container: copy, options: job.options }, [copy.buffer as ArrayBuffer]);
}

function next(slot: Slot): void {
  const job = queue.shift();
  if (job) post(slot, job);
  else slot.worker.unref();
}

function dispatch(job: Job): void {
  if (unavailable) {
    runHere(job);
    return;
  }
  const idle = slots.find((s) => s.job === null);
  if (idle) {
    post(idle, job);
    return;
  }
  if (slots.length < DECODE_POOL_SIZE) {
    const s = spawn();
    if (s) {
      slots.push(s);
      post(s, job);
      return;
    }
    if (slots.length === 0) {
      unavailable = true;
      runHere(job);
      return;
    }
  }
  queue.push(job);
}

/**
 * Decode `container` with `options` on a pool worker; `here` is the same decode in the caller's
 * thread (used only when no worker can start). Resolves to the output or rejects with the
 * decoder's CodecError.
 */
export function poolDecode(
  container: Uint8Array,
  options: object,
  here: () => Promise<Uint8Array>,
): Promise<Uint8Array> {
  return new Promise((resolve, reject) => dispatch({ container, options, here, resolve, reject }));
}

/** Stop every decode worker; jobs they run finish in the caller's thread, later jobs start new workers. */
export async function terminateDecodePool(): Promise<void> {
  const all = [...slots];
  for (const s of all) s.stopping = true;
  await Promise.all(all.map((s) => s.worker.terminate()));
}

/** workers alive, busy, queued jobs, workers started so far, and whether decodes run in the caller's thread */
export function decodePoolState(): {
  workers: number;
  busy: number;
  queued: number;
  started: number;
  inThread: boolean;
} {
  return {
    workers: slots.length,
    busy: slots.filter((s) => s.job).length,
    queued: queue.length,
    started,
    inThread: unavailable,
  };
}
