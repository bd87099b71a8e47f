import { createRequire } from "node:module";
import type BetterSqlite3 from "better-sqlite3";

/**
 * The SQLite driver for the running Node.js (docs/operations.md, "Supported Node versions").
 *
 * better-sqlite3 12 is the last line that runs on Node 20; on Node 24 its native objects abort
 * the process when the garbage collector frees a statement (`Assertion failed: (env) != nullptr`
 * in RemoveEnvironmentCleanupHook: Node 24 changed node::ObjectWrap, which 12 subclasses). 13 is
 * rewritten on Node-API and ships prebuilt binaries, but needs Node 22 or later (it crashes on 20).
 * So both are installed — 13 under the alias `better-sqlite3-node22` — and the one that runs on
 * this Node is loaded. Their JavaScript APIs are the same.
 */
export const SQLITE_DRIVER =
  Number(process.versions.node.split(".")[0]) >= 22 ? "better-sqlite3-node22" : "better-sqlite3";

const require = createRequire(import.meta.url);
const SQLite = require(SQLITE_DRIVER) as typeof BetterSqlite3;

export default SQLite;
export type SqliteDatabase = BetterSqlite3.Database;
