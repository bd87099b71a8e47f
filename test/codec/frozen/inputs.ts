/**
 * Seeded input generators for the frozen containers (test/codec/frozen/<release>/).
 * A manifest entry names its generator as `{ name, seed, n }`; `generate()` rebuilds the exact
 * input from it, so a release's containers can be regenerated and checked. Generators never
 * change once a release used them: add a new name instead.
 */
import { createHash } from "node:crypto";

export interface GeneratorSpec {
  name: GeneratorName;
  seed: number;
  /** size parameter (values or bytes, per generator) */
  n: number;
}

/** deterministic xorshift32 in [0, 1) */
function rng(seed: number): () => number {
  let x = seed | 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

const i32 = (v: number[]): Uint8Array => new Uint8Array(Int32Array.from(v).buffer);
const f64 = (v: number[]): Uint8Array => new Uint8Array(Float64Array.from(v).buffer);
const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

const WORDS = ["the", "agent", "paid", "for", "a", "chamber", "and", "got", "bytes", "back", "of", "lab", "phi"];

/** Japanese words and particles (3-byte UTF-8 characters), for the text chamber's character contexts */
const WORDS_JA = [
  "源氏",
  "の",
  "物語",
  "は",
  "宮",
  "に",
  "女御",
  "更衣",
  "あまた",
  "さぶらひ",
  "たまひける",
  "中",
  "いと",
  "やむごとなき",
  "際",
  "には",
  "あらぬ",
  "が",
  "すぐれて",
  "時めき",
  "たまふ",
  "ありけり",
];

const GENERATORS = {
  /** n uniformly random bytes */
  "random-bytes": (r: () => number, n: number) => new Uint8Array(n).map(() => Math.floor(r() * 256)),
  /** n seeded words of English-like prose */
  prose: (r: () => number, n: number) =>
    utf8(
      Array.from({ length: n }, (_, i) => WORDS[Math.floor(r() * WORDS.length)] + (i % 12 === 11 ? ".\n" : " ")).join(
        "",
      ),
    ),
  /** n seeded Japanese-like words (3-byte UTF-8 characters), a sentence every 9 */
  "prose-ja": (r: () => number, n: number) =>
    utf8(
      Array.from(
        { length: n },
        (_, i) => WORDS_JA[Math.floor(r() * WORDS_JA.length)] + (i % 9 === 8 ? "。\n" : i % 3 === 2 ? "、" : ""),
      ).join(""),
    ),
  /** a JSON array of n records */
  "json-records": (r: () => number, n: number) =>
    utf8(
      JSON.stringify(
        Array.from({ length: n }, (_, i) => ({
          id: i,
          name: `user-${Math.floor(r() * 17)}`,
          score: Math.floor(r() * 101),
          ok: r() < 0.3,
        })),
      ),
    ),
  /** n int32 values of a random walk (steps −100…100) */
  "int32-walk": (r: () => number, n: number) => {
    let a = 0;
    return i32(Array.from({ length: n }, () => (a += Math.floor(r() * 201) - 100)));
  },
  /** n int32 timestamps, 300 s apart, with seeded jitter */
  "int32-clock": (r: () => number, n: number) =>
    i32(Array.from({ length: n }, (_, i) => 1_600_000_000 + i * 300 + (r() < 0.01 ? 7 : 0))),
  /** n float64 temperatures with one decimal */
  "f64-temps": (r: () => number, n: number) =>
    f64(Array.from({ length: n }, (_, i) => Math.round((20 + 10 * Math.sin(i / 50) + r()) * 10) / 10)),
  /** n 32-byte records with a counter, a constant and a slow column */
  records32: (r: () => number, n: number) => {
    const b = new Uint8Array(32 * n);
    for (let i = 0; i < n; i++) {
      b[i * 32] = i & 255;
      b[i * 32 + 1] = 7;
      b[i * 32 + 8] = (i * 3 + Math.floor(r() * 2)) & 255;
    }
    return b;
  },
  /** n int32 values, almost all −1 */
  "int32-dominant": (r: () => number, n: number) =>
    i32(Array.from({ length: n }, (_, i) => (i % 211 === 0 || r() < 0.005 ? i : -1))),
  /** n bytes, about 1 % non-zero */
  "sparse-bytes": (r: () => number, n: number) =>
    new Uint8Array(n).map(() => (r() < 0.01 ? 1 + Math.floor(r() * 255) : 0)),
  /** an x86-64 ELF header, then n bytes of call-heavy "code" (E8 rel32 to a few targets) */
  "elf-x86": (r: () => number, n: number) => {
    const b = new Uint8Array(64 + n);
    b.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]);
    b[18] = 62;
    const ops = [0x48, 0x89, 0xe5, 0x8b, 0x45, 0xfc, 0x83, 0xc0, 0x01, 0x5d, 0xc3, 0x55, 0x31, 0xc0];
    for (let i = 64; i < b.length; ) {
      if (r() < 0.15 && i + 5 <= b.length) {
        const rel = (4096 * (1 + Math.floor(r() * 6)) - (i + 5)) >>> 0;
        b.set([0xe8, rel & 255, (rel >>> 8) & 255, (rel >>> 16) & 255, rel >>> 24], i);
        i += 5;
      } else b[i++] = ops[Math.floor(r() * ops.length)]!;
    }
    return b;
  },
  /** n little-endian 16-bit code points: runs of consecutive values, small gaps and jumps (a conversion table) */
  table16: (r: () => number, n: number) => {
    const b = new Uint8Array(2 * n);
    let v = 0x4e00;
    for (let i = 0; i < n; i++) {
      v += r() < 0.9 ? 1 : 2 + Math.floor(r() * 40);
      if (r() < 0.15) v = 0x3000 + Math.floor(r() * 0x6000);
      b[2 * i] = v & 0xff;
      b[2 * i + 1] = (v >> 8) & 0xff;
    }
    return b;
  },
} satisfies Record<string, (r: () => number, n: number) => Uint8Array>;

export type GeneratorName = keyof typeof GENERATORS;
export const GENERATOR_NAMES = Object.keys(GENERATORS) as GeneratorName[];

export function generate(spec: GeneratorSpec): Uint8Array {
  const g = GENERATORS[spec.name];
  if (!g) throw new Error(`unknown generator ${spec.name}`);
  return g(rng(spec.seed), spec.n);
}

export const sha256 = (b: Uint8Array): string => createHash("sha256").update(b).digest("hex");
