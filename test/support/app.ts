import { buildApp } from "../../src/app.js";
import type { Catalog } from "../../src/catalog/service.js";
import { testConfig } from "../../src/config.js";
import type { App } from "../../src/http/types.js";
import { type Engine, freshDatabase } from "./databases.js";

export interface TestApp {
  app: App;
  close(): Promise<void>;
}

/** Builds the whole app on a fresh database of the given engine. */
export async function testApp(
  engine: Engine = "sqlite",
  env: Record<string, string> = {},
  options: { catalog?: Catalog } = {},
): Promise<TestApp> {
  const { db, dataDir } = await freshDatabase(engine);
  const config = testConfig({ BASE_URL: "http://lab.test", DATA_DIR: dataDir, ...env });
  const app = await buildApp({ config, db, ...options });
  return {
    app,
    close: async () => {
      await app.close();
      await db.close();
    },
  };
}
