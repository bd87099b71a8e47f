/**
 * compress(bytes) and compressWithReport(bytes): profile, route, run the candidate chambers and
 * keep the smallest (never larger than the input plus the framing), with the max-level guard that
 * skips the general chamber when the modelling chambers already won clearly.
 */
import { brotliAsync } from "../backends.js";
import { CHAMBERS, type ChamberName, chamberId } from "../chambers/registry.js";
import type { Encoded, Level } from "../chambers/types.js";
import { fail } from "../errors.js";
import { type Block, writeBare, writeFramed } from "../format/container.js";
import { type Route, routeProfile } from "../router/index.js";
import type { DeclaredType, Profile } from "../router/profile.js";
import { autoChunkSize, chunkWindow, cutChunks, mapOrdered } from "../window.js";
import { fastPlainAlternative } from "./fast-check.js";
import { profile } from "./profile.js";
import { type CompressOptions, type CompressReport, checkLevel, MAX_OVERHEAD, plain } from "./shared.js";

interface Choice {
  chamber: ChamberName;
  enc: Encoded;
}

/**
 * At max, inputs of at least GUARD_MIN_BYTES skip the general chamber (brotli-11
 * + xz-9, the slowest work after context mixing) when the modelling chambers already produced at
 * most GUARD_RATIO × a brotli-9 of the input (brotli-9 runs on the thread pool meanwhile), or when
 * brotli-9 saves under 1 %. On the benchmark corpus, wherever a modelling chamber came within
 * 0.85 × brotli-9 it was also smaller than both brotli-11 and xz-9, by 5 % or more; the benchmark
 * checks "never larger than min(brotli-11, xz-9) + 16 B" on every file it runs.
 */
export const GUARD_MIN_BYTES = 256 * 1024;
export const GUARD_RATIO = 0.85;
export const GUARD_INCOMPRESSIBLE = 0.99;
/**
 * at balanced the guard's estimate is brotli-5 (a quarter of brotli-9's CPU: 0.002-0.07 against
 * 0.007-0.22 CPU-s per file on the corpus's 23 numeric arrays; brotli-5 is 0.96-1.15 × brotli-9
 * there) against this ratio; on the corpus it skips the general chamber on the same files as
 * brotli-9 with 0.85 did, and no file at balanced is then above min(brotli-11, xz -9e) + 16 B
 * (docs/codec.md "Balanced")
 */
export const GUARD_RATIO_BALANCED = 0.82;
const GUARD_QUALITY_BALANCED = 5;
/** data classes whose typed chamber the guard also trusts at balanced (the same chambers as at max) */
const BALANCED_GUARDED: ReadonlySet<string> = new Set(["int32", "timestamps", "float64", "float32"]);

async function encodeBlock(
  input: Uint8Array,
  level: Level,
  forced: ChamberName | undefined,
  declared: DeclaredType | undefined,
): Promise<{ best: Choice; prof: Profile; route: Route; tried: { chamber: ChamberName; size: number | null }[] }> {
  const prof = profile(input, declared);
  const r: Route = forced
    ? { chamber: forced, candidates: [forced], label: `omni/${forced}`, reason: "chamber requested by the caller" }
    : routeProfile(prof, level);
  const tried: { chamber: ChamberName; size: number | null }[] = [];
  let best: Choice | null = null;
  const pending = new Map<ChamberName, Promise<Encoded | null>>();
  const start = (name: ChamberName, toBeat?: number): void => {
    const ch = CHAMBERS.get(name);
    if (!ch) fail("codec_bad_option", `unknown chamber ${name}`);
    const p = ch.accepts(input)
      ? ch.encode(input, { level, dataClass: prof.data_class, stride: prof.feats.stride, toBeat })
      : Promise.resolve(null);
    p.catch(() => {}); // awaited below; this only marks the rejection as handled meanwhile
    pending.set(name, p);
  };
  const sizeOf = (e: Encoded | null): number => (e ? e.payload.length + e.params.length : Number.POSITIVE_INFINITY);
  const withGeneral = r.candidates.includes("general") && r.candidates.length > 1;
  // at balanced the same guard spares numeric arrays the general chamber (brotli-11 / xz there:
  // 0.5–2 CPU-s per MB, 2-5× the typed chamber) when the typed chamber won clearly
  const guarded =
    withGeneral &&
    (level === "max" || (level === "balanced" && BALANCED_GUARDED.has(prof.data_class))) &&
    input.length >= GUARD_MIN_BYTES;
  let guardNote = "";
  if (withGeneral && !guarded) {
    // small inputs: the general chamber's backends run on the thread pool while the main
    // thread runs the modelling chambers
    start("general");
    await new Promise((res) => setImmediate(res)); // let the backend jobs reach the pool
  }
  // large inputs at max: a quick brotli-9 of the input runs on the pool meanwhile; the general
  // chamber (brotli-11, xz-9, strides) is then run only when the modelling chambers did not beat
  // that estimate clearly (see GUARD_RATIO)
  const quick = guarded ? brotliAsync(input, level === "balanced" ? GUARD_QUALITY_BALANCED : 9) : null;
  const ratio = level === "balanced" ? GUARD_RATIO_BALANCED : GUARD_RATIO;
  quick?.catch(() => {});
  let smallest = Number.POSITIVE_INFINITY;
  for (const name of r.candidates) {
    if (name === "general" && guarded) continue;
    if (!pending.has(name)) {
      // one modelling chamber at a time, each told the size the earlier ones reached
      start(name, Number.isFinite(smallest) ? smallest : undefined);
      smallest = Math.min(smallest, sizeOf(await pending.get(name)!.catch(() => null)));
    }
  }
  if (guarded && quick) {
    let modelled = Number.POSITIVE_INFINITY;
    for (const name of r.candidates)
      if (name !== "general") modelled = Math.min(modelled, sizeOf(await pending.get(name)!));
    const q9 = (await quick).length;
    if (modelled <= ratio * q9)
      guardNote = `general skipped: ${modelled} B ≤ ${ratio} × brotli-${level === "balanced" ? GUARD_QUALITY_BALANCED : 9} (${q9} B)`;
    else if (q9 >= GUARD_INCOMPRESSIBLE * input.length)
      guardNote = `general skipped: brotli-9 saves under ${Math.round((1 - GUARD_INCOMPRESSIBLE) * 100)} %`;
    else start("general");
  }
  for (const name of r.candidates) {
    const p = pending.get(name);
    if (!p) {
      tried.push({ chamber: name, size: null });
      continue;
    }
    const enc = await p;
    const size = enc ? sizeOf(enc) : null;
    tried.push({ chamber: name, size });
    if (enc && (!best || size! < sizeOf(best.enc))) best = { chamber: name, enc };
  }
  // fast: a typed chamber ran alone (the router's one candidate there is general or a typed
  // chamber); plain zstd -3 too when a sample says it may code smaller (fast-check.ts)
  if (!forced && level === "fast" && best && best.chamber !== "general") {
    const alt = await fastPlainAlternative(input, sizeOf(best.enc));
    if (alt) {
      tried.push({ chamber: "general", size: sizeOf(alt) });
      if (sizeOf(alt) < sizeOf(best.enc)) best = { chamber: "general", enc: alt };
    }
  }
  if (forced && !best) fail("codec_bad_input", `chamber ${forced} cannot encode this input`);
  // never expand: stored fallback (not when the caller forced a chamber)
  if (!forced && (!best || best.enc.payload.length + best.enc.params.length >= input.length)) {
    best = { chamber: "high_entropy", enc: { params: new Uint8Array(0), payload: input } };
  }
  return { best: best!, prof, route: guardNote ? { ...r, reason: `${r.reason}; ${guardNote}` } : r, tried };
}

