import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Catalog } from "../src/catalog/service.js";
import { ConfigError, loadConfig, testConfig } from "../src/config.js";
import type { Db } from "../src/db/database.js";
import { OrderService } from "../src/orders/service.js";
import { SECRETS_FILE, serviceKeys } from "../src/secrets.js";
import { appOn, testApp } from "./support/app.js";
import { dataDirOf, ENGINES, freshDatabase } from "./support/databases.js";
import { grantProduct } from "./support/orders.js";

const mode = (file: string) => fs.statSync(file).mode & 0o777;
const KEY_A = "a".repeat(40);
const KEY_I = "i".repeat(40);
const KEY_P = "p".repeat(40);
/** An Ed25519 seed (base64url, 32 bytes): the form RECEIPT_SIGNING_KEY takes. */
const KEY_R = Buffer.alloc(32, 9).toString("base64url");

async function settingsRows(db: Db): Promise<string[]> {
  const rows = await db.kysely.selectFrom("settings").select("key").execute();
  return rows.map((r) => r.key).sort();
}

describe.each(ENGINES)("service keys (%s)", (engine) => {
  let db: Db;
  let dataDir: string;
  beforeAll(async () => {
    db = (await freshDatabase(engine)).db;
    dataDir = dataDirOf(db) as string;
  });
  afterAll(async () => db.close());

  it("outside production: generated once into DATA_DIR/secrets.json (0600, folder 0700), never into the database", async () => {
    const dir = path.join(dataDir, "fresh", "nested");
    const config = testConfig({ DATA_DIR: dir });
    const keys = await serviceKeys(config, db.kysely);
    const file = path.join(dir, SECRETS_FILE);
    expect(mode(file)).toBe(0o600);
    expect(mode(dir)).toBe(0o700);
    expect(Object.values(keys).every((k) => k.length >= 32)).toBe(true);
    expect(new Set(Object.values(keys)).size).toBe(4);
    expect(keys.receiptSigning).toMatch(/^[A-Za-z0-9_-]{43}$/); // 32 random bytes: an Ed25519 seed
    expect(JSON.parse(fs.readFileSync(file, "utf8"))).toEqual({
      access_token_secret: keys.accessToken,
      identity_token_secret: keys.identityToken,
      dataset_print_secret: keys.datasetPrint,
      receipt_signing_key: keys.receiptSigning,
    });
    expect(await serviceKeys(config, db.kysely)).toEqual(keys);
    expect(await settingsRows(db)).toEqual([]);
    // the environment wins, key by key
    const env = testConfig({ DATA_DIR: dir, ACCESS_TOKEN_SECRET: KEY_A, DATASET_PRINT_SECRET: KEY_P });
    expect(await serviceKeys(env, db.kysely)).toEqual({
      accessToken: KEY_A,
      identityToken: keys.identityToken,
      datasetPrint: KEY_P,
      receiptSigning: keys.receiptSigning,
    });
  });

  it("with every key in the environment, writes no file", async () => {
    const dir = path.join(dataDir, "env-only");
    const config = testConfig({
      DATA_DIR: dir,
      ACCESS_TOKEN_SECRET: KEY_A,
      IDENTITY_TOKEN_SECRET: KEY_I,
      DATASET_PRINT_SECRET: KEY_P,
      RECEIPT_SIGNING_KEY: KEY_R,
    });
    expect(await serviceKeys(config, db.kysely)).toEqual({
      accessToken: KEY_A,
      identityToken: KEY_I,
      datasetPrint: KEY_P,
      receiptSigning: KEY_R,
    });
    expect(fs.existsSync(path.join(dir, SECRETS_FILE))).toBe(false);
  });

  it("refuses a secrets file that group or others can read (not repaired: the keys may have leaked)", async () => {
    const dir = path.join(dataDir, "loose");
    const config = testConfig({ DATA_DIR: dir });
    await serviceKeys(config, db.kysely);
    const file = path.join(dir, SECRETS_FILE);
    fs.chmodSync(file, 0o644);
    const err = await serviceKeys(config, db.kysely).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).setting).toBe("DATA_DIR");
    expect((err as ConfigError).message).toMatch(/mode 0644/);
    expect(mode(file)).toBe(0o644);
    fs.writeFileSync(file, "{ not json");
    fs.chmodSync(file, 0o600);
    await expect(serviceKeys(config, db.kysely)).rejects.toThrow(/not valid JSON/);
  });

  it("production: refuses to start without each key, naming the setting", async () => {
    const all = {
      NODE_ENV: "production",
      ACCESS_TOKEN_SECRET: KEY_A,
      IDENTITY_TOKEN_SECRET: KEY_I,
      DATASET_PRINT_SECRET: KEY_P,
      RECEIPT_SIGNING_KEY: KEY_R,
    };
    expect(loadConfig(all).env).toBe("production");
    for (const name of [
      "ACCESS_TOKEN_SECRET",
      "IDENTITY_TOKEN_SECRET",
      "DATASET_PRINT_SECRET",
      "RECEIPT_SIGNING_KEY",
    ] as const) {
      const env: Record<string, string> = { ...all };
      delete env[name];
      let error: unknown;
      try {
        loadConfig(env);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).setting).toBe(name);
      expect((error as ConfigError).message).toMatch(
        new RegExp(`^invalid setting ${name}: required when NODE_ENV=production`),
      );
    }
    // a hand-built production config without a key is refused by the resolver too, and writes nothing
    const dir = path.join(dataDir, "prod");
    const config = { ...testConfig({ DATA_DIR: dir, ACCESS_TOKEN_SECRET: KEY_A }), env: "production" as const };
    await expect(serviceKeys(config, db.kysely)).rejects.toMatchObject({ setting: "IDENTITY_TOKEN_SECRET" });
    expect(fs.existsSync(dir)).toBe(false);
  });

  it("upgrade: keys an earlier version kept in the settings table move into the file; old access URLs keep working", async () => {
    const t = await freshDatabase(engine);
    try {
      const legacy = { access: "L".repeat(43), identity: "M".repeat(43), print: "N".repeat(43) };
      const now = new Date().toISOString();
      await t.db.kysely
        .insertInto("settings")
        .values([
          { key: "access_token_secret", value: legacy.access, updated_at: now },
          { key: "identity_token_secret", value: legacy.identity, updated_at: now },
          { key: "dataset_print_key", value: legacy.print, updated_at: now },
          { key: "something_else", value: "kept", updated_at: now },
        ])
        .execute();
      // an order granted by the earlier version, with the key from the table
      const before = new OrderService(t.db.kysely, new Catalog(), "http://lab.test", legacy.access);
      const { accessUrl } = await grantProduct(before, {
        proofKey: "test:legacy",
        sku: "gao",
        rail: "test",
        amountCents: 100,
      });

      const app = await appOn(t.db, { DATA_DIR: t.dataDir });
      try {
        const opened = await app.inject({ method: "GET", url: new URL(accessUrl).pathname });
        expect(opened.statusCode).toBe(200);
        expect(await settingsRows(t.db)).toEqual(["something_else"]);
        const file = path.join(t.dataDir, SECRETS_FILE);
        expect(mode(file)).toBe(0o600);
        expect(JSON.parse(fs.readFileSync(file, "utf8"))).toEqual({
          access_token_secret: legacy.access,
          identity_token_secret: legacy.identity,
          dataset_print_secret: legacy.print,
          // never kept in the table: generated on this first start
          receipt_signing_key: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        });
      } finally {
        await app.close();
      }
      // afterwards the table is never read: a key put back there is ignored
      await t.db.kysely
        .insertInto("settings")
        .values({ key: "access_token_secret", value: "Z".repeat(43), updated_at: now })
        .execute();
      const warnings: object[] = [];
      const keys = await serviceKeys(testConfig({ DATA_DIR: t.dataDir }), t.db.kysely, {
        warn: (o) => warnings.push(o),
      });
      expect(keys.accessToken).toBe(legacy.access);
      expect(warnings).toEqual([{ setting: "ACCESS_TOKEN_SECRET", settings_row: "access_token_secret" }]);
      expect(JSON.stringify(warnings)).not.toContain("Z".repeat(43));
    } finally {
      await t.db.close();
    }
  });

  it("test apps keep their secrets in the database's temporary DATA_DIR, removed on close", async () => {
    const t = await testApp(engine);
    const dir = t.app.services.config.dataDir;
    expect(dir.startsWith(os.tmpdir())).toBe(true);
    expect(fs.existsSync(path.join(dir, SECRETS_FILE))).toBe(true);
    await t.close();
    expect(fs.existsSync(dir)).toBe(false);
  });
});

describe("server process", () => {
  it("NODE_ENV=production without the keys exits 78 with one line naming the first", async () => {
    const root = path.resolve(import.meta.dirname, "..");
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-prod-"));
    try {
      const child = spawn(
        process.execPath,
        [path.join(root, "node_modules", "tsx", "dist", "cli.mjs"), "src/server.ts"],
        {
          cwd: root,
          env: { PATH: process.env.PATH ?? "", NODE_ENV: "production", DATA_DIR: dataDir, PORT: "0" },
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      let out = "";
      child.stdout?.on("data", (d) => {
        out += d;
      });
      child.stderr?.on("data", (d) => {
        out += d;
      });
      const code = await new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
      expect(code).toBe(78);
      expect(out.trim()).toMatch(/^labphi: invalid setting ACCESS_TOKEN_SECRET: required when NODE_ENV=production/);
      expect(fs.readdirSync(dataDir)).toEqual([]);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
