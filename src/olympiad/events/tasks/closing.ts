import type { Executor } from "../../../db/executor.js";
import { conflict, Problem } from "../../../http/problem.js";
import { type RecordBody, type ResultLine, ranksFromScores } from "../../results/standings.js";
import { eventById, type OlympiadEvent } from "../events.js";
import { type TaskContext, taskOr404 } from "./context.js";
import { type Metric, metricOf } from "./metrics.js";
import { better, type TaskKeys } from "./scores.js";
import { submissionStore, taskStore } from "./store.js";
import type { TaskRow } from "./tables.js";

/**
 * The result set of a scored event (docs/olympiad-tasks.md): at the close each entrant's finals are
 * ranked on the private part and appended to chain `olympiad` with their evidence; a rescore after a
 * metric fix appends a correction.
 */

export const SCORER_ACTOR = "olympiad:scorer";

export class TaskClosing {
  constructor(
    private readonly ctx: TaskContext,
    private readonly keys: TaskKeys,
  ) {}

  /** Each entrant's finals (selected, or its best public ones), its best private score among them. */
  private async finalLines(task: TaskRow, event: OlympiadEvent): Promise<ResultLine[]> {
    const metric = metricOf(task.metric) as Metric;
    const subs = await submissionStore.scored(this.ctx.db, task.event_id);
    const by = new Map<string, typeof subs>();
    for (const s of subs) by.set(s.entrant_id, [...(by.get(s.entrant_id) ?? []), s]);
    const lines: ResultLine[] = [];
    for (const [entrant, list] of [...by.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
      const selected = list.filter((s) => s.final === 1);
      const finals =
        selected.length > 0
          ? selected
          : [...list]
              .sort((a, b) =>
                better(metric, a.public_score as string, a.created_at, b.public_score as string, b.created_at) ? -1 : 1,
              )
              .slice(0, task.max_finals);
      const pick = [...finals].sort((a, b) =>
        better(metric, a.private_score as string, a.created_at, b.private_score as string, b.created_at) ? -1 : 1,
      )[0];
      if (!pick) continue;
      lines.push({
        ...(event.entrants === "team" ? { team_id: entrant } : { participant_id: entrant }),
        rank: null,
        score: pick.private_score,
        submission_id: pick.id,
        submission_sha256: pick.sha256,
        public_score: pick.public_score,
        ...(selected.length > 0 ? {} : { note: "no finals selected: best public submissions used" }),
      });
    }
    const ranks = ranksFromScores(
      lines.map((l) => l.score),
      metric.better,
    );
    lines.forEach((l, i) => {
      l.rank = ranks[i] ?? null;
    });
    return lines;
  }

  private resultBody(
    task: TaskRow,
    event: OlympiadEvent,
    lines: ResultLine[],
    correction?: { supersedes: number; reason: string },
  ) {
    const metric = metricOf(task.metric) as Metric;
    const base = `${this.ctx.config.baseUrl}/api/olympiad/events/${task.event_id}`;
    const body: RecordBody = {
      season_id: task.season_id,
      quarter: task.quarter,
      event_id: event.id,
      family: event.family,
      entrants: event.entrants,
      weight: event.weight,
      better: metric.better,
      held_on: task.closes_at.slice(0, 10),
      results: lines,
      evidence: {
        url: `${base}/key`,
        sha256: task.key_sha256,
        note: `Scored by the service: ${metric.id} on the private part of the key; the key and its split seed are published at the url; the key's SHA-256 was committed at seq ${task.commit_seq}.`,
      },
      scoring: {
        metric: metric.id,
        k: task.k,
        key_sha256: task.key_sha256,
        key_committed_seq: task.commit_seq,
        split_seed: task.split_seed,
        public_bp: task.public_bp,
        key_url: `${base}/key`,
        leaderboard_url: `${base}/leaderboard`,
      },
      ...(correction ?? {}),
    };
    return body;
  }

  /** At the close: ranks the finals on the private part and appends the result set to the chain. */
  async close(task: TaskRow): Promise<boolean> {
    const event = eventById(task.event_id) as OlympiadEvent;
    const lines = await this.finalLines(task, event);
    const at = this.ctx.now().toISOString();
    const markClosed = async (db: Executor, recordSeq: number | null, error: string | null) => {
      if (!(await taskStore.markClosed(db, task.event_id, at, recordSeq, error))) {
        throw new Error(`task ${task.event_id} closed twice`);
      }
    };
    if (lines.length === 0) {
      await markClosed(this.ctx.db, null, "no scored submission: nothing to record");
      return true;
    }
    try {
      await this.ctx.records.appendOwn(
        "result",
        this.resultBody(task, event, lines) as never,
        SCORER_ACTOR,
        (trx, entry) => markClosed(trx, entry.seq, null),
      );
    } catch (err) {
      if (!(err instanceof Problem)) throw err;
      // e.g. an operator recorded this event's result by hand already: kept, and said on the task
      await markClosed(this.ctx.db, null, `${err.code}: ${err.detail}`);
      this.ctx.log(`olympiad task ${task.event_id} closed without a record: ${err.code}`);
    }
    return true;
  }

  /**
   * `POST /api/admin/olympiad/events/:event_id/rescore`: after a metric fix, every submission is
   * scored again and the result set is replaced by an appended correction (never an edit).
   */
  async rescore(eventId: string, reason: string, actor: string) {
    const { event, task } = await taskOr404(this.ctx, eventId);
    if (task.record_seq === null) {
      throw conflict("task_not_recorded", `'${eventId}' has no recorded result set to correct yet.`, {
        closed_at: task.closed_at,
        close_error: task.close_error,
      });
    }
    const subs = await submissionStore.toRescore(this.ctx.db, eventId);
    const at = this.ctx.now().toISOString();
    for (const sub of subs) {
      const s = await this.keys.scoresOf(task, sub);
      await submissionStore.rescore(
        this.ctx.db,
        sub.id,
        "error" in s
          ? { status: "failed", error: s.error, public_score: null, private_score: null, scored_at: at }
          : {
              status: "scored",
              error: null,
              public_score: s.public_score,
              private_score: s.private_score,
              scored_at: at,
            },
      );
    }
    const lines = await this.finalLines(task, event);
    if (lines.length === 0) throw conflict("task_nothing_to_record", "No submission scores after re-scoring.");
    const body = this.resultBody(task, event, lines, { supersedes: task.record_seq, reason });
    const entry = await this.ctx.records.appendOwn("correction", body as never, actor, (trx, e) =>
      taskStore.setRecordSeq(trx, eventId, e.seq),
    );
    return { event_id: eventId, seq: entry.seq, hash: entry.hash, supersedes: task.record_seq, rescored: subs.length };
  }
}
