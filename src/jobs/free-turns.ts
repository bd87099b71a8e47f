import type { Kysely } from "kysely";
import type { Database } from "../db/schema.js";
import { jobStore } from "./store.js";
import type { JobRow } from "./tables.js";

/**
 * One running free job per caller (issue #21 item 3; docs/suite.md "Who gets free work").
 * Admission (src/jobs/free-admission.ts) lets a caller hold 1 running and 3 queued free jobs; this
 * is the run-time half: a caller's free job is planned and queued only while none of the caller's
 * other free jobs has its turn, so the queued ones wait for the running one instead of taking
 * every worker at once. A job has its turn once its segments are planned (`queued` with
 * `segments_total > 0`, or `running`) or, while its input still arrives, once segments were
 * queued early. When a free job ends, the runner plans the caller's next waiting one
 * (`nextWaiting`); a periodic pass (`waitingWithoutTurn`) starts any that a lost wake-up left
 * waiting. Paid jobs and jobs without a caller (bought before callers were recorded) never wait.
 */

type Db = Kysely<Database>;

/** Whether another free job of `job`'s caller holds the caller's turn (then `job` waits). */
export async function freeTurnTaken(db: Db, job: Pick<JobRow, "id" | "paid_by" | "caller">): Promise<boolean> {
  if (job.paid_by !== "free" || !job.caller) return false;
  return jobStore.freeTurnHeld(db, job.caller, job.id);
}

/** The caller's oldest free job waiting for its turn (input complete, not planned yet). */
export function nextWaiting(db: Db, caller: string): Promise<JobRow | undefined> {
  return jobStore.oldestUnplannedFree(db, caller);
}

/** Every caller's oldest waiting free job (at most `limit` callers), for the periodic pass. */
export function waitingCallers(db: Db, limit = 100): Promise<string[]> {
  return jobStore.callersWithUnplannedFree(db, limit);
}
