import type { Feats, Level } from "../codec/index.js";
import { type Counsel, LEVEL_TRADEOFF, type PrintOut } from "./service.js";

/**
 * Creator counsel: three plain-language notes derived from the actual result — heart (what the
 * data is), brain (why this chamber or method won), cloak (what is kept private). Nothing here is
 * canned per request: every sentence is built from the profile, the sizes and the route reason.
 */

const n = (x: number): string => x.toLocaleString("en-US");
const pct = (x: number): string => `${Math.round(x * 100)}%`;

export function describeData(dataClass: string, f: Feats): string {
  const size = `${n(f.bytes)} bytes`;
  switch (dataClass) {
    case "empty":
      return "No data: the input is empty.";
    case "int32":
      return `An array of ${n(Math.floor(f.bytes / 4))} little-endian int32 values (${pct(f.int32Small)} within ±2^24), ${size}.`;
    case "timestamps":
      return `A monotonic int32 sequence such as timestamps or ids (${pct(f.monotonic)} non-decreasing steps), ${size}.`;
    case "float64":
      return `An array of ${n(Math.floor(f.bytes / 8))} float64 values (${pct(f.decimal)} of sampled values are short decimals), ${size}.`;
    case "float32":
      return `An array of ${n(Math.floor(f.bytes / 4))} float32 values, ${size}.`;
    case "json":
      return `A JSON document, ${size} of UTF-8.`;
    case "csv":
      return `Delimited text (CSV-like), ${size} of UTF-8, ${pct(f.printable)} printable.`;
    case "text":
      return `UTF-8 text, ${size}, ${pct(f.printable)} printable characters.`;
    case "high_entropy":
      return `Already-compressed or random bytes (${f.h0} bits of entropy per byte${f.magic ? `, a ${f.magic} signature` : ""}), ${size}.`;
    default:
      return `Binary data${f.stride ? ` with a ${f.stride}-byte record structure` : ""} (${f.h0} bits per byte), ${size}.`;
  }
}

function cloak(print: PrintOut | null, extra: string): string {
  const kept = print
    ? `A print was recorded for your identity: ${print.dataset_print_id} (a keyed hash of the bytes), with size, class, path and ratio — never the data.`
    : "No print was recorded (no identity token was sent).";
  return `Your bytes were processed in memory and are not stored. ${kept} ${extra}`.trim();
}

export function compressCounsel(r: {
  data_class: string;
  feats: Feats;
  chamber: string;
  reason: string;
  level: Level;
  original_bytes: number;
  compressed_bytes: number;
  bare: boolean;
  print: PrintOut | null;
}): Counsel {
  const share = r.original_bytes ? r.compressed_bytes / r.original_bytes : 1;
  return {
    heart: describeData(r.data_class, r.feats),
    brain: `Chamber ${r.chamber} was kept — router: ${r.reason}. ${n(r.original_bytes)} → ${n(r.compressed_bytes)} bytes (${pct(share)} of the input${r.bare ? ", bare stream without magic or checksum" : ", framed with a CRC-32 of the original"}).${
      r.compressed_bytes >= r.original_bytes
        ? ` The input is too small or too random to shrink, so the container's header shows (never more than 16 bytes)${r.bare ? "" : "; bare mode drops the magic and checksum"}.`
        : ""
    } ${cap(LEVEL_TRADEOFF[r.level])}.`,
    cloak: cloak(
      r.print,
      "Lossless: the input was not rewritten, and the container was decoded back byte for byte before this answer.",
    ),
  };
}

export function classicCounsel(r: {
  data_class: string;
  feats: Feats;
  method: string;
  sizes: { "brotli-11": number; "gzip-9": number };
  original_bytes: number;
  compressed_bytes: number;
  print: PrintOut | null;
}): Counsel {
  const other = r.method === "brotli-11" ? "gzip-9" : "brotli-11";
  return {
    heart: describeData(r.data_class, r.feats),
    brain: `Classic engine: brotli-11 gave ${n(r.sizes["brotli-11"])} bytes and gzip-9 ${n(r.sizes["gzip-9"])}; ${r.method} is smaller than ${other}, so its standard stream is returned (${n(r.original_bytes)} → ${n(r.compressed_bytes)} bytes). Any gzip or brotli decoder restores it.`,
    cloak: cloak(r.print, "Lossless: the input was not rewritten."),
  };
}

export function decompressCounsel(r: {
  original_bytes: number;
  compressed_bytes: number;
  chambers: string[];
  level: string;
  bare: boolean;
  legacy: boolean;
  checksum_verified: boolean;
  method?: string;
}): Counsel {
  const chambers = [...new Set(r.chambers)].join(", ");
  const how = r.method
    ? `a ${r.method} stream`
    : r.legacy
      ? "a legacy gzip stream"
      : `a ${r.bare ? "bare" : "framed"} level-${r.level} container (chamber ${chambers})`;
  return {
    heart: `${n(r.compressed_bytes)} bytes of ${how} restoring ${n(r.original_bytes)} bytes.`,
    brain: r.checksum_verified
      ? "Decoded and checked: the stored checksum of the original matches the output."
      : "Decoded strictly within the size limits; a bare stream carries no checksum, so integrity rests on the strict decoder alone.",
    cloak: "Neither the container nor the restored bytes are stored; nothing of them is recorded.",
  };
}

export function benchCounsel(r: {
  data_class: string;
  feats: Feats;
  chamber: string;
  level: Level;
  methods: { method: string; bytes: number; roundtrip: boolean }[];
  omni_vs_brotli: number;
  ok: boolean;
}): Counsel {
  const sizes = r.methods.map((m) => `${m.method} ${n(m.bytes)} B`).join(", ");
  const best = [...r.methods].sort((a, b) => a.bytes - b.bytes)[0];
  const verdict = r.ok
    ? "every method decoded back byte for byte"
    : `round trip FAILED for ${r.methods
        .filter((m) => !m.roundtrip)
        .map((m) => m.method)
        .join(", ")}`;
  return {
    heart: describeData(r.data_class, r.feats),
    brain: `Measured in one run: ${sizes}; smallest: ${best?.method ?? "none"}. omni/brotli-11 = ${r.omni_vs_brotli} (omni chamber ${r.chamber}); ${verdict}. ${cap(LEVEL_TRADEOFF[r.level])}.`,
    cloak: "Benchmark only: nothing is stored and no print is recorded.",
  };
}

const cap = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
