import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.js";
import { openDatabase } from "../../src/db/database.js";
import { migrateToLatest } from "../../src/db/migrate.js";
import SQLite from "../../src/db/sqlite-driver.js";
import { backupSqlite, restoreSqlite } from "../../src/ops/backup.js";
import { appOn, type TestApp, testApp } from "../support/app.js";
import { dataDirOf } from "../support/databases.js";
import { grantProduct } from "../support/orders.js";

/** Runs `labphi <args>` in-process with the given environment; returns exit code and output. */
async function labphi(args: string[], env: Record<string, string>) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  stdout.on("data", (c) => out.push(c));
  stderr.on("data", (c) => err.push(c));
  const code = await runCli(args, { stdin: new PassThrough(), stdout, stderr, env });
  return { code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() };
}

/** Every row of every table of ours, in a stable order: what a restore must bring back. */
function contents(file: string): Record<string, unknown[]> {
  const db = new SQLite(file, { readonly: true });
  try {
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
      .pluck()
      .all() as string[];
    return Object.fromEntries(tables.map((t) => [t, db.prepare(`SELECT * FROM "${t}" ORDER BY rowid`).all()]));
  } finally {
    db.close();
  }
}

const ENV = { NODE_ENV: "test", LOG_LEVEL: "silent" };

