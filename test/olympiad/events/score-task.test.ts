import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { testConfig } from "../../../src/config.js";
import type { Db } from "../../../src/db/database.js";
import { TableTaskQueue } from "../../../src/jobs/queue/sqlite.js";
import type { TaskFailure } from "../../../src/jobs/queue/types.js";
import { JobRunner } from "../../../src/jobs/runner.js";
import { LocalObjectStore } from "../../../src/jobs/storage/local.js";
import { EVENTS } from "../../../src/olympiad/events/events.js";
import { SCORE_TASK, workerScorer } from "../../../src/olympiad/events/tasks/queue-task.js";
import { freshDatabase } from "../../support/databases.js";

/**
 * The suite runner's dispatch by task name (issue #26): a task other than `segment` goes to the
 * route injected for its name (the olympiad's `olympiad-score`, as src/services.ts and
 * `labphi worker` wire it), its final failure to that route's `failed`; an unknown name fails at once.
 * The whole scoring path over HTTP is in tasks.test.ts.
 */
describe("runner dispatch by task name", () => {
  let db: Db;
  let dir: string;
  let runner: JobRunner;
  const seen: unknown[] = [];
  const failures: TaskFailure[] = [];

  beforeAll(async () => {
    ({ db } = await freshDatabase("sqlite"));
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-dispatch-"));
    const scorer = await workerScorer(db.kysely, testConfig({ BASE_URL: "http://lab.test" }), () => {});
    runner = new JobRunner({
      db: db.kysely,
      store: new LocalObjectStore(dir),
      queue: new TableTaskQueue(db.kysely, { pollMs: 50, leaseMs: 10_000 }),
      segmentBytes: 256 * 1024,
      attempts: 2,
      backoffMs: 50,
      threads: 1,
      concurrency: 1,
      tasks: {
        [SCORE_TASK]: {
          run: async (payload) => {
            seen.push(payload);
            await scorer.scoreTask(payload);
          },
          failed: (f) => {
            failures.push(f);
          },
        },
      },
    });
    await runner.start();
  });
  afterAll(async () => {
    await runner.stop({ graceMs: 0 });
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const settled = (id: string, state: "done" | "failed") =>
    vi.waitFor(async () => expect((await runner.queue.status(id))?.state).toBe(state), {
      timeout: 10_000,
      interval: 50,
    });

  it("runs an olympiad-score task on the injected route (an event with nothing pending: done)", async () => {
    const eventId = (EVENTS[0] as { id: string }).id;
    await runner.queue.enqueue(SCORE_TASK, { event_id: eventId }, { id: `${SCORE_TASK}:${eventId}:sub_x` });
    await settled(`${SCORE_TASK}:${eventId}:sub_x`, "done");
    expect(seen).toContainEqual({ event_id: eventId });
  });

  it("fails a bad payload at once, reported to the route's `failed`", async () => {
    await runner.queue.enqueue(SCORE_TASK, { event_id: "no-such-event" }, { id: "olympiad-score:bad", attempts: 3 });
    await settled("olympiad-score:bad", "failed");
    const status = await runner.queue.status("olympiad-score:bad");
    expect(status?.attempts).toBe(1);
    expect(failures.map((f) => f.id)).toEqual(["olympiad-score:bad"]);
    expect(failures[0]?.reason).toContain("no-such-event");
  });

  it("fails a task whose name has no route, without calling any route", async () => {
    await runner.queue.enqueue("nobody-handles-this", {}, { id: "orphan:1", attempts: 3 });
    await settled("orphan:1", "failed");
    expect((await runner.queue.status("orphan:1"))?.reason).toContain("unknown task nobody-handles-this");
    expect(failures).toHaveLength(1);
  });
});
