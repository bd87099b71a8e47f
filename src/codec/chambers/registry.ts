import { delta } from "./delta/index.js";
import { float } from "./float/index.js";
import { general } from "./general/index.js";
import { highEntropy } from "./high_entropy/index.js";
import { jsonKeys, jsonResidual } from "./json/index.js";
import { legacy } from "./legacy/index.js";
import { text } from "./text/index.js";
import type { Chamber } from "./types.js";
import {
  zrw,
  zrwV5,
  zrwV5Chunked,
  zrwV5DarkAttractor,
  zrwV5DarkDetractor,
  zrwV5Delta,
  zrwV5Stride8,
  zrwV5Stride16,
  zrwV5Stride32,
} from "./zrw/index.js";

/**
 * The one chamber list: every chamber, in id order, with what compression does with it. A chamber's
 * id in a container is its index here (stable, part of the format: append only, never reorder).
 * Everything else is derived from these entries: CHAMBER_LIST, CHAMBER_NAMES, ChamberName, chamber
 * ids, ROUTED_CHAMBERS (the router's paths), COMPRESS_CHAMBERS (the engine's compress barrel) and,
 * from each chamber's own `slowDecode`, the engine's slow-decode set. A source scan in
 * test/codec/registry.test.ts fails when a list of chamber names is written by hand anywhere else in
 * src/codec or src/engine.
 *
 * `use`, what compression does with the chamber:
 * - "route": the router may choose it (router/index.ts types its candidates by these);
 * - "ask": compression writes it only when a caller names it (json_keys);
 * - "read": kept to decode containers of earlier releases (the zrw-v5 family, which a caller may
 *   still name, and legacy).
 */
const ENTRIES = [
  { chamber: highEntropy, use: "route" },
  { chamber: general, use: "route" },
  { chamber: text, use: "route" },
  { chamber: jsonKeys, use: "ask" },
  { chamber: jsonResidual, use: "route" },
  { chamber: zrw, use: "route" },
  { chamber: float, use: "route" },
  { chamber: delta, use: "route" },
  { chamber: zrwV5, use: "read" },
  { chamber: zrwV5Chunked, use: "read" },
  { chamber: zrwV5Delta, use: "read" },
  { chamber: zrwV5Stride8, use: "read" },
  { chamber: zrwV5Stride16, use: "read" },
  { chamber: zrwV5Stride32, use: "read" },
  { chamber: zrwV5DarkAttractor, use: "read" },
  { chamber: zrwV5DarkDetractor, use: "read" },
  { chamber: legacy, use: "read" },
] as const satisfies readonly RegistryEntry[];

interface RegistryEntry {
  readonly chamber: Chamber;
  readonly use: "route" | "ask" | "read";
}

type ChambersOf<T extends readonly RegistryEntry[]> = { readonly [K in keyof T]: T[K]["chamber"] };
/** every chamber, in id order (index = chamber id) */
export const CHAMBER_LIST = ENTRIES.map((e) => e.chamber) as unknown as ChambersOf<typeof ENTRIES>;

type NamesOf<T extends readonly Chamber[]> = { readonly [K in keyof T]: T[K]["name"] };
export type ChamberName = (typeof CHAMBER_LIST)[number]["name"];
/** chamber names in id order (index = chamber id) */
export const CHAMBER_NAMES = CHAMBER_LIST.map((c) => c.name) as unknown as NamesOf<typeof CHAMBER_LIST>;
/** chamber id = index in CHAMBER_LIST (stable, part of the format) */
export const chamberId = (name: ChamberName): number => CHAMBER_NAMES.indexOf(name);

/** chambers that may decode with context mixing (each chamber's `slowDecode`) */
export const SLOW_DECODE_CHAMBERS: ReadonlySet<ChamberName> = new Set(
  CHAMBER_LIST.filter((c) => c.slowDecode).map((c) => c.name),
);

/** the chambers the router may choose (`use: "route"`), in id order */
export type RoutedChamber = Extract<(typeof ENTRIES)[number], { use: "route" }>["chamber"]["name"];
export const ROUTED_CHAMBERS: readonly RoutedChamber[] = ENTRIES.filter((e) => e.use === "route").map(
  (e) => e.chamber.name as RoutedChamber,
);

/**
 * chambers of the current format (`use` "route" or "ask"), in id order: what compression writes;
 * the engine's compress barrel counts these
 */
export const COMPRESS_CHAMBERS: readonly ChamberName[] = ENTRIES.filter((e) => e.use !== "read").map(
  (e) => e.chamber.name,
);

export const CHAMBERS: ReadonlyMap<ChamberName, Chamber<ChamberName>> = new Map(CHAMBER_LIST.map((c) => [c.name, c]));

export function chamberById(id: number): Chamber<ChamberName> | undefined {
  return CHAMBER_LIST[id];
}
