import type { Kysely } from "kysely";
import { CHAMBER_NAMES, COMPRESS_CHAMBERS } from "../codec/index.js";
import type { Database } from "../db/schema.js";
import { engineStore } from "./store.js";
import type { Direction } from "./tables.js";

/**
 * The barrels: one per direction, fired by every compress / decompress with the chambers it used
 * (counts per chamber, the current chamber, rotations). The chamber lists are the codec's own
 * (src/codec/chambers): every chamber the decoder knows, and the ones the router may choose.
 */

/** Barrel chambers per direction, in the codec's chamber-id order. */
export const BARREL_CHAMBERS: Record<Direction, readonly string[]> = {
  compress: [...COMPRESS_CHAMBERS], // in id order: derived from the registry's entries
  decompress: [...CHAMBER_NAMES],
};
export const BARREL_NAMES: Record<Direction, string> = { compress: "omni-compress", decompress: "omni-decompress" };
export const BARREL_REST = "zrw";
/** Current chamber before the first fire: general, the chamber that accepts any input. */
export const BARREL_INITIAL = "general";

export interface BarrelState {
  barrel: string;
  chambers: string[];
  rest: string;
  chamber: string;
  fires: number;
  rotates: number;
  counts: Record<string, number>;
}

export class Barrels {
  constructor(private readonly db: Kysely<Database>) {}

  async init(): Promise<void> {
    for (const direction of ["compress", "decompress"] as const) {
      await engineStore.ensureBarrel(this.db, direction, BARREL_NAMES[direction], BARREL_INITIAL);
    }
  }

  async fire(direction: Direction, chambers: string[]): Promise<void> {
    await this.db.transaction().execute((trx) => engineStore.fire(trx, direction, chambers));
  }

  async state(): Promise<Record<Direction, BarrelState>> {
    const [rows, counts] = await Promise.all([engineStore.barrels(this.db), engineStore.counts(this.db)]);
    const state = {} as Record<Direction, BarrelState>;
    for (const direction of ["compress", "decompress"] as const) {
      const row = rows.find((r) => r.direction === direction);
      const c: Record<string, number> = {};
      for (const name of BARREL_CHAMBERS[direction]) c[name] = 0;
      for (const r of counts) if (r.direction === direction) c[r.chamber] = Number(r.count);
      state[direction] = {
        barrel: row?.barrel ?? BARREL_NAMES[direction],
        chambers: [...BARREL_CHAMBERS[direction]],
        rest: BARREL_REST,
        chamber: row?.chamber ?? BARREL_INITIAL,
        fires: Number(row?.fires ?? 0),
        rotates: Number(row?.rotates ?? 0),
        counts: c,
      };
    }
    return state;
  }
}
