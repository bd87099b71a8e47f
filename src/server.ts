import { buildApp } from "./app.js";
import { ConfigError, loadConfig } from "./config.js";
import { openDatabase } from "./db/database.js";
import { migrateToLatest } from "./db/migrate.js";

/** Entry point: read settings, migrate, serve, drain on SIGTERM/SIGINT. */
async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`labphi: ${err.message}\n`);
      process.exit(78);
    }
    throw err;
  }
  const db = openDatabase(config);
  const applied = await migrateToLatest(db);
  const app = await buildApp({ config, db, warmWorker: true });
  if (applied.length > 0) app.log.info({ applied }, "migrations applied");

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, "draining in-flight requests");
    const timer = setTimeout(() => {
      app.log.error("drain timed out; exiting");
      process.exit(1);
    }, 15_000);
    timer.unref();
    try {
      await app.close();
      await db.close();
      process.exit(0);
    } catch (err) {
      app.log.error({ err }, "shutdown failed");
      process.exit(1);
    }
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));

  const address = await app.listen({ port: config.port, host: config.host });
  app.log.info(
    { baseUrl: config.baseUrl, address, database: db.kind, location: db.location },
    `Lab Phi is serving ${config.baseUrl} (listening on ${address})`,
  );
  // One line per payment rail: can settle here, or the settings it needs (names only, no values).
  // Logs stay JSON for machines; a person at a terminal also gets the same lines as plain text.
  const { railSummaryLines } = await import("./payments/readiness.js");
  const lines = railSummaryLines(config);
  for (const line of lines) app.log.info(line.trim());
  if (process.stderr.isTTY) {
    process.stderr.write(`\nLab Phi is serving ${config.baseUrl}\n${lines.map((l) => `  ${l}`).join("\n")}\n\n`);
  }
}

main().catch((err) => {
  // A setting found wrong while starting (e.g. a secrets file others can read): the same one line.
  if (err instanceof ConfigError) {
    process.stderr.write(`labphi: ${err.message}\n`);
    process.exit(78);
  }
  process.stderr.write(`labphi: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
