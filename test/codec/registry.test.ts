import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  CHAMBER_LIST,
  CHAMBER_NAMES,
  CHAMBERS,
  COMPRESS_CHAMBERS,
  chamberById,
  chamberId,
  SLOW_DECODE_CHAMBERS,
} from "../../src/codec/chambers/registry.js";
import { LEVELS } from "../../src/codec/chambers/types.js";
import { ROUTE_PATHS, routeProfile } from "../../src/codec/router/index.js";
import { DATA_CLASSES, type Feats } from "../../src/codec/router/profile.js";
import { BARREL_CHAMBERS } from "../../src/engine/barrel.js";
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

  it("the compress barrel's chambers and the router's paths come from the registry's entries, in id order", () => {
    // the engine's compress barrel (docs/engine-api.md): the chambers of the current format
    expect(COMPRESS_CHAMBERS).toEqual([
      "high_entropy",
      "general",
      "text",
      "json_keys",
      "json_residual",
      "zrw",
      "float",
      "delta",
    ]);
    expect(BARREL_CHAMBERS.compress).toEqual(COMPRESS_CHAMBERS);
    expect(BARREL_CHAMBERS.decompress).toEqual([...CHAMBER_NAMES]);
    // id order, a subset of the compress chambers: json_keys is written only when asked for
    expect(ROUTE_PATHS).toEqual(CHAMBER_NAMES.filter((n) => (ROUTE_PATHS as readonly string[]).includes(n)));
    expect(COMPRESS_CHAMBERS.filter((n) => !(ROUTE_PATHS as readonly string[]).includes(n))).toEqual(["json_keys"]);
  });
});

/**
 * "The chamber list is stated once" (issue #24 item 6): a list of chamber names written by hand
 * beside the registry drifts from it (a chamber added to the registry and missing from the copy).
 * This scan fails on any array literal holding three or more chamber names, or an object literal
 * keyed by three or more, in src/codec or src/engine outside chambers/registry.ts. The router's
 * candidate lists (`cands = […]`, its decisions, typed by ROUTE_PATHS) are not lists of the chambers.
 */
describe("no hand-written chamber list beside the registry", () => {
  const root = path.resolve(import.meta.dirname, "../..");
  const names = new Set<string>(CHAMBER_NAMES);
  function* sources(dir: string): Generator<string> {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) yield* sources(p);
      else if (/\.(ts|mts|mjs|js)$/.test(e.name)) yield p;
    }
  }
  /** the hand lists in `text`: bracketed or braced literals naming three or more chambers */
  function handLists(text: string): string[] {
    const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:])\/\/.*$/gm, "$1");
    const found: string[] = [];
    for (const m of code.matchAll(/\[[^[\]]*\]/g)) {
      const before = code.slice(Math.max(0, (m.index ?? 0) - 40), m.index);
      if (/\bcands\s*=[^;]*$/.test(before)) continue;
      const listed = new Set(
        [...m[0].matchAll(/["'`]([a-z0-9_-]+)["'`]/g)].map((x) => x[1]!).filter((x) => names.has(x)),
      );
      if (listed.size >= 3) found.push(m[0].replace(/\s+/g, " "));
    }
    for (const m of code.matchAll(/\{[^{}]*\}/g)) {
      const keys = [...m[0].matchAll(/(?:^|[{,\s])["']?([a-z0-9_-]+)["']?\s*:/g)].map((x) => x[1]!);
      if (new Set(keys.filter((k) => names.has(k))).size >= 3) found.push(m[0].replace(/\s+/g, " "));
    }
    return found;
  }

  it("finds a hand list when there is one (the scan itself works)", () => {
    expect(handLists('export const X = ["zrw", "float", "text"];')).toHaveLength(1);
    expect(handLists("const X = new Set([\n  'general',\n  'json_keys',\n  'delta',\n]);")).toHaveLength(1);
    expect(handLists('const W = { zrw: 1, "high_entropy": 2, float: 3 };')).toHaveLength(1);
    expect(handLists('cands = level === "max" ? ["delta", "zrw", "general"] : ["general"];')).toEqual([]);
    expect(handLists('// ["zrw", "float", "text"]\nconst two = ["zrw", "float"];')).toEqual([]);
  });

  it("src/codec and src/engine state no chamber list but the registry's", () => {
    const registry = path.join(root, "src/codec/chambers/registry.ts");
    const hits: string[] = [];
    for (const dir of ["src/codec", "src/engine"])
      for (const file of sources(path.join(root, dir))) {
        if (file === registry) continue;
        for (const h of handLists(fs.readFileSync(file, "utf8"))) hits.push(`${path.relative(root, file)}: ${h}`);
      }
    expect(hits).toEqual([]);
  });
});
