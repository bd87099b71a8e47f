import { delta } from "./delta/index.js";
import { float } from "./float/index.js";
import { general } from "./general/index.js";
import { highEntropy } from "./high_entropy/index.js";
import { jsonKeys, jsonResidual } from "./json/index.js";
import { legacy } from "./legacy/index.js";
import { text } from "./text/index.js";
import { CHAMBER_NAMES, type Chamber, type ChamberName } from "./types.js";
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

/** stride hint for the general chamber, set by the router for the current call */

const ALL: Chamber[] = [
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
];

export const CHAMBERS: ReadonlyMap<ChamberName, Chamber> = new Map(ALL.map((c) => [c.name, c]));

export function chamberById(id: number): Chamber | undefined {
  const name = CHAMBER_NAMES[id];
  return name === undefined ? undefined : CHAMBERS.get(name);
}
