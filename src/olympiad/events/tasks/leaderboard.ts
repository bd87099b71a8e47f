import type { RecordBody } from "../../results/standings.js";
import { stateOf, type TaskContext, taskOr404 } from "./context.js";
import { type Metric, metricOf } from "./metrics.js";
import { better } from "./scores.js";
import { submissionStore } from "./store.js";

/**
 * An event's leaderboard (docs/olympiad-tasks.md): each entrant's best public score while the task
 * runs and, once the result set is recorded, the private ranking as the chain has it.
 */
export class TaskLeaderboard {
  constructor(private readonly ctx: TaskContext) {}

  /** `GET …/leaderboard`: best public score per entrant (ties: earliest submission); after the close, the recorded private ranking too. */
  async leaderboard(eventId: string) {
    const { task } = await taskOr404(this.ctx, eventId);
    const metric = metricOf(task.metric) as Metric;
    const rows = await submissionStore.publicScores(this.ctx.db, eventId);
    const best = new Map<string, (typeof rows)[number] & { count: number }>();
    for (const r of rows) {
      if (r.public_score === null) continue;
      const cur = best.get(r.entrant_id);
      const count = (cur?.count ?? 0) + 1;
      if (!cur || better(metric, r.public_score, r.created_at, cur.public_score as string, cur.created_at)) {
        best.set(r.entrant_id, { ...r, count });
      } else cur.count = count;
    }
    const ordered = [...best.values()].sort((a, b) =>
      better(metric, a.public_score as string, a.created_at, b.public_score as string, b.created_at) ? -1 : 1,
    );
    const state = stateOf(task, this.ctx.now());
    let final: {
      seq: number;
      hash: string;
      results: {
        entrant: string;
        rank: number | null;
        private_score: string | null;
        public_score: string | null;
        submission_sha256: string | null;
      }[];
    } | null = null;
    if (task.record_seq !== null) {
      const entry = await this.ctx.records.entry(task.record_seq);
      if (entry) {
        const body = entry.body as unknown as RecordBody;
        final = {
          seq: entry.seq,
          hash: entry.hash,
          results: [...body.results]
            .sort((a, b) => (a.rank ?? Number.MAX_SAFE_INTEGER) - (b.rank ?? Number.MAX_SAFE_INTEGER))
            .map((l) => ({
              entrant: (l.team_id ?? l.participant_id) as string,
              rank: l.rank,
              private_score: l.score,
              public_score: l.public_score ?? null,
              submission_sha256: l.submission_sha256 ?? null,
            })),
        };
      }
    }
    return {
      event_id: eventId,
      state,
      metric: { id: metric.id, better: metric.better },
      closes_at: task.closes_at,
      public: ordered.map((r, i) => ({
        rank: i + 1,
        entrant: r.entrant_id,
        entrant_kind: r.entrant_kind,
        public_score: r.public_score as string,
        submitted_at: r.created_at,
        scored_submissions: r.count,
      })),
      final,
    };
  }
}
