import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHAMBER_NAMES, COMPRESS_CHAMBERS } from "../../src/codec/index.js";
import type { Db } from "../../src/db/database.js";
import { BARREL_CHAMBERS, EngineService } from "../../src/engine/service.js";
import { engineStore } from "../../src/engine/store.js";
import { ENGINES, freshDatabase } from "../support/databases.js";

describe.each(ENGINES)("barrel storage (%s)", (engine) => {
  let db: Db;
  let svc: EngineService;
  beforeAll(async () => {
    db = (await freshDatabase(engine)).db;
    svc = new EngineService(
      db.kysely,
      { bodyLimitBytes: 1 << 20, slowLimitBytes: 1 << 16, outputLimitBytes: 1 << 20 },
      "k",
      {
        error: () => {},
      },
    );
    await svc.init();
    await svc.init(); // idempotent
  });
  afterAll(() => db.close());

  it("starts at rest with zero counts", async () => {
    const b = await svc.barrel();
    expect(b.compress).toMatchObject({
      barrel: "omni-compress",
      rest: "zrw",
      chamber: "general",
      fires: 0,
      rotates: 0,
    });
    expect(b.decompress).toMatchObject({
      barrel: "omni-decompress",
      rest: "zrw",
      chamber: "general",
      fires: 0,
      rotates: 0,
    });
    expect(Object.values(b.compress.counts).every((c) => c === 0)).toBe(true);
    expect(Object.keys(b.decompress.counts)).toHaveLength(17);
  });

  it("counts fires, rotations and chambers with single-statement increments", async () => {
    const seq = ["zrw", "zrw", "text", "general", "general", "zrw"];
    for (const c of seq) await engineStore.fire(db.kysely, "compress", [c]);
    await engineStore.fire(db.kysely, "decompress", ["float", "float", "text"]); // a chunked container
    const b = await svc.barrel();
    expect(b.compress).toMatchObject({ fires: 6, rotates: 4, chamber: "zrw" });
    expect(b.compress.counts).toMatchObject({ zrw: 3, text: 1, general: 2, float: 0 });
    expect(b.decompress).toMatchObject({ fires: 1, rotates: 1, chamber: "text" });
    expect(b.decompress.counts).toMatchObject({ float: 1, text: 1 });
  });

  it("loses no count under concurrent fires", async () => {
    const before = await svc.barrel();
    const chambers = ["zrw", "float", "delta", "text"];
    await Promise.all(
      Array.from({ length: 80 }, (_, i) =>
        db.kysely.transaction().execute((trx) => engineStore.fire(trx, "compress", [chambers[i % 4] as string])),
      ),
    );
    const after = await svc.barrel();
    expect(after.compress.fires - before.compress.fires).toBe(80);
    for (const c of chambers) expect((after.compress.counts[c] ?? 0) - (before.compress.counts[c] ?? 0)).toBe(20);
    expect(after.compress.rotates - before.compress.rotates).toBeGreaterThan(0);
    expect(after.compress.rotates - before.compress.rotates).toBeLessThanOrEqual(80);
  });
});

describe("barrel chamber lists", () => {
  it("are the codec library's chambers, in chamber-id order (stated once, in the codec)", () => {
    expect(BARREL_CHAMBERS.decompress).toEqual([...CHAMBER_NAMES]);
    expect([...BARREL_CHAMBERS.compress].sort()).toEqual([...COMPRESS_CHAMBERS].sort());
    const ids = BARREL_CHAMBERS.compress.map((c) => CHAMBER_NAMES.indexOf(c as (typeof CHAMBER_NAMES)[number]));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
  });
});
