import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Catalog } from "../../src/catalog/service.js";
import { type Db, openDatabase } from "../../src/db/database.js";
import { migrateToLatest } from "../../src/db/migrate.js";
import { persistentSetting } from "../../src/db/settings.js";
import { toProblem } from "../../src/http/errors.js";
import { OrderService } from "../../src/orders/service.js";
import { createPostgresDatabase, ENGINES, freshDatabase } from "../support/databases.js";
import { grantProduct } from "../support/orders.js";

describe.each(ENGINES)("storage on %s", (engine) => {
  let db: Db;
  beforeAll(async () => {
    db = (await freshDatabase(engine)).db;
  });
  afterAll(async () => db.close());

  it("reports its engine and applies migrations once", async () => {
    expect(db.kind).toBe(engine);
    expect(await migrateToLatest(db)).toEqual([]);
  });

  it("keeps the first value of a persistent setting under concurrent first calls", async () => {
    const values = await Promise.all(
      Array.from({ length: 10 }, (_, i) => persistentSetting(db.kysely, "k", () => `v${i}`)),
    );
    expect(new Set(values).size).toBe(1);
  });

  it("grants exactly one order for one proof key under 20 concurrent grants", async () => {
    const orders = new OrderService(db.kysely, new Catalog(), "http://lab.test", "s".repeat(32));
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        grantProduct(orders, { proofKey: "test:one", sku: "gao", rail: "test", amountCents: 100 }),
      ),
    );
    expect(new Set(results.map((r) => r.order.id)).size).toBe(1);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.accessUrl)).size).toBe(1);
    const count = await db.kysely
      .selectFrom("orders")
      .select((eb) => eb.fn.countAll().as("n"))
      .where("proof_key", "=", "test:one")
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(1);
  });

  it("opens, revokes and refuses a revoked access token", async () => {
    const orders = new OrderService(db.kysely, new Catalog(), "http://lab.test", "s".repeat(32));
    const { order, accessUrl } = await grantProduct(orders, {
      proofKey: "test:two",
      sku: "zrw-pro",
      rail: "test",
      amountCents: 24900,
    });
    expect(order.license_key).toMatch(/^ZRWPRO-[A-Z2-9]{5}(-[A-Z2-9]{5}){3}$/);
    const token = accessUrl.split("/access/")[1] ?? "";
    expect((await orders.open(token)).id).toBe(order.id);
    await orders.revoke(order.id, "test", "because");
    await expect(orders.open(token)).rejects.toMatchObject({ status: 410, code: "access_revoked" });
    await expect(orders.open("x".repeat(43))).rejects.toMatchObject({ status: 404 });
    const audit = await db.kysely.selectFrom("audit_log").selectAll().where("subject", "=", order.id).execute();
    expect(audit.map((a) => a.action)).toEqual(["order.revoked"]);
  });
});

describe("PostgreSQL statement timeout (DATABASE_STATEMENT_TIMEOUT_SECONDS)", () => {
  it("cancels a statement that runs longer (503 database_timeout); migrations run without it", async () => {
    const databaseUrl = await createPostgresDatabase();
    const db = openDatabase({ dataDir: "/nonexistent", databaseUrl, statementTimeoutSeconds: 1 });
    try {
      // a migration may take longer than the limit: migrateToLatest lifts it on its connection
      expect((await migrateToLatest(db)).length).toBeGreaterThan(0);
      const started = Date.now();
      const err = await sql`select pg_sleep(3)`.execute(db.kysely).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(Date.now() - started).toBeLessThan(2500);
      expect((err as { code?: string }).code).toBe("57014");
      expect(toProblem(err as Error).code).toBe("database_timeout");
      // the connection the migrations used is back under the limit, and the pool still works
      const settings = await Promise.all(
        Array.from({ length: 3 }, () => sql<{ statement_timeout: string }>`show statement_timeout`.execute(db.kysely)),
      );
      expect(settings.map((r) => r.rows[0]?.statement_timeout)).toEqual(["1s", "1s", "1s"]);
      const fast = await sql<{ n: number }>`select 1 as n`.execute(db.kysely);
      expect(fast.rows[0]?.n).toBe(1);
    } finally {
      await db.close();
    }
  }, 30_000);
});
