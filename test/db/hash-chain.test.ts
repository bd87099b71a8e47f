import { createHash } from "node:crypto";
import { Migrator } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditStore } from "../../src/admin/store.js";
import { Catalog } from "../../src/catalog/service.js";
import type { Db } from "../../src/db/database.js";
import {
  append,
  type ChainEntry,
  canonicalJson,
  entryHash,
  entryPreimage,
  GENESIS_HASH,
  head,
  list,
  listAll,
  verifyChain,
} from "../../src/db/hash-chain.js";
import { migrateToLatest } from "../../src/db/migrate.js";
import { migrations } from "../../src/db/migrations/index.js";
import { OrderService } from "../../src/orders/service.js";
import { ENGINES, freshDatabase } from "../support/databases.js";

const sha = (s: string) => createHash("sha256").update(s, "utf8").digest("hex");

function chainOf(n: number, chain = "t"): ChainEntry[] {
  const out: ChainEntry[] = [];
  let prev = GENESIS_HASH;
  for (let seq = 1; seq <= n; seq++) {
    const e = { chain, seq, at: `2026-01-0${seq}T00:00:00.000Z`, kind: "k", body: { n: seq, x: "y" }, prev_hash: prev };
    const hash = entryHash(e);
    out.push({ ...e, hash });
    prev = hash;
  }
  return out;
}

describe("canonical JSON and the entry hash (pure)", () => {
  it("sorts keys at every depth, writes no whitespace, drops undefined keys and round-trips", () => {
    const v = { b: [3, { z: 1, a: "é\n" }], a: null, c: true, d: undefined, "": -0.5 };
    const text = canonicalJson(v);
    expect(text).toBe('{"":-0.5,"a":null,"b":[3,{"a":"é\\n","z":1}],"c":true}');
    expect(canonicalJson(JSON.parse(text))).toBe(text);
    expect(canonicalJson({ at: new Date("2026-01-01T00:00:00Z") })).toBe('{"at":"2026-01-01T00:00:00.000Z"}');
  });

  it("refuses values without one JSON form", () => {
    expect(() => canonicalJson({ a: Number.NaN })).toThrow(/finite/);
    expect(() => canonicalJson([1, Number.POSITIVE_INFINITY])).toThrow(/finite/);
    expect(() => canonicalJson({ a: 1n })).toThrow(/bigint/);
    expect(() => canonicalJson([undefined])).toThrow(/undefined/);
    expect(() => canonicalJson({ f: () => 1 })).toThrow(/function/);
  });

  it("hashes exactly the documented serialization (a vector written out by hand)", () => {
    const e = {
      chain: "olympiad",
      seq: 1,
      at: "2026-03-01T12:00:00.000Z",
      kind: "result",
      body: { z: [true, null], a: "x" },
      prev_hash: GENESIS_HASH,
    };
    const preimage = `{"at":"2026-03-01T12:00:00.000Z","body":{"a":"x","z":[true,null]},"chain":"olympiad","kind":"result","prev_hash":"${"0".repeat(64)}","seq":1}`;
    expect(entryPreimage(e)).toBe(preimage);
    expect(entryHash(e)).toBe(sha(preimage));
    expect(GENESIS_HASH).toMatch(/^0{64}$/);
  });
});

