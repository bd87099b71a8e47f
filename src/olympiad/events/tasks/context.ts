import type { Kysely } from "kysely";
import type { Config } from "../../../config.js";
import type { Executor } from "../../../db/executor.js";
import type { Database } from "../../../db/schema.js";
import { notFound } from "../../../http/problem.js";
import type { OlympiadRecords } from "../../results/service.js";
import { eventById, type OlympiadEvent } from "../events.js";
import { taskStore } from "./store.js";
import type { TaskRow } from "./tables.js";

/** What every part of the scored events shares: the database, the settings, the chain, the log and the clock. */
export interface TaskContext {
  readonly db: Kysely<Database>;
  readonly config: Pick<Config, "baseUrl" | "olympiad" | "olympiadTasks">;
  readonly records: OlympiadRecords;
  readonly log: (msg: string, err?: unknown) => void;
  /** the service's clock (read at each call: `OlympiadTasks.now` may be replaced) */
  now(): Date;
}

export function eventOr404(ctx: TaskContext, eventId: string): OlympiadEvent {
  const event = eventById(eventId);
  if (!event) {
    throw notFound("unknown_event", `No olympiad event '${eventId}'; the 40 events are in /olympiad.json.`, {
      olympiad_json: `${ctx.config.baseUrl}/olympiad.json`,
    });
  }
  return event;
}

export async function taskOf(db: Executor, eventId: string): Promise<TaskRow | undefined> {
  return taskStore.task(db, eventId);
}

export async function taskOr404(ctx: TaskContext, eventId: string): Promise<{ event: OlympiadEvent; task: TaskRow }> {
  const event = eventOr404(ctx, eventId);
  const task = await taskOf(ctx.db, eventId);
  if (!task) throw notFound("task_not_found", `Event '${eventId}' has no scored task.`, { event_id: eventId });
  return { event, task };
}

export function stateOf(task: Pick<TaskRow, "opens_at" | "closes_at">, now: Date): "scheduled" | "open" | "closed" {
  const t = now.getTime();
  if (t < Date.parse(task.opens_at)) return "scheduled";
  return t < Date.parse(task.closes_at) ? "open" : "closed";
}