export async function compressWithReport(bytes: Uint8Array, options: CompressOptions = {}): Promise<CompressReport> {
  const level = checkLevel(options.level);
  if (options.chamber !== undefined && !CHAMBERS.has(options.chamber))
    fail("codec_bad_option", `unknown chamber ${String(options.chamber)}`);
  if (!(bytes instanceof Uint8Array)) fail("codec_bad_input", "input must be bytes");
  // a plain view: Buffer#slice shares memory, Uint8Array#slice copies — chambers rely on the latter
  const input = plain(bytes);
  if (options.chunkSize !== undefined && !(Number.isSafeInteger(options.chunkSize) && options.chunkSize >= 4096))
    fail("codec_bad_option", "chunkSize must be an integer ≥ 4096");
  // none given: inputs ≥ 8 MiB at fast and balanced are cut into chunks coded on every core (window.ts)
  const chunkSize = options.chunkSize ?? autoChunkSize(level, input.length, options.bare === true);
  if (chunkSize !== undefined && input.length > chunkSize && !options.bare) {
    const blocks: Block[] = [];
    let label = "";
    let reason = "";
    let cls = "";
    const cands: CompressReport["candidates"] = [];
    const parts = cutChunks(input, chunkSize, level);
    // chunks are independent: several are coded at once (context mixing on the worker pool)
    const coded = await mapOrdered(
      parts,
      (part) => encodeBlock(part, level, options.chamber, options.declaredType),
      chunkWindow(level),
    );
    for (const [i, { best, prof, route: r, tried }] of coded.entries()) {
      const part = parts[i]!;
      blocks.push({ chamber: chamberId(best.chamber), rawLen: part.length, ...best.enc });
      if (!label) {
        label = `omni/chunked(${r.label})`;
        reason = `${Math.ceil(input.length / chunkSize)} chunks of ≤ ${chunkSize} B, each routed; first: ${r.reason}`;
        cls = prof.data_class;
      }
      for (const t of tried) cands.push({ chamber: t.chamber, bytes: t.size });
    }
    let container = writeFramed(level, blocks, input, true);
    let chamber: CompressReport["chamber"] = "chunked";
    if (container.length > input.length + MAX_OVERHEAD) {
      container = writeFramed(
        level,
        [{ chamber: 0, rawLen: input.length, params: new Uint8Array(0), payload: input }],
        input,
        false,
      );
      chamber = "high_entropy";
    }
    return {
      container,
      level,
      chamber,
      data_class: cls,
      label,
      reason,
      bare: false,
      original_bytes: input.length,
      compressed_bytes: container.length,
      candidates: cands,
    };
  }
  const { best, prof, route: r, tried } = await encodeBlock(input, level, options.chamber, options.declaredType);
  const block: Block = { chamber: chamberId(best.chamber), rawLen: input.length, ...best.enc };
  const container = options.bare ? writeBare(level, block) : writeFramed(level, [block], input, false);
  const lost = tried.filter((t) => t.chamber !== best.chamber && t.size !== null);
  const reason =
    `${r.reason}; ${best.chamber} won` +
    (lost.length ? ` (${lost.map((t) => `${t.chamber} ${t.size} B`).join(", ")} vs ${container.length} B)` : "");
  return {
    container,
    level,
    chamber: best.chamber,
    data_class: prof.data_class,
    label: `omni/${best.chamber}`,
    reason,
    bare: options.bare === true,
    original_bytes: input.length,
    compressed_bytes: container.length,
    candidates: tried.map((t) => ({ chamber: t.chamber, bytes: t.size })),
  };
}

export async function compress(bytes: Uint8Array, options: CompressOptions = {}): Promise<Uint8Array> {
  return (await compressWithReport(bytes, options)).container;
}
