import path from "node:path";
import { type CliIO, type Command, settingsOf, UsageError } from "../command.js";

/** sysexits EX_UNAVAILABLE: this command cannot do it here (PostgreSQL: use pg_dump). */
const EX_UNAVAILABLE = 69;

const HELP = `Usage: labphi backup <file> [options]

Takes a consistent online backup of the service's database while it runs (SQLite's online backup
API: the service keeps reading and writing). The copy is checked (PRAGMA integrity_check), written
as <file> with mode 0600, and the row count of every table is printed.

The database is the one the service uses: DATA_DIR/labphi.sqlite (DATA_DIR from the environment or
.env, as for labphi serve). With DATABASE_URL set (PostgreSQL) this command prints the pg_dump
command to use instead and exits 69: PostgreSQL's own tools take consistent online backups.

Suite-job data (DATA_DIR/jobs, or the S3 bucket) is not in the database: copy it separately
(docs/operations.md, "Backup and restore").

Options:
  --json        print the report as JSON
  -q, --quiet   print nothing but errors
  -h, --help    this help

Exit codes: 0 done · 1 the backup failed · 2 bad usage · 69 PostgreSQL (use pg_dump) · 78 bad settings

Examples:
  labphi backup /var/backups/labphi-$(date +%F).sqlite
  DATA_DIR=/srv/labphi labphi backup ./labphi.sqlite --json`;

export function pgDumpAdvice(): string {
  return [
    "DATABASE_URL is set: back up PostgreSQL with its own tools (consistent while the service runs):",
    '  pg_dump --format=custom --no-owner --file labphi.pgdump "$DATABASE_URL"',
    "and restore into an empty database (stop the services and workers first):",
    '  pg_restore --clean --if-exists --no-owner --dbname "$DATABASE_URL" labphi.pgdump',
    "The service migrates the schema to its version when it starts.",
  ].join("\n");
}

export const backupCommand: Command = {
  name: "backup",
  summary: "Online backup of the database (SQLite; pg_dump advice for PostgreSQL)",
  help: HELP,
  async run(args: string[], io: CliIO): Promise<number> {
    const flags = new Set(args.filter((a) => a.startsWith("-")));
    const files = args.filter((a) => !a.startsWith("-"));
    for (const f of flags) if (!["--json", "-q", "--quiet"].includes(f)) throw new UsageError(`unknown option ${f}`);
    if (files.length !== 1) throw new UsageError("give exactly one backup file");
    const config = await settingsOf(io);
    if (!config) return 78;
    if (config.databaseUrl) {
      io.stderr.write(`${pgDumpAdvice()}\n`);
      return EX_UNAVAILABLE;
    }
    const quiet = flags.has("-q") || flags.has("--quiet");
    const { backupSqlite } = await import("../../ops/backup.js");
    const source = path.join(config.dataDir, "labphi.sqlite");
    let last = -1;
    try {
      const report = await backupSqlite(source, files[0]!, (done, total) => {
        const pct = total ? Math.floor((done / total) * 100) : 100;
        if (!quiet && !flags.has("--json") && pct >= last + 25) {
          last = pct;
          io.stderr.write(`backup: ${pct}% (${done}/${total} pages)\n`);
        }
      });
      if (flags.has("--json")) io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      else if (!quiet) {
        io.stdout.write(
          `backup of ${source} written to ${report.file} (${report.bytes} bytes, migration ${report.migration ?? "none"})\n`,
        );
        for (const t of report.tables) io.stdout.write(`  ${t.table.padEnd(32)} ${String(t.rows).padStart(9)} rows\n`);
      }
      return 0;
    } catch (err) {
      io.stderr.write(`labphi backup: ${err instanceof Error ? err.message : String(err)}\n`);
      return 1;
    }
  },
};
