import { sql } from "kysely";
import { nowIso } from "../db/database.js";
import type { Executor } from "../db/executor.js";
import { paged } from "../db/paginate.js";
import type { BarrelCountRow, BarrelRow, Direction, PrintRow } from "./tables.js";

/** Data access for the engine's barrel state and prints. No rules here, only queries. */
export const engineStore = {
  /** Creates the barrel row of a direction if it does not exist (idempotent, race-free). */
  async ensureBarrel(db: Executor, direction: Direction, barrel: string, chamber: string): Promise<void> {
    await db
      .insertInto("engine_barrels")
      .values({ direction, barrel, chamber, fires: 0, rotates: 0, updated_at: nowIso() })
      .onConflict((oc) => oc.column("direction").doNothing())
      .execute();
  },

  /**
   * One fire, as single-statement increments (no read-modify-write, so concurrent fires on either
   * engine never lose a count): fires + 1, rotates + 1 when the chamber changes, the new current
   * chamber, and + 1 for each chamber used.
   */
  async fire(db: Executor, direction: Direction, chambers: string[]): Promise<void> {
    const last = chambers[chambers.length - 1];
    if (last === undefined) return;
    await db
      .updateTable("engine_barrels")
      .set({
        fires: sql`fires + 1`,
        rotates: sql`rotates + case when chamber = ${last} then 0 else 1 end`,
        chamber: last,
        updated_at: nowIso(),
      })
      .where("direction", "=", direction)
      .execute();
    for (const chamber of new Set(chambers)) {
      await db
        .insertInto("engine_barrel_counts")
        .values({ direction, chamber, count: 1 })
        .onConflict((oc) =>
          oc.columns(["direction", "chamber"]).doUpdateSet({ count: sql`engine_barrel_counts.count + 1` }),
        )
        .execute();
    }
  },

  barrels(db: Executor): Promise<BarrelRow[]> {
    return db.selectFrom("engine_barrels").selectAll().execute();
  },

  counts(db: Executor): Promise<BarrelCountRow[]> {
    return db.selectFrom("engine_barrel_counts").selectAll().execute();
  },

  async insertPrint(db: Executor, row: PrintRow): Promise<void> {
    await db.insertInto("engine_prints").values(row).execute();
  },

  /** One identity's prints, newest first. */
  async printsOf(
    db: Executor,
    identityId: string,
    page: { limit: number; offset: number },
  ): Promise<{ total: number; items: PrintRow[] }> {
    const base = db.selectFrom("engine_prints").where("identity_id", "=", identityId);
    return paged<PrintRow>(
      base,
      [
        ["at", "desc"],
        ["id", "desc"],
      ],
      page,
    );
  },
};
