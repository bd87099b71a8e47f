import path from "node:path";
import type { Config } from "../../config.js";
import type { Db } from "../../db/database.js";
import { BullTaskQueue } from "./bullmq.js";
import { TableTaskQueue } from "./sqlite.js";
import type { TaskQueue } from "./types.js";

export type { TaskQueue } from "./types.js";
export { PermanentTaskError } from "./types.js";

/** The segment queue: BullMQ on PostgreSQL when DATABASE_URL is set, else the in-process table queue. */
export function openTaskQueue(config: Config, db: Db, log?: (msg: string) => void): TaskQueue {
  const leaseMs = config.jobRunner.leaseSeconds * 1000;
  if (config.databaseUrl) {
    return new BullTaskQueue({ connectionString: config.databaseUrl, queue: "suite", leaseMs, log });
  }
  // the processes on this SQLite file wake each other through a file beside it (sqlite.ts `wakeFile`)
  const wakeFile = db.kind === "sqlite" ? path.join(config.dataDir, "queue-suite.wake") : undefined;
  return new TableTaskQueue(db.kysely, { queue: "suite", leaseMs, log, ...(wakeFile ? { wakeFile } : {}) });
}
