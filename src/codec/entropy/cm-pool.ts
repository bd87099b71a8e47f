import os from "node:os";
import { Worker } from "node:worker_threads";
import { fail } from "../errors.js";
import { type CmModel, MODEL_LIMIT, MODEL_WASM } from "./cm-tables.js";
import { type CmJob, hasWasm, TABLES } from "./cm-wasm.js";

/**
 * Worker threads for the context-mixing model, so its slow work (about 1 µs per byte each way
 * with model 3, 2 µs with models 1-2) never runs on the caller's thread: a server keeps
 * answering other requests while a context-mixing stream is coded, and independent streams (two
 * text segments, a JSON document's skeleton and values) run on separate cores, in both directions.
 *
 * Jobs of at most IN_THREAD_MAX bytes run in the caller's thread (a message round trip would cost
 * more than they do). When no worker can run (no WebAssembly, a worker died), jobs run in the
 * caller's thread too: the WebAssembly build, else the TypeScript reference — the same bits.
 */
export const IN_THREAD_MAX = 8 * 1024;
/** workers at most: one per core, up to 4 */
export const POOL_SIZE = Math.max(1, Math.min(4, os.availableParallelism()));

const WORKER_URL = new URL("./cm-wasm/worker.mjs", import.meta.url);
/**
 * A worker whose last job left its WebAssembly memory above RETIRE_BYTES ends after RETIRE_IDLE_MS
 * without work, and at once above RETIRE_NOW_BYTES. Its model instance would otherwise stay
 * resident (kept for reuse, or, above 64 MiB, dropped by host.mjs and not yet collected: a
 * worker's isolate collects rarely). Measured: models 7-12 hold 18 MiB up to 128 KB of input, 36
 * MiB at 256 KB, 59-117 MiB from 1 MB; a fresh worker costs about 35 CPU-ms (a job above RETIRE_BYTES
 * takes 250 ms and more). In one process compressing and decompressing four corpus files at max,
 * the peak RSS went from 360-388 MB to 341-355 MB.
 */
export const RETIRE_BYTES = 32 << 20;
export const RETIRE_NOW_BYTES = 64 << 20;
export const RETIRE_IDLE_MS = 1000;

/** the first `stop` bytes of another stream of `rawLen` bytes: decoded first, in the same thread */
export interface PrefixFrom {
  payload: Uint8Array;
  rawLen: number;
  stop: number;
}
export interface DecodeJob {
  payload: Uint8Array;
  rawLen: number;
  colEnds: Uint32Array | null;
  /** the bytes the stream's model was trained on first, given or decoded from another stream */
  prefix: Uint8Array | PrefixFrom | null;
  limit: number;
  model: CmModel;
}
/** one stream decoded in this thread (what cmDecode takes) */
export interface OneDecode {
  payload: Uint8Array;
  rawLen: number;
  colEnds: Uint32Array | null;
  prefix: Uint8Array | null;
  stop: number;
}
export type PoolRequest =
  | { op: "encode"; input: Uint8Array; colEnds: Uint32Array | null; primeLen: number; limit: number; model: CmModel }
  | ({ op: "decode" } & DecodeJob);
type Request = PoolRequest;
/** out: null when the worker could not run the job (then it runs here); corrupt: the decoder's message */
export interface PoolReply {
  out: Uint8Array | null;
  corrupt?: string;
  /** the largest WebAssembly memory the worker's job used (bytes) */
  memory?: number;
}
type Reply = PoolReply;
interface Task {
  req: Request;
  resolve: (r: Reply) => void;
}
interface Slot {
  worker: Worker;
  task: Task | null;
  /** terminated on purpose (terminatePool, retire): its exit is not a death */
  stopping: boolean;
  /** the memory its last job left (bytes): decides whether it ends when idle (RETIRE_BYTES) */
  memory: number;
  /** the pending end of an idle worker that holds a large model */
  idleTimer: NodeJS.Timeout | null;
}

const slots: Slot[] = [];
const queue: Task[] = [];
let dead = 0;
let retired = 0;
/** set in a suite worker's thread (jobs/segment-job.ts): that thread is already off the event loop */
let callerThreadOnly = false;
/** set in a decode worker (../decode-job.ts): its jobs go to the main thread's pool */
let remote: ((req: PoolRequest) => Promise<PoolReply>) | null = null;

/**
 * Run every context-mixing job in the calling thread from now on (no pool workers). For threads
 * that are themselves workers and must not start a pool of their own.
 */
export function keepJobsInThread(): void {
  callerThreadOnly = true;
}

/**
 * Send every context-mixing job to another thread's pool from now on (`send` posts it there and
 * resolves to its reply; `{ out: null }` runs it here). For the decode workers (../decode-pool.ts):
 * their models then live only in the pool's workers, which end once idle after a large one.
 */
export function sendJobsTo(send: (req: PoolRequest) => Promise<PoolReply>): void {
  remote = send;
}

/** own copies of a job's arrays, and their buffers to transfer (posting a view clones its whole buffer) */
export function ownedRequest(r: PoolRequest): { msg: PoolRequest; transfer: ArrayBuffer[] } {
  const transfer: ArrayBuffer[] = [];
  const own = <T extends Uint8Array | Uint32Array>(a: T | null): T | null => {
    if (!a) return null;
    const copy = a.slice() as T;
    transfer.push(copy.buffer as ArrayBuffer);
    return copy;
  };
  const p = r.op === "decode" ? r.prefix : null;
  const msg: PoolRequest =
    r.op === "encode"
      ? { ...r, input: own(r.input)!, colEnds: own(r.colEnds) }
      : {
          ...r,
          payload: own(r.payload)!,
          colEnds: own(r.colEnds),
          prefix: p instanceof Uint8Array || p === null ? own(p) : { ...p, payload: own(p.payload)! },
        };
  return { msg, transfer };
}

