// Host side of the WebAssembly context-mixing model (model.as.ts → model.wasm), shared by the main
// thread (../cm-wasm.ts) and the worker (worker.mjs). Plain JavaScript, so the worker runs without
// a TypeScript loader. Model 1-2 (model.wasm): one instance (own linear memory) per call, freed
// with it by the garbage collector. Model 3 (model3.wasm, which exports reset): one instance per
// thread, reset and reused, so its memory stays at the largest stream's size instead of piling up
// until a collection (a worker's isolate collects rarely). Input is coded in slices so the engine
// tiers the loop up to optimized code early.

const SLICE = 1 << 16;

export class WasmOutOfMemory extends Error {}
export class WasmCorrupt extends Error {}

/** per thread: the one reusable instance of each module that can reset itself (model3.wasm) */
const reusable = new WeakMap();
/** an instance whose memory grew beyond this (a stream of more than ~16 MB) is not kept */
const KEEP_MAX = 64 << 20;

/** the largest linear memory a call used since largestMemory() was last read (bytes) */
let largest = 0;

/** run fn on the module's instance; afterwards drop an instance that grew too large to keep */
function withInstance(module, tables, fn) {
  const it = instance(module, tables);
  try {
    return fn(it);
  } finally {
    const bytes = it.e.memory.buffer.byteLength;
    if (bytes > largest) largest = bytes;
    if (bytes > KEEP_MAX) reusable.delete(module);
  }
}

/**
 * The largest linear memory (bytes) a call in this thread used since the last read, then 0. A
 * thread's instances stay resident after their call (kept for reuse, or dropped but not yet
 * collected: a worker's isolate collects rarely), so the pools retire a worker that used a large one.
 */
export function largestMemory() {
  const bytes = largest;
  largest = 0;
  return bytes;
}

function instance(module, tables) {
  let e = reusable.get(module);
  if (e) e.reset();
  else {
    e = new WebAssembly.Instance(module, {
      env: {
        abort: () => {
          throw new WasmOutOfMemory("context-mixing model could not allocate its tables");
        },
      },
    }).exports;
    if (typeof e.reset === "function") reusable.set(module, e);
  }
  const put = (a) => {
    const p = e.alloc(Math.max(1, a.byteLength));
    new Uint8Array(e.memory.buffer, p, a.byteLength).set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
    return p;
  };
  e.setTables(put(tables.stretch), put(tables.squash), put(tables.dt), put(tables.apmRow));
  return { e, put };
}

/** code input[primeLen..] after training the model on input[0..primeLen); null when out is full */
export function encode(module, tables, input, colEnds, primeLen, limit) {
  return withInstance(module, tables, ({ e, put }) => encodeWith(e, put, input, colEnds, primeLen, limit));
}

function encodeWith(e, put, input, colEnds, primeLen, limit) {
  const n = input.length;
  const buf = put(input);
  const ce = colEnds ? put(colEnds) : 0;
  const coded = n - primeLen;
  // at most 12 bits per input bit (probabilities are clamped to [1, 4095]) + the 4-byte flush
  const cap = coded + (coded >> 1) + 64;
  const out = e.alloc(cap);
  e.init(buf, n, ce, colEnds ? colEnds.length : 0, 0, out, cap, limit);
  for (let i = 0; i < primeLen; i += SLICE) e.step(i, Math.min(primeLen, i + SLICE), 1);
  for (let i = primeLen; i < n; i += SLICE) if (e.step(i, Math.min(n, i + SLICE), 0) < 0) return null;
  const len = e.finish();
  if (len < 0) return null;
  return new Uint8Array(e.memory.buffer, out, len).slice();
}

/**
 * decode rawLen bytes that follow `prefix` (the model is trained on the prefix first); with stop
 * < rawLen only the first `stop` bytes (the model is still sized for rawLen, as the encoder's was)
 */
export function decode(module, tables, payload, rawLen, colEnds, prefix, limit, stop = rawLen) {
  return withInstance(module, tables, ({ e, put }) =>
    decodeWith(e, put, payload, rawLen, colEnds, prefix, limit, stop),
  );
}

function decodeWith(e, put, payload, rawLen, colEnds, prefix, limit, stop) {
  const pl = put(payload);
  const ce = colEnds ? put(colEnds) : 0;
  const p = prefix ? prefix.length : 0;
  const n = p + rawLen;
  const buf = e.alloc(Math.max(1, n));
  if (p) new Uint8Array(e.memory.buffer, buf, p).set(prefix);
  e.init(buf, n, ce, colEnds ? colEnds.length : 0, 1, pl, payload.length, limit);
  for (let i = 0; i < p; i += SLICE) e.step(i, Math.min(p, i + SLICE), 1);
  const end = p + Math.min(stop, rawLen);
  for (let i = p; i < end; i += SLICE)
    if (e.step(i, Math.min(end, i + SLICE), 0) < 0) throw new WasmCorrupt("context-mixing stream ends early");
  return new Uint8Array(e.memory.buffer, buf + p, end - p).slice();
}
