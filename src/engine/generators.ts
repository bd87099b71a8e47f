/**
 * Named deterministic corpus generators for POST /api/compress and /api/process `{ corpus, n, seed? }`.
 * The same (corpus, n, seed) always gives the same bytes, on every machine (integer arithmetic and a
 * fixed PRNG; `sine` rounds Math.sin of i mod 360, and V8's Math.sin is the same fdlibm code on every
 * platform).
 *
 * Numeric generators emit n int32 little-endian values (4n bytes); `text` emits n bytes of ASCII.
 * `entropy_bits_per_value` is the entropy of the source that produced the values (the bound no
 * lossless coder can beat on average), null when there is no simple closed form.
 */

export const CORPORA = ["zeros", "ramp", "walk", "sine", "noise", "text"] as const;
export type CorpusName = (typeof CORPORA)[number];

export interface Generator {
  name: CorpusName;
  summary: string;
  unit: "int32" | "byte";
  entropy_bits_per_value: number | null;
  generate(n: number, seed: number): Uint8Array;
}

/** mulberry32: a small, fast, well-mixed 32-bit PRNG; state is one uint32. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

function int32s(n: number, at: (i: number) => number): Uint8Array {
  const out = new Uint8Array(n * 4);
  const dv = new DataView(out.buffer);
  for (let i = 0; i < n; i++) dv.setInt32(i * 4, at(i), true);
  return out;
}

const SINE_AMPLITUDE = 10_000;
const SINE_PERIOD = 360;
const WALK_STEP = 8;

// A fixed vocabulary; word k is drawn with probability ∝ 1/(k+1) (Zipf, exponent 1).
const WORDS = (
  "the of and to in a is that for it as was with be by on not he this are or his from at which but have an " +
  "they you were her she there been one all we their has would when if so no will more about up out who " +
  "data codec chamber barrel print value stream block entropy model context mixing delta float text json " +
  "sensor reading window sample signal record column key series time level route path measure table"
).split(" ");
const ZIPF_CUMULATIVE = (() => {
  const w = WORDS.map((_, k) => 1 / (k + 1));
  const total = w.reduce((a, b) => a + b, 0);
  let acc = 0;
  return w.map((x) => {
    acc += x / total;
    return acc;
  });
})();

function textBytes(n: number, seed: number): Uint8Array {
  const next = prng(seed);
  const out = new Uint8Array(n);
  let o = 0;
  let sentence = 0;
  let capital = true;
  while (o < n) {
    const u = next() / 4294967296;
    let k = ZIPF_CUMULATIVE.findIndex((c) => u < c);
    if (k < 0) k = WORDS.length - 1;
    const word = WORDS[k] as string;
    for (let j = 0; j < word.length && o < n; j++) {
      const c = word.charCodeAt(j);
      out[o++] = capital && j === 0 ? c - 32 : c;
    }
    capital = false;
    sentence++;
    if (o >= n) break;
    if (sentence >= 6 + (next() % 10)) {
      out[o++] = 0x2e; // .
      sentence = 0;
      capital = true;
      if (o < n) out[o++] = next() % 5 === 0 ? 0x0a : 0x20;
    } else {
      out[o++] = 0x20;
    }
  }
  return out;
}

export const GENERATORS: Record<CorpusName, Generator> = {
  zeros: {
    name: "zeros",
    summary: "n int32 zeros",
    unit: "int32",
    entropy_bits_per_value: 0,
    generate: (n) => new Uint8Array(n * 4),
  },
  ramp: {
    name: "ramp",
    summary: "n int32 values 0, 1, 2, … (v[i] = i)",
    unit: "int32",
    entropy_bits_per_value: 0,
    generate: (n) => int32s(n, (i) => i),
  },
  walk: {
    name: "walk",
    summary: `random walk of n int32 values: v[0] = 0, v[i] = v[i-1] + s with s uniform in [-${WALK_STEP}, ${WALK_STEP}]`,
    unit: "int32",
    entropy_bits_per_value: Math.log2(2 * WALK_STEP + 1),
    generate: (n, seed) => {
      const next = prng(seed);
      let v = 0;
      return int32s(n, (i) => {
        if (i > 0) v = (v + (next() % (2 * WALK_STEP + 1)) - WALK_STEP) | 0;
        return v;
      });
    },
  },
  sine: {
    name: "sine",
    summary: `n int32 values round(${SINE_AMPLITUDE} · sin(2π i / ${SINE_PERIOD})), a pure periodic signal`,
    unit: "int32",
    entropy_bits_per_value: 0,
    generate: (n) =>
      int32s(n, (i) => Math.round(SINE_AMPLITUDE * Math.sin((2 * Math.PI * (i % SINE_PERIOD)) / SINE_PERIOD))),
  },
  noise: {
    name: "noise",
    summary: "n uniformly random int32 values (incompressible: 32 bits per value)",
    unit: "int32",
    entropy_bits_per_value: 32,
    generate: (n, seed) => {
      const next = prng(seed);
      return int32s(n, () => next() | 0);
    },
  },
  text: {
    name: "text",
    summary: `n bytes of English-like ASCII text: words from a fixed ${WORDS.length}-word vocabulary drawn with Zipf weights, sentences of 6-15 words`,
    unit: "byte",
    entropy_bits_per_value: null,
    generate: textBytes,
  },
};

/** Size in bytes of generate(n) for a corpus, computed before generating (limits are checked first). */
export function generatedBytes(corpus: CorpusName, n: number): number {
  return GENERATORS[corpus].unit === "int32" ? n * 4 : n;
}

export function generate(corpus: CorpusName, n: number, seed = 1): Uint8Array {
  return GENERATORS[corpus].generate(n, seed);
}