describe("labphi backup / restore (SQLite)", () => {
  let t: TestApp;
  let dataDir: string;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-backup-test-"));
  const ids = { orders: [] as string[], job: "", proposal: "" };

  beforeAll(async () => {
    t = await testApp("sqlite");
    dataDir = dataDirOf(t.app.services.db)!;
    for (let i = 0; i < 3; i++) {
      const { order } = await grantProduct(t.app.services.orders, {
        proofKey: `test:backup:${i}`,
        sku: "zrw-pro",
        rail: "test_rail",
        amountCents: 24900,
        email: `buyer${i}@example.com`,
      });
      ids.orders.push(order.id);
    }
    const job = await t.app.inject({
      method: "POST",
      url: "/api/x402-suite",
      payload: { product: "auto", dataClass: "text", op: "compress", bytes: 1000 },
    });
    expect(job.statusCode, job.body).toBe(200);
    ids.job = job.json().job_id;
    // a join-work identity each: public_community standing (free registration alone has no vote, issue #21)
    const reg = async (name: string) => {
      const identity = await t.app.services.identities.join({
        name,
        intent: "I want to vote on the games.",
        seed: "x".repeat(33),
      });
      return (
        await t.app.inject({
          method: "POST",
          url: "/api/olympiad",
          payload: { action: "register", who: "human_for_self", name },
          headers: { "x-identity-token": identity.token },
        })
      ).json().participant_token as string;
    };
    const act = (token: string, payload: object) =>
      t.app.inject({ method: "POST", url: "/api/olympiad", payload, headers: { authorization: `Bearer ${token}` } });
    const [a, b] = [await reg("Ada"), await reg("Bo")];
    const proposed = await act(a, { action: "propose", kind: "new_games", title: "Relay", body: "A relay sprint." });
    ids.proposal = proposed.json().proposal.proposal_id;
    expect((await act(a, { action: "vote", proposal_id: ids.proposal, choice: "yes" })).statusCode).toBe(200);
    expect((await act(b, { action: "vote", proposal_id: ids.proposal, choice: "no" })).statusCode).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("backs up the live database, restores it elsewhere and every order, job and vote is there", async () => {
    const file = path.join(tmp, "b1.sqlite");
    const r = await labphi(["backup", file], { ...ENV, DATA_DIR: dataDir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/orders\s+3 rows/);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const expected = contents(path.join(dataDir, "labphi.sqlite"));

    // restore into an empty DATA_DIR (a new machine), then open the app on it
    const fresh = path.join(tmp, "fresh");
    const restored = await labphi(["restore", file], { ...ENV, DATA_DIR: fresh });
    expect(restored.code, restored.stderr).toBe(0);
    expect(contents(path.join(fresh, "labphi.sqlite"))).toEqual(expected);

    const db = openDatabase({ dataDir: fresh });
    await migrateToLatest(db);
    const app = await appOn(db, { DATA_DIR: fresh });
    try {
      const s = app.services;
      for (const id of ids.orders) {
        expect((await s.db.kysely.selectFrom("orders").select("id").where("id", "=", id).executeTakeFirst())?.id).toBe(
          id,
        );
      }
      const job = await s.db.kysely.selectFrom("jobs").selectAll().where("id", "=", ids.job).executeTakeFirst();
      expect(job?.id).toBe(ids.job);
      const votes = await s.db.kysely
        .selectFrom("olympiad_votes")
        .select("choice")
        .where("proposal_id", "=", ids.proposal)
        .execute();
      expect(votes.map((v) => v.choice).sort()).toEqual(["no", "yes"]);
      const tally = await app.inject({ method: "GET", url: `/api/olympiad/proposals/${ids.proposal}` });
      expect(tally.json()).toMatchObject({ tally: { voters: 2 } });
    } finally {
      await app.close();
      await db.close();
    }
  });

  it("is consistent while writes go on, and refuses to overwrite without --yes; keeps the replaced database", async () => {
    const live = path.join(dataDir, "labphi.sqlite");
    const writer = new SQLite(live);
    writer.pragma("busy_timeout = 5000");
    writer.exec("CREATE TABLE IF NOT EXISTS backup_probe (n INTEGER NOT NULL, pad TEXT NOT NULL)");
    const pad = "x".repeat(2000);
    const insert = writer.prepare("INSERT INTO backup_probe (n, pad) VALUES (?, ?)");
    for (let i = 0; i < 2000; i++) insert.run(i, pad); // ~4 MB: the backup takes several steps
    let n = 2000;
    let writing = true;
    const loop = (async () => {
      while (writing) {
        insert.run(n++, pad);
        await new Promise((r) => setImmediate(r));
      }
    })();
    const file = path.join(tmp, "b2.sqlite");
    const report = await backupSqlite(live, file);
    writing = false;
    await loop;
    writer.close();
    const copy = new SQLite(file, { readonly: true });
    const rows = copy.prepare("SELECT n FROM backup_probe ORDER BY n").pluck().all() as number[];
    expect(copy.prepare("PRAGMA integrity_check").pluck().get()).toBe("ok");
    copy.close();
    // a prefix of the writes: consistent (no gap), at least what was there when it started
    expect(rows.length).toBeGreaterThanOrEqual(2000);
    expect(rows.every((v, i) => v === i)).toBe(true);
    expect(report.tables.find((x) => x.table === "backup_probe")?.rows).toBe(rows.length);

    // restoring over an existing database needs --yes; the old one is kept beside it
    const target = path.join(tmp, "over");
    fs.mkdirSync(target);
    await restoreSqlite(file, path.join(target, "labphi.sqlite"));
    const refused = await labphi(["restore", file], { ...ENV, DATA_DIR: target });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--yes/);
    const ok = await labphi(["restore", file, "--yes"], { ...ENV, DATA_DIR: target });
    expect(ok.code, ok.stderr).toBe(0);
    expect(fs.readdirSync(target).some((f) => f.startsWith("labphi.sqlite.before-restore-"))).toBe(true);
  });

  it("refuses a file that is not a Lab Phi database and touches nothing", async () => {
    const junk = path.join(tmp, "junk.sqlite");
    fs.writeFileSync(junk, "not a database");
    const target = path.join(tmp, "keep");
    fs.mkdirSync(target);
    const before = fs.readdirSync(target);
    const r = await labphi(["restore", junk], { ...ENV, DATA_DIR: target });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot be restored/);
    expect(fs.readdirSync(target)).toEqual(before);
    const other = path.join(tmp, "other.sqlite");
    new SQLite(other).exec("CREATE TABLE t (x)");
    expect((await labphi(["restore", other], { ...ENV, DATA_DIR: target })).stderr).toMatch(/not a Lab Phi database/);
  });

  it("prints pg_dump advice for PostgreSQL and exits 69; bad usage exits 2 with help", async () => {
    const pg = await labphi(["backup", path.join(tmp, "x")], {
      ...ENV,
      DATA_DIR: tmp,
      DATABASE_URL: "postgres://u:p@127.0.0.1:1/db",
    });
    expect(pg.code).toBe(69);
    expect(pg.stderr).toMatch(/pg_dump --format=custom/);
    expect((await labphi(["backup"], { ...ENV, DATA_DIR: tmp })).code).toBe(2);
    const help = await labphi(["backup", "--help"], ENV);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/online backup/);
  });
});
