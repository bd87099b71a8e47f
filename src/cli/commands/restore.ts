import fs from "node:fs";
import path from "node:path";
import { type CliIO, type Command, settingsOf, UsageError } from "../command.js";
import { pgDumpAdvice } from "./backup.js";

const HELP = `Usage: labphi restore <file> --yes [options]

Puts a backup taken by \`labphi backup\` in place of the service's database
(DATA_DIR/labphi.sqlite), then migrates it to this version's schema. Stop the service and every
worker first: a running service would keep writing to the database it had open.

The file is checked first (SQLite integrity check, a Lab Phi schema); nothing is touched when it
fails. The database that was there is kept beside it as labphi.sqlite.before-restore-<time>, so a
restore can be undone by moving it back. The row count of every table is printed.

With DATABASE_URL set (PostgreSQL) it prints the pg_restore command instead and exits 69.

Options:
  --yes         required when a database exists already (it is replaced; the old one is kept)
  --json        print the report as JSON
  -h, --help    this help

Exit codes: 0 restored · 1 the file cannot be restored · 2 bad usage · 69 PostgreSQL · 78 bad settings

Example:
  systemctl stop labphi labphi-worker && labphi restore /var/backups/labphi-2026-11-24.sqlite --yes`;

export const restoreCommand: Command = {
  name: "restore",
  summary: "Restore the database from a labphi backup (the service stopped)",
  help: HELP,
  async run(args: string[], io: CliIO): Promise<number> {
    const flags = new Set(args.filter((a) => a.startsWith("-")));
    const files = args.filter((a) => !a.startsWith("-"));
    for (const f of flags) if (!["--json", "--yes"].includes(f)) throw new UsageError(`unknown option ${f}`);
    if (files.length !== 1) throw new UsageError("give exactly one backup file");
    const config = await settingsOf(io);
    if (!config) return 78;
    if (config.databaseUrl) {
      io.stderr.write(`${pgDumpAdvice()}\n`);
      return 69;
    }
    const target = path.join(config.dataDir, "labphi.sqlite");
    if (fs.existsSync(target) && !flags.has("--yes")) {
      throw new UsageError(`${target} exists: stop the service and workers, then run again with --yes`);
    }
    const { restoreSqlite } = await import("../../ops/backup.js");
    const { openDatabase } = await import("../../db/database.js");
    const { migrateToLatest } = await import("../../db/migrate.js");
    try {
      const report = await restoreSqlite(files[0]!, target);
      const db = openDatabase({ dataDir: config.dataDir });
      let applied: string[];
      try {
        applied = await migrateToLatest(db);
      } finally {
        await db.close();
      }
      if (flags.has("--json")) io.stdout.write(`${JSON.stringify({ ...report, migrated: applied }, null, 2)}\n`);
      else {
        io.stdout.write(`restored ${files[0]} into ${report.file}\n`);
        if (report.previous) io.stdout.write(`the database that was there is kept as ${report.previous}\n`);
        if (applied.length > 0) io.stdout.write(`migrated to the current schema: ${applied.join(", ")}\n`);
        for (const t of report.tables) io.stdout.write(`  ${t.table.padEnd(32)} ${String(t.rows).padStart(9)} rows\n`);
      }
      return 0;
    } catch (err) {
      io.stderr.write(`labphi restore: ${err instanceof Error ? err.message : String(err)}\n`);
      return 1;
    }
  },
};