describe("verifyChain (pure)", () => {
  it("accepts an intact chain and an empty one", () => {
    const v = verifyChain(chainOf(5));
    expect(v).toEqual({ ok: true, entries: 5, head: { chain: "t", seq: 5, hash: chainOf(5)[4]?.hash } });
    expect(verifyChain([])).toMatchObject({ ok: true, entries: 0, head: { seq: 0, hash: GENESIS_HASH } });
  });

  it("names the first broken seq: changed body, removed, reordered, relinked, renamed, foreign", () => {
    const changed = chainOf(5);
    (changed[2] as ChainEntry).body = { n: 99, x: "y" };
    expect(verifyChain(changed)).toMatchObject({ ok: false, seq: 3, reason: expect.stringMatching(/hash/) });

    const removed = chainOf(5);
    removed.splice(1, 1);
    expect(verifyChain(removed)).toMatchObject({ ok: false, seq: 2, reason: expect.stringMatching(/missing/) });

    const reordered = chainOf(5);
    [reordered[1], reordered[2]] = [reordered[2] as ChainEntry, reordered[1] as ChainEntry];
    expect(verifyChain(reordered)).toMatchObject({ ok: false, seq: 2 });

    // A forger who recomputes the changed entry's hash still breaks the next link.
    const rehashed = chainOf(5);
    const e3 = rehashed[2] as ChainEntry;
    e3.body = { n: 0, x: "y" };
    e3.hash = entryHash(e3);
    expect(verifyChain(rehashed)).toMatchObject({ ok: false, seq: 4, reason: expect.stringMatching(/prev_hash/) });

    const firstLink = chainOf(2);
    (firstLink[0] as ChainEntry).prev_hash = "1".repeat(64);
    expect(verifyChain(firstLink)).toMatchObject({ ok: false, seq: 1 });

    expect(verifyChain(chainOf(3), { chain: "other" })).toMatchObject({ ok: false, seq: 1, reason: /chain/ });
    expect(verifyChain([...chainOf(1), null])).toMatchObject({ ok: false, seq: 2 });
    const floaty = chainOf(1);
    (floaty[0] as ChainEntry).body = { n: Number.NaN };
    expect(verifyChain(floaty)).toMatchObject({ ok: false, seq: 1, reason: /canonical/ });
  });
});