function spawn(): Slot | null {
  let worker: Worker;
  try {
    worker = new Worker(WORKER_URL, { workerData: { tables: TABLES } });
  } catch {
    return null;
  }
  worker.unref(); // an idle pool never keeps the process alive
  const slot: Slot = { worker, task: null, stopping: false, memory: 0, idleTimer: null };
  worker.on("message", (msg: Reply) => {
    slot.memory = msg.memory ?? 0;
    const t = slot.task;
    slot.task = null;
    t?.resolve(msg);
    next(slot);
  });
  const drop = (): void => {
    const i = slots.indexOf(slot);
    if (i < 0) return;
    slots.splice(i, 1);
    // a worker that died (out of memory, a bug) is not replaced: it would likely die again
    if (!slot.stopping) dead++;
    slot.task?.resolve({ out: null });
    slot.task = null;
    if (slots.length === 0) for (const t of queue.splice(0)) t.resolve({ out: null });
  };
  worker.on("error", drop);
  worker.on("exit", drop);
  return slot;
}

function post(slot: Slot, task: Task): void {
  if (slot.idleTimer) clearTimeout(slot.idleTimer);
  slot.idleTimer = null;
  slot.task = task;
  slot.worker.ref(); // keep the process alive while a job is out
  const { msg, transfer } = ownedRequest(task.req);
  slot.worker.postMessage(msg, transfer);
}

function next(slot: Slot): void {
  const t = queue.shift();
  if (t) post(slot, t);
  else {
    slot.worker.unref();
    if (slot.memory > RETIRE_NOW_BYTES) retire(slot);
    else if (slot.memory > RETIRE_BYTES) {
      slot.idleTimer = setTimeout(() => retire(slot), RETIRE_IDLE_MS);
      slot.idleTimer.unref();
    }
  }
}

/** end an idle worker: its memory goes with its isolate; the next job starts a fresh worker */
function retire(slot: Slot): void {
  slot.idleTimer = null;
  const i = slots.indexOf(slot);
  if (i < 0 || slot.task) return;
  slots.splice(i, 1);
  slot.stopping = true;
  retired++;
  void slot.worker.terminate();
}

/** run a job on this thread's pool ({ out: null }: no worker could, the caller runs it) */
export function runOnPool(req: PoolRequest): Promise<PoolReply> {
  if (!hasWasm(MODEL_WASM[req.model]) || callerThreadOnly) return Promise.resolve({ out: null });
  if (remote) return remote(req);
  return new Promise((resolve) => {
    const task: Task = { req, resolve };
    const idle = slots.find((s) => s.task === null);
    if (idle) return post(idle, task);
    if (slots.length + dead < POOL_SIZE) {
      const s = spawn();
      if (s) {
        slots.push(s);
        return post(s, task);
      }
      dead++;
    }
    if (slots.length === 0) return resolve({ out: null });
    queue.push(task);
  });
}

/** code independent jobs at once on the pool; `here` codes a job in this thread (small, or no worker) */
export async function cmEncodePool(jobs: CmJob[], here: (job: CmJob) => Uint8Array): Promise<Uint8Array[]> {
  return Promise.all(
    jobs.map(async (j) => {
      if (j.input.length <= IN_THREAD_MAX) return here(j);
      const r = await runOnPool({
        op: "encode",
        input: j.input,
        colEnds: j.colEnds,
        primeLen: j.primeLen,
        limit: MODEL_LIMIT[j.model],
        model: j.model,
      });
      return r.out ?? here(j);
    }),
  );
}

/** decode on the pool; `one` decodes a stream in this thread (small, or no worker), as cmDecode does */
export async function cmDecodePool(job: DecodeJob, one: (d: OneDecode) => Uint8Array): Promise<Uint8Array> {
  const here = (): Uint8Array => {
    const p = job.prefix;
    const prefix =
      p instanceof Uint8Array || p === null
        ? p
        : one({ payload: p.payload, rawLen: p.rawLen, colEnds: null, prefix: null, stop: p.stop });
    return one({ payload: job.payload, rawLen: job.rawLen, colEnds: job.colEnds, prefix, stop: job.rawLen });
  };
  const prefixLen = job.prefix instanceof Uint8Array ? job.prefix.length : (job.prefix?.stop ?? 0);
  if (job.rawLen + prefixLen <= IN_THREAD_MAX) return here();
  const r = await runOnPool({ op: "decode", ...job });
  if (r.corrupt) fail("codec_corrupt", r.corrupt);
  return r.out ?? here();
}

/**
 * Stop every worker now. Jobs they were running, and queued ones, are finished in the caller's
 * thread (same bits); later jobs start new workers. For shutdown paths and fault tests.
 */
export async function terminatePool(): Promise<void> {
  const all = [...slots];
  for (const s of all) s.stopping = true;
  await Promise.all(all.map((s) => s.worker.terminate())); // each exit runs drop()
}

/** workers alive, busy, queued jobs, workers that died, workers retired after a large job (for tests and diagnostics) */
export function poolState(): { workers: number; busy: number; queued: number; dead: number; retired: number } {
  return { workers: slots.length, busy: slots.filter((s) => s.task).length, queued: queue.length, dead, retired };
}
