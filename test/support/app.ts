import type { DestinationStream } from "pino";
import { buildApp } from "../../src/app.js";
import type { Catalog } from "../../src/catalog/service.js";
import { testConfig } from "../../src/config.js";
import type { Db } from "../../src/db/database.js";
import type { App } from "../../src/http/types.js";
import { dataDirOf, type Engine, freshDatabase } from "./databases.js";

/**
 * The one app fixture of the tests (issue #14 "Test suite shape"): every test that needs the whole
 * app builds it here, on a fresh database (`testApp`) or on one it already has (`appOn`: a restart
 * on the same data, a backup restored elsewhere, a PostgreSQL it controls).
 */
export interface TestApp {
  app: App;
  close(): Promise<void>;
}

export interface AppFixtureOptions {
  /** a catalog with changed prices */
  catalog?: Catalog;
  /** where log lines go (tests that read the logs) */
  logStream?: DestinationStream;
}

/**
 * The app on an existing database. BASE_URL defaults to http://lab.test and DATA_DIR to the
 * database's own temporary folder (so its secrets.json, the service keys, survive a restart).
 */
export async function appOn(db: Db, env: Record<string, string> = {}, options: AppFixtureOptions = {}): Promise<App> {
  const dataDir = dataDirOf(db);
  return buildApp({
    config: testConfig({ BASE_URL: "http://lab.test", ...(dataDir ? { DATA_DIR: dataDir } : {}), ...env }),
    db,
    ...options,
  });
}

/** Builds the whole app on a fresh database of the given engine; `close` closes both. */
export async function testApp(
  engine: Engine = "sqlite",
  env: Record<string, string> = {},
  options: AppFixtureOptions = {},
): Promise<TestApp> {
  const { db } = await freshDatabase(engine);
  const app = await appOn(db, env, options);
  return {
    app,
    close: async () => {
      await app.close();
      await db.close();
    },
  };
}