describe.each(ENGINES)("hash chain in the database (%s)", (engine) => {
  let db: Db;
  beforeAll(async () => {
    db = (await freshDatabase(engine)).db;
  });
  afterAll(() => db.close());

  it("appends, lists and reads the head; chains are independent", async () => {
    expect(await head(db.kysely, "one")).toEqual({ chain: "one", seq: 0, hash: GENESIS_HASH });
    const a = await append(db.kysely, "one", "k", { b: 2, a: 1 });
    const b = await append(db.kysely, "one", "k", { c: [1, 2] });
    const other = await append(db.kysely, "two", "k", { only: true });
    expect(a).toMatchObject({ chain: "one", seq: 1, prev_hash: GENESIS_HASH, body: { a: 1, b: 2 } });
    expect(b).toMatchObject({ seq: 2, prev_hash: a.hash });
    expect(other).toMatchObject({ seq: 1, prev_hash: GENESIS_HASH });
    const stored = await db.kysely.selectFrom("chain_entries").select("body").where("chain", "=", "one").execute();
    expect(stored.map((r) => r.body)).toEqual(['{"a":1,"b":2}', '{"c":[1,2]}']);
    expect(await list(db.kysely, "one")).toEqual([a, b]);
    expect(await list(db.kysely, "one", { after: 1 })).toEqual([b]);
    expect(await list(db.kysely, "one", { limit: 1 })).toEqual([a]);
    expect(await head(db.kysely, "one")).toEqual({ chain: "one", seq: 2, hash: b.hash });
    expect(verifyChain(await listAll(db.kysely, "one", 1))).toMatchObject({ ok: true, entries: 2 });
    await expect(append(db.kysely, "Bad Name", "k", {})).rejects.toThrow(/chain name/);
  });

  it("20 concurrent appends: seq 1..20, no fork, the chain verifies", async () => {
    const made = await Promise.all(
      Array.from({ length: 20 }, (_, i) => append(db.kysely, "race", "k", { i, at: Date.now() })),
    );
    expect(made.map((e) => e.seq).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    const all = await listAll(db.kysely, "race");
    expect(all.map((e) => e.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(new Set(all.map((e) => e.prev_hash)).size).toBe(20);
    expect(verifyChain(all)).toMatchObject({ ok: true, entries: 20 });
    expect(await head(db.kysely, "race")).toMatchObject({ seq: 20, hash: all[19]?.hash });
  });

  it("lives inside the caller's transaction: a rollback leaves no entry and the head unchanged", async () => {
    const before = await head(db.kysely, "txn");
    await expect(
      db.kysely.transaction().execute(async (trx) => {
        await append(trx, "txn", "k", { a: 1 });
        throw new Error("caller fails");
      }),
    ).rejects.toThrow("caller fails");
    expect(await head(db.kysely, "txn")).toEqual(before);
    await expect(
      append(db.kysely, "txn", "k", { a: 2 }, { guard: async () => Promise.reject(new Error("guard says no")) }),
    ).rejects.toThrow("guard says no");
    const e = await append(db.kysely, "txn", "k", { a: 3 }, { guard: async (_t, h) => expect(h.seq).toBe(0) });
    expect(e.seq).toBe(1);
  });

  it("is append-only in the database itself", async () => {
    await append(db.kysely, "locked", "k", { a: 1 });
    await expect(
      db.kysely.updateTable("chain_entries").set({ body: "{}" }).where("chain", "=", "locked").execute(),
    ).rejects.toThrow(/append-only/);
    await expect(db.kysely.deleteFrom("chain_entries").where("chain", "=", "locked").execute()).rejects.toThrow(
      /append-only/,
    );
    expect(await list(db.kysely, "locked")).toHaveLength(1);
  });

  it("keeps the audit log on chain `audit`: every audit() is an entry, and the log verifies", async () => {
    const orders = new OrderService(db.kysely, new Catalog(), "http://lab.test", "k".repeat(64));
    await orders.audit("admin:abc", "order.revoked", "ord_1", { reason: "test", n: 1 });
    await db.kysely.transaction().execute(async (trx) => {
      await orders.audit("admin:abc", "claim.rejected", "clm_1", { reason: "in a transaction" }, trx);
    });
    await expect(
      db.kysely.transaction().execute(async (trx) => {
        await orders.audit("admin:abc", "claim.rejected", "clm_2", {}, trx);
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    const entries = await listAll(db.kysely, "audit");
    expect(entries.map((e) => (e.body as { subject: string }).subject)).toEqual(["ord_1", "clm_1"]);
    expect(entries[0]).toMatchObject({
      kind: "audit",
      body: { actor: "admin:abc", action: "order.revoked", detail: { reason: "test", n: 1 } },
    });
    const report = await auditStore.verifyChain(db.kysely);
    expect(report).toMatchObject({ ok: true, entries: 2, rows: 2, broken: null, mismatches: [] });
    expect(report.head).toEqual({ seq: 2, hash: entries[1]?.hash });
  });

  it("migration 0008 puts the audit rows written before it on the chain, in order", async () => {
    const { db: old } = await freshDatabase(engine);
    try {
      // biome-ignore lint/suspicious/noExplicitAny: the migrator works on any schema
      const migrator = new Migrator({ db: old.kysely as any, provider: { getMigrations: async () => migrations } });
      const down = await migrator.migrateTo("0007_olympiad");
      expect(down.error).toBeUndefined();
      const rows = [
        { id: "b", at: "2026-01-02T00:00:00.000Z", actor: "x", action: "order.revoked", subject: "o2", detail: "{}" },
        {
          id: "a",
          at: "2026-01-01T00:00:00.000Z",
          actor: "x",
          action: "order.revoked",
          subject: "o1",
          detail: '{"r":1}',
        },
        {
          id: "c",
          at: "2026-01-02T00:00:00.000Z",
          actor: "y",
          action: "claim.approved",
          subject: "c1",
          detail: "oops",
        },
      ];
      await old.kysely.insertInto("audit_log").values(rows).execute();
      await migrateToLatest(old);
      const entries = await listAll(old.kysely, "audit");
      expect(entries.map((e) => (e.body as { id: string }).id)).toEqual(["a", "b", "c"]);
      expect(entries[2]?.body).toMatchObject({ detail: { value: "oops" } });
      expect(await auditStore.verifyChain(old.kysely)).toMatchObject({ ok: true, entries: 3, rows: 3 });
      // New entries continue the backfilled chain.
      const orders = new OrderService(old.kysely, new Catalog(), "http://lab.test", "k".repeat(64));
      await orders.audit("z", "order.refunded", "o3", {});
      expect(await auditStore.verifyChain(old.kysely)).toMatchObject({ ok: true, entries: 4, head: { seq: 4 } });
    } finally {
      await old.close();
    }
  });
});
