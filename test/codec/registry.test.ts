import { describe, expect, it } from "vitest";
import {
  CHAMBER_LIST,
  CHAMBER_NAMES,
  CHAMBERS,
  chamberById,
  chamberId,
  SLOW_DECODE_CHAMBERS,
} from "../../src/codec/chambers/registry.js";
import { COMPRESS_CHAMBERS, LEVELS } from "../../src/codec/chambers/types.js";
import { ROUTE_PATHS, routeProfile } from "../../src/codec/router/index.js";
import { DATA_CLASSES, type Feats } from "../../src/codec/router/profile.js";
import { PATHS } from "../../src/engine/descriptors.js";

/**
 * The chamber list is stated once (registry.ts CHAMBER_LIST); everything else is derived from it.
 * A chamber's id is its index there and is part of the container format, so the order is pinned
 * here: a reorder or an insertion in the middle fails this test (append only).
 */
const FORMAT_IDS = [
  "high_entropy",
  "general",
  "text",
  "json_keys",
  "json_residual",
  "zrw",
  "float",
  "delta",
  "zrw-v5",
  "zrw-v5-chunked",
  "zrw-v5-delta",
  "zrw-v5-stride8",
  "zrw-v5-stride16",
  "zrw-v5-stride32",
  "zrw-v5-dark-attractor",
  "zrw-v5-dark-detractor",
  "legacy",
];

describe("chamber registry", () => {
  it("id = index in CHAMBER_LIST, names derived from the chamber objects", () => {
    expect(CHAMBER_NAMES).toEqual(CHAMBER_LIST.map((c) => c.name));
    CHAMBER_LIST.forEach((c, i) => {
      expect(chamberId(c.name)).toBe(i);
      expect(chamberById(i)).toBe(c);
      expect(CHAMBERS.get(c.name)).toBe(c);
    });
    expect(chamberById(CHAMBER_LIST.length)).toBeUndefined();
    expect(new Set(CHAMBER_NAMES).size).toBe(CHAMBER_NAMES.length);
  });

  it("container ids stay where earlier releases put them (append only)", () => {
    expect(CHAMBER_NAMES.slice(0, FORMAT_IDS.length)).toEqual(FORMAT_IDS);
  });

  it("slow-decode chambers come from each chamber's own property", () => {
    expect([...SLOW_DECODE_CHAMBERS].sort()).toEqual(["json_keys", "json_residual", "text"]);
    for (const c of CHAMBER_LIST) expect(SLOW_DECODE_CHAMBERS.has(c.name)).toBe(c.slowDecode);
  });

  it("the router's paths are exactly the chambers routeProfile can choose; the engine's PATHS are them", () => {
    const feats = {
      bytes: 1000,
      h0: 4,
      utf8: true,
      printable: 1,
      json: false,
      csv: false,
      magic: null,
      int32Small: 0,
      monotonic: 0,
      float64Plausible: 0,
      float32Plausible: 0,
      decimal: 0,
      stride: 0,
      declared: null,
    } as unknown as Feats;
    const chosen = new Set<string>();
    for (const data_class of DATA_CLASSES)
      for (const level of LEVELS)
        for (const c of routeProfile({ path: "", data_class, feats }, level).candidates) chosen.add(c);
    expect([...chosen].sort()).toEqual([...ROUTE_PATHS].sort());
    expect(PATHS).toBe(ROUTE_PATHS);
    for (const p of ROUTE_PATHS) {
      expect(CHAMBER_NAMES).toContain(p);
      expect(COMPRESS_CHAMBERS).toContain(p);
    }
  });
});
