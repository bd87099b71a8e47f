import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { migrations } from "../../../db/migrations/index.js";
import SQLite from "../../../db/sqlite-driver.js";
import { type Check, type DoctorContext, errorLine, fail, ok, skipped } from "../check.js";

/**
 * The database: PostgreSQL (DATABASE_URL) reachable, or the SQLite file present; and every
 * migration of this version applied (the kysely_migration table), none unknown to it. Read only:
 * SQLite is opened read-only, PostgreSQL runs two SELECTs.
 */

type Applied = { kind: "postgres" | "sqlite"; where: string; server?: string; names: string[] } | { error: string };

function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    u.password = "";
    return `${u.protocol}//${u.username ? `${u.username}@` : ""}${u.host}${u.pathname}`;
  } catch {
    return "(unparsable URL)";
  }
}

const EXPECTED = Object.keys(migrations).sort();

async function applied(ctx: DoctorContext): Promise<Applied | undefined> {
  return ctx.memo("database.applied", async () => {
    const url = ctx.config.databaseUrl;
    if (url) {
      const client = new pg.Client({
        connectionString: url,
        connectionTimeoutMillis: ctx.timeoutMs,
        statement_timeout: ctx.timeoutMs,
      });
      client.on("error", () => {});
      try {
        await client.connect();
        const v = await client.query<{ v: string }>("select current_setting('server_version') as v");
        const t = await client.query<{ t: string | null }>("select to_regclass('kysely_migration')::text as t");
        const names =
          t.rows[0]?.t === null || t.rows[0]?.t === undefined
            ? []
            : (await client.query<{ name: string }>("select name from kysely_migration")).rows.map((r) => r.name);
        return { kind: "postgres" as const, where: safeUrl(url), server: v.rows[0]?.v, names };
      } catch (err) {
        return { error: `${safeUrl(url)}: ${errorLine(err)}` };
      } finally {
        await client.end().catch(() => {});
      }
    }
    const file = path.join(ctx.config.dataDir, "labphi.sqlite");
    if (!fs.existsSync(file)) return undefined;
    try {
      const db = new SQLite(file, { readonly: true, fileMustExist: true });
      try {
        const has = db
          .prepare("select name from sqlite_master where type = 'table' and name = 'kysely_migration'")
          .get();
        const names = has
          ? (db.prepare("select name from kysely_migration").all() as { name: string }[]).map((r) => r.name)
          : [];
        return { kind: "sqlite" as const, where: file, names };
      } finally {
        db.close();
      }
    } catch (err) {
      return { error: `${file}: ${errorLine(err)}` };
    }
  });
}

export const databaseConnect: Check = {
  id: "database.connect",
  part: "database",
  check: "reachable",
  applies: () => true,
  notConfigured: "",
  async run(ctx) {
    const a = await applied(ctx);
    if (a === undefined) {
      return skipped(
        `SQLite ${path.join(ctx.config.dataDir, "labphi.sqlite")} not created yet (labphi serve creates and migrates it)`,
      );
    }
    if ("error" in a) {
      return fail(
        a.error,
        ctx.config.databaseUrl
          ? "check DATABASE_URL (host, port, database, user, password) and that PostgreSQL is up and accepts this host"
          : "check that DATA_DIR is readable by this user and the file is a Lab Phi SQLite database",
      );
    }
    return ok(a.kind === "postgres" ? `PostgreSQL ${a.server} at ${a.where}` : `SQLite ${a.where}`);
  },
};

export const databaseMigrations: Check = {
  id: "database.migrations",
  part: "database",
  check: "migrated",
  applies: () => true,
  notConfigured: "",
  needs: ["database.connect"],
  async run(ctx) {
    const a = await applied(ctx);
    if (a === undefined || "error" in a) return skipped("database not reachable");
    const have = new Set(a.names);
    const pending = EXPECTED.filter((n) => !have.has(n));
    const unknown = a.names.filter((n) => !(n in migrations)).sort();
    if (unknown.length > 0) {
      return fail(
        `${unknown.length} migration(s) of a newer version applied (${unknown.join(", ")})`,
        "run the Lab Phi version that applied them (or newer): this version does not know that schema",
      );
    }
    if (pending.length > 0) {
      return fail(
        `${pending.length} of ${EXPECTED.length} migrations not applied (first: ${pending[0]})`,
        "start one instance of this version (labphi serve applies pending migrations at start-up), then the others",
      );
    }
    return ok(`all ${EXPECTED.length} migrations applied (last ${EXPECTED[EXPECTED.length - 1]})`);
  },
};

export const DATABASE_CHECKS: Check[] = [databaseConnect, databaseMigrations];
