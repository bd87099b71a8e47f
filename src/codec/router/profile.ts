import { isUtf8 as nativeIsUtf8 } from "node:buffer";
import { pickExponent } from "../chambers/float/index.js";

/**
 * Profiling: cheap statistics on the bytes (a sample for large inputs) that decide the data
 * class. Everything here is detection only; chambers verify their own preconditions.
 */
export type DataClass =
  | "empty"
  | "int32"
  | "timestamps"
  | "float64"
  | "float32"
  | "json"
  | "csv"
  | "text"
  | "high_entropy"
  | "binary";
export const DATA_CLASSES: readonly DataClass[] = [
  "empty",
  "int32",
  "timestamps",
  "float64",
  "float32",
  "json",
  "csv",
  "text",
  "high_entropy",
  "binary",
];
export type DeclaredType = "int32" | "float32" | "float64" | "timestamps" | "json" | "csv" | "text" | "binary";

export interface Feats {
  bytes: number;
  /** order-0 entropy of a sample, bits per byte */
  h0: number;
  utf8: boolean;
  /** share of printable/whitespace bytes in the sample */
  printable: number;
  json: boolean;
  csv: boolean;
  magic: string | null;
  /** share of int32 values within ±2^24 (length multiple of 4) */
  int32Small: number;
  /** share of non-decreasing steps among int32 values */
  monotonic: number;
  /** share of float64 (or float32) values in a plausible magnitude range */
  float64Plausible: number;
  float32Plausible: number;
  /** share of sampled doubles that are short decimals (ALP exponent found) */
  decimal: number;
  /** best byte stride for record-structured binary, 0 when none stands out */
  stride: number;
  declared: DeclaredType | null;
}

export interface Profile {
  path: string;
  data_class: DataClass;
  feats: Feats;
}

const SAMPLE = 1 << 16;

function sample(b: Uint8Array): Uint8Array {
  if (b.length <= 2 * SAMPLE) return b;
  const out = new Uint8Array(2 * SAMPLE);
  out.set(b.subarray(0, SAMPLE));
  const mid = (b.length >> 1) & ~7;
  out.set(b.subarray(mid, mid + SAMPLE), SAMPLE);
  return out;
}

export function entropy0(b: Uint8Array): number {
  return entropyOf(histogram(b), b.length);
}

function histogram(b: Uint8Array): Uint32Array {
  const c = new Uint32Array(256);
  for (let i = 0; i < b.length; i++) c[b[i]!]!++;
  return c;
}

function entropyOf(c: Uint32Array, len: number): number {
  if (len === 0) return 0;
  let h = 0;
  for (let i = 0; i < 256; i++) {
    const p = c[i]! / len;
    if (p > 0) h -= p * Math.log2(p);
  }
  return h;
}

/** printable or whitespace bytes (and every byte ≥ 0x80: UTF-8 sequences) */
const isPrintable = (c: number): boolean =>
  (c >= 0x20 && c < 0x7f) || c === 0x0a || c === 0x0d || c === 0x09 || c >= 0x80;

const MAGICS: [string, number[]][] = [
  ["gzip", [0x1f, 0x8b]],
  ["png", [0x89, 0x50, 0x4e, 0x47]],
  ["jpeg", [0xff, 0xd8, 0xff]],
  ["zip", [0x50, 0x4b, 0x03, 0x04]],
  ["bzip2", [0x42, 0x5a, 0x68]],
  ["xz", [0xfd, 0x37, 0x7a, 0x58, 0x5a]],
  ["zstd", [0x28, 0xb5, 0x2f, 0xfd]],
  ["7z", [0x37, 0x7a, 0xbc, 0xaf]],
  ["gif", [0x47, 0x49, 0x46, 0x38]],
  ["webp", [0x52, 0x49, 0x46, 0x46]],
  ["pdf", [0x25, 0x50, 0x44, 0x46]],
];

function magicOf(b: Uint8Array): string | null {
  for (const [name, sig] of MAGICS) if (sig.every((x, i) => b[i] === x)) return name;
  return null;
}

/** strict UTF-8 validity (node:buffer's native validator: what TextDecoder's fatal mode accepts, without decoding) */
function isUtf8(b: Uint8Array): boolean {
  return nativeIsUtf8(b);
}

function looksJson(b: Uint8Array, utf8: boolean): boolean {
  if (!utf8 || b.length === 0 || b.length > 256 * 1024 * 1024) return false;
  let i = 0;
  while (i < b.length && (b[i] === 0x20 || b[i] === 0x0a || b[i] === 0x0d || b[i] === 0x09)) i++;
  if (b[i] !== 0x7b && b[i] !== 0x5b) return false;
  const s = new TextDecoder().decode(b);
  try {
    JSON.parse(s);
    return true;
  } catch {
    // NDJSON: every non-empty line parses
    const lines = s.split("\n");
    let ok = 0;
    for (const line of lines) {
      if (line.trim() === "") continue;
      try {
        JSON.parse(line);
        ok++;
      } catch {
        return false;
      }
    }
    return ok > 1;
  }
}

function looksCsv(s: Uint8Array): boolean {
  let lines = 0;
  let commas = -1;
  let consistent = 0;
  let cur = 0;
  for (let i = 0; i < s.length && lines < 200; i++) {
    const c = s[i]!;
    if (c === 0x2c || c === 0x09 || c === 0x3b) cur++;
    else if (c === 0x0a) {
      if (cur > 0 && cur === commas) consistent++;
      commas = cur;
      cur = 0;
      lines++;
    }
  }
  return lines >= 10 && consistent >= lines * 0.8;
}

