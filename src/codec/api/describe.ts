/** describe(): the codec's descriptor (versions, levels, chambers) for GET endpoints and docs. */
import { CHAMBER_NAMES, CHAMBERS, type ChamberName, chamberId } from "../chambers/registry.js";
import { LEVELS, type Level } from "../chambers/types.js";
import { CODEC_VERSION, FORMAT_VERSION } from "./shared.js";

/** descriptor of the engine for GET endpoints and docs */
export function describe(): {
  version: string;
  format_version: number;
  levels: readonly Level[];
  chambers: { name: ChamberName; id: number; summary: string }[];
} {
  return {
    version: CODEC_VERSION,
    format_version: FORMAT_VERSION,
    levels: LEVELS,
    chambers: CHAMBER_NAMES.map((name) => ({ name, id: chamberId(name), summary: CHAMBERS.get(name)!.summary })),
  };
}
