import type { Kysely } from "kysely";
import type { Config } from "../../../config.js";
import type { Database } from "../../../db/schema.js";

/**
 * The olympiad's queue task (issue #26, docs/olympiad-tasks.md "Scoring"): each accepted submission
 * enqueues `olympiad-score` with id `olympiad-score:<event>:<submission>` and payload `{ event_id }`;
 * the suite runner (src/jobs/runner.ts) dispatches it by name to `OlympiadTasks.scoreTask`. This
 * module is small on purpose: `labphi worker` imports it, and loads the scorer only when such a task
 * comes (its module graph stays the suite runtime's).
 */
export const SCORE_TASK = "olympiad-score";

/** One scoring task per accepted submission (deterministic: enqueueing it again does nothing). */
export const scoreTaskId = (eventId: string, submissionId: string) => `${SCORE_TASK}:${eventId}:${submissionId}`;

/** A scorer for a process without the other services (`labphi worker`): it scores, it never closes. */
export async function workerScorer(
  db: Kysely<Database>,
  config: Config,
  log: (msg: string, err?: unknown) => void,
): Promise<{ scoreTask(payload: unknown): Promise<void> }> {
  const [{ OlympiadRecords }, { OlympiadTasks }] = await Promise.all([
    import("../../results/service.js"),
    import("./service.js"),
  ]);
  // scoring appends nothing to the chain (the close does, in the service's sweep)
  const records = new OlympiadRecords(db, config, async () => {
    throw new Error("a scoring worker records no olympiad result");
  });
  return new OlympiadTasks(db, config, records, log);
}
