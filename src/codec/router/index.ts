import { ROUTED_CHAMBERS } from "../chambers/registry.js";
import type { ChamberName, Level } from "../chambers/types.js";
import type { Profile } from "./profile.js";

/**
 * The router's paths: every chamber routeProfile can choose (its candidates are typed by this
 * list, so it can name no other), in chamber-id order. Derived from the registry's entries (those
 * with `use: "route"`, chambers/registry.ts), which state the chamber list once; the engine's
 * PATHS and the suite's products come from here.
 */
export const ROUTE_PATHS = ROUTED_CHAMBERS;
export type RoutePath = (typeof ROUTE_PATHS)[number];

export interface Route {
  /** the chamber tried first */
  chamber: ChamberName;
  /** every chamber tried, in order; the smallest output wins */
  candidates: ChamberName[];
  /** short label, e.g. "omni/zrw" */
  label: string;
  reason: string;
}

/**
 * Candidates per data class and level. `max` adds the general chamber (best of brotli-11 and
 * xz-9) to every class so the result is never larger than those backends; `balanced` keeps only
 * chambers that decode fast (no context mixing, no JSON split; the general chamber there is one
 * backend chosen by the data class: brotli-11, xz or zstd -19, see general/index.ts); `fast`
 * tries one chamber (general = zstd -3; int32 arrays as byte lanes through it).
 *
 * At max the typed arrays (int32, timestamps, float64, float32) also try the text chamber's
 * context mixing on their bytes. On the whole corpus (issue #24, 2026-11-28) it beat both the
 * typed chamber and the general one on 4 of its 19 typed files, by 7-20 %
 * (alp_food_prices_tw.f64 173,727 → 138,511 B, book12_token_rank_ids.i32 283,547 → 269,522,
 * city_temp_x10.i32 105,272 → 98,145, elf_City-temp.f32 79,756 → 73,814), and costs about 1-2
 * CPU-s per MB where it loses; the general chamber (brotli-11 and xz) is then skipped more often.
 */
/** data classes of typed arrays, which also try the text chamber at max (see above) */
const TYPED_MAX: ReadonlySet<string> = new Set(["int32", "timestamps", "float64", "float32"]);

export function routeProfile(p: Profile, level: Level): Route {
  const f = p.feats;
  let cands: RoutePath[];
  let why: string;
  switch (p.data_class) {
    case "empty":
      cands = ["high_entropy"];
      why = "empty input";
      break;
    case "int32":
      // fast: zrw's one-pass token coder (about as fast as byte lanes + zstd -3, and 21 % smaller
      // on the bench's int32 series)
      cands = ["zrw", "general"];
      why = `int32 array (${pct(f.int32Small)} of values within ±2^24)`;
      break;
    case "timestamps":
      cands = ["delta", "zrw", "general"];
      why = `monotonic int32 sequence (${pct(f.monotonic)} non-decreasing steps)`;
      break;
    case "float64":
    case "float32":
      cands = ["float", "general"];
      why = `${p.data_class} array (${pct(f.decimal)} of sampled values are short decimals)`;
      break;
    case "json":
      // balanced: general alone (brotli-11): json_residual's rebuild decodes at 12-30 MB/s, under
      // balanced's 100 MB/s, and cost 0.2-0.5 CPU-s per MB for a win of ~2 % where it won
      cands = level === "max" ? ["json_residual", "general"] : ["general"];
      why = "JSON document (parses); keys and structure split from column-grouped values";
      break;
    case "csv":
    case "text":
      cands = level === "max" ? ["text", "general"] : ["general"];
      why = `${p.data_class === "csv" ? "CSV / delimited" : "UTF-8"} text (${pct(f.printable)} printable)`;
      break;
    case "high_entropy":
      // stored first; general too, since weakly compressed formats (PNG, PDF) still shrink and
      // brotli/xz expand incompressible data by only a few bytes. fast: general alone (zstd -3
      // reads incompressible data at ~1 GB/s; the stored chamber is the fallback when it does not
      // shrink): −10 KB on the bench's PNG
      cands = level === "fast" ? ["general"] : ["high_entropy", "general"];
      why = `already compressed or random (order-0 entropy ${f.h0} bits/byte${f.magic ? `, ${f.magic} signature` : ""})`;
      break;
    default:
      cands = level === "max" ? ["general", "text"] : ["general"];
      why = `binary data${f.stride ? ` with a ${f.stride}-byte record stride` : ""}`;
  }
  // max: context mixing on a typed array's bytes too, after its typed chamber (TYPED_MAX)
  if (level === "max" && TYPED_MAX.has(p.data_class))
    cands = [...cands.filter((c) => c !== "general"), "text", "general"];
  if (level === "fast") cands = cands.slice(0, 1);
  if (level === "balanced") cands = cands.filter((c) => c !== "text");
  if (cands.length === 0) cands = ["general"];
  const chamber = cands[0]!;
  return { chamber, candidates: cands, label: `omni/${chamber}`, reason: why };
}

const pct = (x: number): string => `${Math.round(x * 100)}%`;
