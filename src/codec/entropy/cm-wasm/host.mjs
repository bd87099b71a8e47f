// Host side of the WebAssembly context-mixing model (model.as.ts → model.wasm), shared by the main
// thread (../cm-wasm.ts) and the worker (worker.mjs). Plain JavaScript, so the worker runs without
// a TypeScript loader. One instance (own linear memory) per call: a large input's tables are freed
// with it. Input is coded in slices so the engine tiers the loop up to optimized code early.

const SLICE = 1 << 16;

export class WasmOutOfMemory extends Error {}
export class WasmCorrupt extends Error {}

function instance(module, tables) {
  const e = new WebAssembly.Instance(module, {
    env: {
      abort: () => {
        throw new WasmOutOfMemory("context-mixing model could not allocate its tables");
      },
    },
  }).exports;
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
  const { e, put } = instance(module, tables);
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
  const { e, put } = instance(module, tables);
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
