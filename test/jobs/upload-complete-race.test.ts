import { Readable } from "node:stream";
import type { FastifyBaseLogger } from "fastify";
import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from "kysely";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import SQLite, { type SqliteDatabase } from "../../src/db/sqlite-driver.js";
import { JobTransfers } from "../../src/jobs/transfer.js";
import { type TestApp, testApp } from "../support/app.js";
import { freeJob } from "../support/jobs.js";

/**
 * The end of an upload (`JobTransfers.complete`, issue #23 item 6, third pass): on SQLite a
 * transaction that reads and then writes fails at once with SQLITE_BUSY_SNAPSHOT ("database is
 * locked", no busy wait) when another process wrote between its read and its write. A worker
 * finishing a segment of the same job does exactly that while the last bytes land (seen as a 500
 * at the end of a 256 MB PUT under load). Here another connection writes to the database right
 * after the first statement of the transaction that completes the upload.
 */
class WriteAfterFirstStatement implements KyselyPlugin {
  armed = false;
  fired: string | null = null;
  /** the job the other process touches */
  jobId = "";
  private readonly kinds = new Map<unknown, string>();
  constructor(private readonly other: SqliteDatabase) {}

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.kinds.set(args.queryId, args.node.kind);
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const kind = this.kinds.get(args.queryId);
    this.kinds.delete(args.queryId);
    if (this.armed && kind !== undefined) {
      this.armed = false;
      try {
        // what a worker does meanwhile: a write of its own, committed at once
        const r = this.other.prepare("update jobs set updated_at = updated_at || ' ' where id = ?").run(this.jobId);
        if (r.changes !== 1) throw new Error("the other write changed nothing");
        this.fired = `${kind}: other write committed`;
      } catch (err) {
        // the transaction already holds the write lock: the other writer waits (here: gives up)
        this.fired = `${kind}: other write refused (${(err as { code?: string }).code})`;
      }
    }
    return args.result;
  }
}

describe("completing an upload while another process writes (SQLite)", () => {
  let t: TestApp;
  let other: SqliteDatabase;
  beforeAll(async () => {
    t = await testApp("sqlite");
    other = new SQLite(t.app.services.db.location);
    other.pragma("busy_timeout = 0");
  });
  afterAll(async () => {
    other?.close();
    await t?.close();
  });

  it("queues the job: the transaction writes before it reads, so a write in between cannot fail it", async () => {
    const { app } = t;
    const { job } = await freeJob(app, 1000);
    const plugin = new WriteAfterFirstStatement(other);
    plugin.jobId = job.id;
    const db = app.services.db.kysely.withPlugin(plugin);
    const transfers = new JobTransfers(
      db,
      app.services.jobs,
      app.services.storage,
      pino({ level: "silent" }) as FastifyBaseLogger,
    );
    // the storage resolves once every byte is in: the next statement is the completing transaction's first
    const storage = app.services.storage;
    const put = storage.put.bind(storage);
    storage.put = async (...args) => {
      const r = await put(...args);
      plugin.armed = true;
      return r;
    };
    try {
      const done = await transfers.receive(job.id, Readable.from([Buffer.alloc(1000, 7)]));
      expect(done.state).toBe("queued");
      expect(done.bytes_in).toBe(1000);
      expect(plugin.fired).toMatch(/^UpdateQuery/);
    } finally {
      storage.put = put;
    }
  });
});
