import { readFileSync } from "node:fs";

/**
 * The WebAssembly loops of level fast's integer coder and the float chamber's decimal split
 * (int-wasm/fast.as.ts → fast.wasm, `npm run build:wasm`): the same results as the TypeScript
 * loops in intcoder.ts, rans.ts and chambers/float, which stay as the fallback when WebAssembly
 * cannot run here (and decode everything either way: the bytes are the same).
 *
 * One instance per thread, kept between calls while its memory stays at most KEEP_BYTES (a larger
 * input gets an instance of its own for that call). Arrays live in the instance's memory at
 * addresses the caller lays out (see Layout); a view of that memory is valid until the next call
 * that may grow it.
 */
interface Exports {
  memory: { buffer: ArrayBuffer; grow(pages: number): number };
  heapBase(): number;
  maxZ(): number;
  state0(): number;
  state1(): number;
  zigzagResiduals(vals: number, f64in: number, n: number, t: number): number;
  histogram16(vals: number, f64in: number, n: number, t: number, syms: number, counts: number, alphabet: number): void;
  tokenBlocks(vals: number, f64in: number, n: number, t: number, toks: number, counts: number, bits: number): number;
  sampleTokens(vals: number, f64in: number, n: number, t: number, counts: number): number;
  ransEncode(syms: number, width: number, n: number, freqs: number, starts: number, outEnd: number): number;
  decimalSplit(vals: number, n: number, p: number, width: number, maxAbs: number, ints: number, exc: number): number;
  firstUnsafe(vals: number, n: number, maxAbs: number): number;
  countExact(vals: number, count: number, p: number, width: number, maxAbs: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (m: object, imports: object) => { exports: unknown };
}
const Wasm = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;

/**
 * memory kept by this thread's instance between calls: up to ~760,000 values (22 bytes each, see
 * Layout), e.g. a 2 MiB chunk of int32 at fast (524,288 values, 11.5 MB); about what the
 * TypeScript coder's scratch arrays kept (SCRATCH_KEEP values, SCRATCH_KEEP_BYTES per slot)
 */
export const KEEP_BYTES = 16 << 20;
const PAGE = 65536;

let mod: object | null | undefined;
let kept: Kernels | null = null;
let disabled = false;

/** switch the WebAssembly loops off (tests compare them with the TypeScript ones) */
export function setIntWasm(on: boolean): void {
  disabled = !on;
}

function module(): object | null {
  if (mod === undefined) {
    try {
      mod = Wasm ? new Wasm.Module(readFileSync(new URL("./int-wasm/fast.wasm", import.meta.url))) : null;
    } catch {
      mod = null;
    }
  }
  return mod;
}

export class Kernels {
  readonly ex: Exports;
  readonly base: number;
  private u8cache: Uint8Array;
  constructor(m: object) {
    this.ex = new Wasm!.Instance(m, { env: { abort() {} } }).exports as Exports;
    this.base = this.ex.heapBase();
    this.u8cache = new Uint8Array(this.ex.memory.buffer);
  }
  /** memory from base up to base + bytes (grown when needed) */
  ensure(bytes: number): void {
    const need = this.base + bytes;
    const have = this.ex.memory.buffer.byteLength;
    if (need > have) this.ex.memory.grow(Math.ceil((need - have) / PAGE));
  }
  get size(): number {
    return this.ex.memory.buffer.byteLength;
  }
  get u8(): Uint8Array {
    if (this.u8cache.buffer !== this.ex.memory.buffer) this.u8cache = new Uint8Array(this.ex.memory.buffer);
    return this.u8cache;
  }
}

/**
 * a job's memory at most (addresses stay below 2^31, where the module's 32-bit results are
 * non-negative numbers in JavaScript); larger jobs run the TypeScript loops
 */
export const MAX_JOB_BYTES = 1 << 30;

/**
 * The kernels for a job that needs `bytes` of memory past the heap base, grown to hold them; null
 * when WebAssembly does not run here, is switched off, the job is above MAX_JOB_BYTES or the
 * memory cannot grow (the caller then runs the TypeScript loops).
 */
export function kernels(bytes: number): Kernels | null {
  if (disabled || bytes > MAX_JOB_BYTES) return null;
  const m = module();
  if (!m) return null;
  try {
    const k = kept && kept.base + bytes <= KEEP_BYTES ? kept : new Kernels(m);
    if (k !== kept && k.base + bytes <= KEEP_BYTES) kept = k;
    k.ensure(bytes);
    return k;
  } catch {
    return null;
  }
}

/** whether the WebAssembly loops run here */
export function hasIntWasm(): boolean {
  return !disabled && module() !== null;
}

const align = (x: number): number => (x + 15) & ~15;

/**
 * Where encodeIntsFast keeps its arrays for n values (addresses past the heap base): the values
 * (8 bytes each, room for float64); `tmp`, the raw bits (≤ 7 bytes a value; before them the float
 * chamber's input floats); 16-bit symbols or 8-bit tokens (before them the float chamber's
 * exception positions, 4 bytes each); counts, frequencies and starts of up to 4096 symbols; the
 * rANS stream (≤ 2 bytes a symbol), written backwards to ransEnd.
 */
export class Layout {
  readonly vals: number;
  readonly tmp: number;
  readonly syms: number;
  readonly counts: number;
  readonly freqs: number;
  readonly starts: number;
  readonly ransEnd: number;
  readonly bytes: number;
  constructor(base: number, n: number) {
    let o = base;
    const take = (size: number): number => {
      const at = o;
      o = align(o + size);
      return at;
    };
    this.vals = take(8 * n);
    this.tmp = take(8 * n + 16);
    this.syms = take(4 * n);
    this.counts = take(4 * 4096);
    this.freqs = take(4 * 4096);
    this.starts = take(4 * 4096);
    this.ransEnd = take(2 * n + 16) + 2 * n + 16;
    this.bytes = o - base;
  }
}