function strideOf(s: Uint8Array): number {
  const n = Math.min(s.length, SAMPLE);
  if (n < 256) return 0;
  // matches at distances 1, 2, 4 and 8 in one pass (the first k positions of distance k skipped)
  let m1 = 0;
  let m2 = 0;
  let m4 = 0;
  let m8 = 0;
  for (let i = 1; i < 8; i++) {
    const c = s[i]!;
    m1 += c === s[i - 1] ? 1 : 0;
    if (i >= 2) m2 += c === s[i - 2] ? 1 : 0;
    if (i >= 4) m4 += c === s[i - 4] ? 1 : 0;
  }
  for (let i = 8; i < n; i++) {
    const c = s[i]!;
    m1 += c === s[i - 1] ? 1 : 0;
    m2 += c === s[i - 2] ? 1 : 0;
    m4 += c === s[i - 4] ? 1 : 0;
    m8 += c === s[i - 8] ? 1 : 0;
  }
  const score = (k: number): number => (k === 1 ? m1 : k === 2 ? m2 : k === 4 ? m4 : m8) / (n - k);
  const base = score(1);
  let best = 0;
  let bestScore = base * 1.25 + 0.02;
  for (const k of [2, 4, 8]) {
    const v = score(k);
    if (v > bestScore) {
      best = k;
      bestScore = v;
    }
  }
  return best;
}

export function profileBytes(bytes: Uint8Array, declared: DeclaredType | null = null): Profile {
  const s = sample(bytes);
  // one histogram of the sample gives both its entropy and its printable share
  const hist = histogram(s);
  const h0 = entropyOf(hist, s.length);
  let printableCount = 0;
  for (let c = 0; c < 256; c++) if (isPrintable(c)) printableCount += hist[c]!;
  // a separate variable for the share: an integer variable turned fractional deoptimises this function
  const printable = s.length ? printableCount / s.length : 1;
  const utf8 = isUtf8(bytes);
  const magic = magicOf(bytes);
  let int32Small = 0;
  let monotonic = 0;
  let f64 = 0;
  let f32 = 0;
  let decimal = 0;
  const aligned = s.length - (s.length % 8);
  if (bytes.length % 4 === 0 && bytes.length >= 16) {
    // typed views (little-endian on every platform Node supports) over an 8-aligned copy if need be
    const a8 = s.byteOffset % 8 === 0 ? s : s.slice(0, aligned);
    const n = aligned / 4;
    const i32 = new Int32Array(a8.buffer, a8.byteOffset, n);
    const f32v = new Float32Array(a8.buffer, a8.byteOffset, n);
    let small = 0;
    let mono = 0;
    let plaus32 = 0;
    let prev = i32[0]!;
    for (let i = 0; i < n; i++) {
      const v = i32[i]!;
      if (v < 1 << 24 && v >= -(1 << 24)) small++;
      if (i > 0 && v >= prev) mono++;
      prev = v;
      const f = Math.abs(f32v[i]!);
      if (f === 0 || (f > 1e-6 && f < 1e9)) plaus32++;
    }
    int32Small = small / n;
    monotonic = n > 1 ? mono / (n - 1) : 0;
    f32 = plaus32 / n;
    if (bytes.length % 8 === 0) {
      const m = aligned / 8;
      const f64v = new Float64Array(a8.buffer, a8.byteOffset, m);
      let plaus = 0;
      const vals = new Float64Array(Math.min(m, 4096));
      for (let i = 0; i < m; i++) {
        const f = f64v[i]!;
        const a = Math.abs(f);
        if (a === 0 || (a > 1e-12 && a < 1e15)) plaus++;
        if (i < vals.length) vals[i] = f;
      }
      f64 = plaus / m;
      if (f64 > 0.9) decimal = pickExponent(vals, 8).hit;
    }
  }
  const json = looksJson(bytes, utf8);
  const csv = !json && utf8 && looksCsv(s);
  const stride = strideOf(s);
  const feats: Feats = {
    bytes: bytes.length,
    h0: Math.round(h0 * 1000) / 1000,
    utf8,
    printable: Math.round(printable * 1000) / 1000,
    json,
    csv,
    magic,
    int32Small: Math.round(int32Small * 1000) / 1000,
    monotonic: Math.round(monotonic * 1000) / 1000,
    float64Plausible: Math.round(f64 * 1000) / 1000,
    float32Plausible: Math.round(f32 * 1000) / 1000,
    decimal: Math.round(decimal * 1000) / 1000,
    stride,
    declared,
  };
  const data_class = classify(feats, bytes.length);
  return { path: pathOf(data_class), data_class, feats };
}

function classify(f: Feats, len: number): DataClass {
  if (len === 0) return "empty";
  if (f.declared) return f.declared;
  if (f.utf8 && f.printable > 0.95) return f.json ? "json" : f.csv ? "csv" : "text";
  if (f.magic && f.magic !== "pdf" && f.h0 > 7.5) return "high_entropy";
  if (f.h0 > 7.95) return "high_entropy";
  if (len % 4 === 0 && len >= 16) {
    if (len % 8 === 0 && f.float64Plausible > 0.95 && f.int32Small < 0.6) return "float64";
    if (f.monotonic > 0.98 && f.float64Plausible < 0.95) return "timestamps";
    if (f.int32Small > 0.9) return f.monotonic > 0.98 ? "timestamps" : "int32";
    if (f.float32Plausible > 0.95) return "float32";
  }
  return "binary";
}

export function pathOf(c: DataClass): string {
  switch (c) {
    case "int32":
      return "zrw";
    case "timestamps":
      return "delta";
    case "float64":
    case "float32":
      return "float";
    case "json":
      return "json_residual";
    case "csv":
    case "text":
      return "text";
    case "high_entropy":
    case "empty":
      return "high_entropy";
    default:
      return "general";
  }
}
