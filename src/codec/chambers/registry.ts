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
 * Every chamber, in id order: a chamber's id in a container is its index here (stable, part of the
 * format: append only, never reorder). This is the one chamber list; CHAMBER_NAMES, ChamberName,
 * chamber ids and the engine's slow-decode set are derived from it.
 */
export const CHAMBER_LIST = [
  highEntropy,
  general,
  text,
  jsonKeys,
  jsonResidual,
  zrw,
  float,
  delta,
  zrwV5,
  zrwV5Chunked,
  zrwV5Delta,
  zrwV5Stride8,
  zrwV5Stride16,
  zrwV5Stride32,
  zrwV5DarkAttractor,
  zrwV5DarkDetractor,
  legacy,
] as const;

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

export const CHAMBERS: ReadonlyMap<ChamberName, Chamber<ChamberName>> = new Map(CHAMBER_LIST.map((c) => [c.name, c]));

export function chamberById(id: number): Chamber<ChamberName> | undefined {
  return CHAMBER_LIST[id];
}
