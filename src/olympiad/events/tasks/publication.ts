import { notFound, Problem } from "../../../http/problem.js";
import { EVENTS } from "../events.js";
import { eventOr404, stateOf, type TaskContext, taskOf, taskOr404 } from "./context.js";
import { type Metric, metricOf } from "./metrics.js";
import type { FileFormat } from "./parse.js";
import { taskStore } from "./store.js";
import type { TaskFileRow } from "./tables.js";

/**
 * What anyone reads of the scored events (docs/olympiad-tasks.md): the index of the 40 events, an
 * event with its task as published, the task's public files and, once it has closed, its key.
 */
export class TaskPublication {
  constructor(private readonly ctx: TaskContext) {}

  /** `GET /api/olympiad/events`: the 40 events, each with its task's state, metric and window (or null). */
  async index() {
    const tasks = await taskStore.summaries(this.ctx.db);
    const by = new Map(tasks.map((t) => [t.event_id, t]));
    const base = `${this.ctx.config.baseUrl}/api/olympiad/events`;
    return {
      events: EVENTS.map((e) => {
        const t = by.get(e.id);
        return {
          event_id: e.id,
          name: e.name,
          family: e.family,
          entrants: e.entrants,
          url: `${base}/${e.id}`,
          task: t
            ? {
                state: stateOf(t, this.ctx.now()),
                metric: t.metric,
                opens_at: t.opens_at,
                closes_at: t.closes_at,
                record_seq: t.record_seq,
                leaderboard: `${base}/${e.id}/leaderboard`,
              }
            : null,
        };
      }),
    };
  }

  /** `GET /api/olympiad/events/:event_id`: the event and its task as published (never the key before the close). */
  async publicView(eventId: string) {
    const event = eventOr404(this.ctx, eventId);
    const task = await taskOf(this.ctx.db, eventId);
    const base = `${this.ctx.config.baseUrl}/api/olympiad/events/${eventId}`;
    const eventView = { ...event, scoring: { ...event.scoring } } as Record<string, unknown>;
    if (!task) return { event: eventView, task: null };
    const files = await taskStore.files(this.ctx.db, eventId);
    const metric = metricOf(task.metric) as Metric;
    const state = stateOf(task, this.ctx.now());
    const closed = state === "closed";
    return {
      event: eventView,
      task: {
        state,
        description: task.description,
        season_id: task.season_id,
        quarter: task.quarter,
        metric: { id: metric.id, name: metric.name, better: metric.better, rule: metric.rule, k: task.k },
        submission_format: {
          formats: ["csv", "jsonl"] as FileFormat[],
          id_column: task.id_column,
          value_column: task.value_column,
          value_kind: metric.kind,
          rows: task.key_rows,
        },
        files: files.map((f) => ({ ...f, url: `${base}/files/${encodeURIComponent(f.name)}` })),
        key: {
          sha256: task.key_sha256,
          committed_seq: task.commit_seq,
          public_pct: task.public_bp / 100,
          published: closed,
          url: closed ? `${base}/key` : null,
        },
        opens_at: task.opens_at,
        closes_at: task.closes_at,
        daily_quota: task.daily_quota,
        max_file_bytes: task.max_file_bytes,
        max_finals: task.max_finals,
        record_seq: task.record_seq,
        leaderboard: `${base}/leaderboard`,
        submissions: `${base}/submissions`,
      },
    };
  }

  async file(eventId: string, name: string): Promise<TaskFileRow> {
    await taskOr404(this.ctx, eventId);
    const f = await taskStore.file(this.ctx.db, eventId, name);
    if (!f) throw notFound("task_file_not_found", `The task of '${eventId}' has no public file '${name}'.`);
    return f;
  }

  /** `GET …/key`: the key, its seed and split, once the close has passed; 403 before. */
  async keyDocument(eventId: string) {
    const { task } = await taskOr404(this.ctx, eventId);
    if (stateOf(task, this.ctx.now()) !== "closed") {
      throw new Problem(
        403,
        "task_key_not_published",
        `The key of '${eventId}' is published when the event closes (${task.closes_at}); its SHA-256 is committed already.`,
        { closes_at: task.closes_at, key_sha256: task.key_sha256 },
      );
    }
    return {
      event_id: eventId,
      format: task.key_format,
      id_column: task.id_column,
      value_column: task.value_column,
      metric: task.metric,
      k: task.k,
      sha256: task.key_sha256,
      committed_seq: task.commit_seq,
      split_seed: task.split_seed,
      public_bp: task.public_bp,
      split_rule: "row id is public when parseInt(sha256(split_seed + ':' + id)[0:8], 16) % 10000 < public_bp",
      content: task.key_text,
      record_seq: task.record_seq,
    };
  }
}
