/**
 * Context-mixing models side by side on files (issue #24, max level): codes each file with models
 * 4 to 9 (the text chamber's x86 filter first for ELF/PE inputs; inputs over 1 MiB cut to a
 * 512 KiB head, as the quick benchmark does), in this thread, and prints the stream sizes, the
 * encoder's CPU seconds per model, and the model the text chamber's 64 KiB trial picks.
 *
 *   npx tsx bench/cm-profiles.ts FILE…
 *
 * Decoding runs the same model, so it costs what encoding does (checked: every stream is decoded
 * back once with --check).
 */
import { readFileSync } from "node:fs";
import { SAMPLE } from "../src/codec/chambers/text/index.js";
import { isExecutable, x86Encode } from "../src/codec/chambers/text/x86.js";
import { type CmModel, cmDecode, cmEncode } from "../src/codec/entropy/cm.js";

const MODELS: CmModel[] = [4, 5, 6, 7, 8, 9];
const args = process.argv.slice(2);
const check = args.includes("--check");
const files = args.filter((a) => a !== "--check");
if (files.length === 0) {
  console.error("usage: npx tsx bench/cm-profiles.ts [--check] FILE…");
  process.exit(2);
}
const cpu = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
const total = new Map<CmModel, { bytes: number; cpu: number }>(MODELS.map((m) => [m, { bytes: 0, cpu: 0 }]));
let best = 0;
console.log(["file", "bytes", ...MODELS.map((m) => `model ${m}`), "picked", "best"].join("\t"));
for (const f of files) {
  let b = new Uint8Array(readFileSync(f));
  if (b.length > 1 << 20) b = b.subarray(0, 512 * 1024);
  const data = isExecutable(b) ? x86Encode(b) : b;
  const sizes: number[] = [];
  for (const m of MODELS) {
    const c0 = cpu();
    const out = cmEncode(data, null, 0, m);
    const t = total.get(m)!;
    t.cpu += cpu() - c0;
    t.bytes += out.length;
    sizes.push(out.length);
    if (check && Buffer.compare(Buffer.from(cmDecode(out, data.length, null, null, m)), Buffer.from(data)) !== 0)
      throw new Error(`${f}: model ${m} does not round-trip`);
  }
  // the chamber's pick: x86 → 8; else the smallest on the first SAMPLE bytes among 7, 9 (and 8 for binary)
  const sample = data.subarray(0, Math.min(data.length, SAMPLE));
  const cands: CmModel[] = isExecutable(b) ? [8] : [7, 9, 8];
  const trial = cands.map((m) => (cands.length === 1 ? 0 : cmEncode(sample, null, 0, m).length));
  const picked = cands[trial.indexOf(Math.min(...trial))]!;
  const bestOf = Math.min(...sizes.slice(3));
  best += bestOf;
  console.log([f, b.length, ...sizes, picked, bestOf].join("\t"));
}
console.log(
  ["total", "", ...MODELS.map((m) => `${total.get(m)!.bytes} B ${total.get(m)!.cpu.toFixed(2)} CPU-s`), "", best].join(
    "\t",
  ),
);
