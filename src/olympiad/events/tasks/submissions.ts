import { randomBytes } from "node:crypto";
import { badRequest, conflict, notFound, Problem } from "../../../http/problem.js";
import { entryStore } from "../../entry/entry.js";
import type { ParticipantRow } from "../../tables.js";
import { teamStore } from "../../teams/store.js";
import type { OlympiadEvent } from "../events.js";
import { stateOf, type TaskContext, taskOr404 } from "./context.js";
import { type Metric, metricOf } from "./metrics.js";
import { checkAgainstKey, type FileFormat, type Issue, parseTable } from "./parse.js";
import type { TaskKeys } from "./scores.js";
import type { TaskScoring } from "./scoring.js";
import { sha256Hex } from "./split.js";
import { submissionStore } from "./store.js";
import type { SubmissionRow, TaskRow } from "./tables.js";

/**
 * Entrants' prediction files (docs/olympiad-tasks.md): entered participants (or teams through their
 * entered members) submit under the daily quota, each accepted file queued for scoring; an entrant
 * reads its submissions and selects its finals before the close.
 */

export interface SubmissionInput {
  format: FileFormat;
  content: string;
}

type Entrant = { id: string; kind: "participant" | "team" };

const DAY_MS = 86_400_000;
const utcDay = (d: Date) => d.toISOString().slice(0, 10);

function invalidSubmission(issues: Issue[]): Problem {
  const first = issues[0];
  const where =
    first && first.row !== null ? ` (row ${first.row}${first.column !== null ? `, column ${first.column}` : ""})` : "";
  return badRequest(
    "submission_invalid",
    `The file does not fit the task${where}: ${first?.problem ?? "invalid"}. Nothing was stored and the quota is untouched.`,
    { issues, row: first?.row ?? null, column: first?.column ?? null },
  );
}

export class TaskSubmissions {
  constructor(
    private readonly ctx: TaskContext,
    private readonly keys: TaskKeys,
    private readonly scoring: TaskScoring,
  ) {}

  /** The entrant a participant submits for, checking the entry (and the team's lock for team events). */
  private async entrantOf(participant: ParticipantRow, event: OlympiadEvent, task: TaskRow): Promise<Entrant> {
    if (event.entrants === "team") {
      const team = await teamStore.teamOf(this.ctx.db, participant.id);
      if (!team) {
        throw new Problem(403, "team_required", `${event.id} is a team event: submit as a member of a team.`);
      }
      if (team.locked_at === null) {
        throw conflict("team_not_locked", "The team has not locked its roster (ratio rule): it cannot compete yet.", {
          team_id: team.id,
        });
      }
      await this.assertEntered(participant, task);
      return { id: team.id, kind: "team" };
    }
    await this.assertEntered(participant, task);
    return { id: participant.id, kind: "participant" };
  }

  private async assertEntered(participant: ParticipantRow, task: TaskRow): Promise<void> {
    const entry = await entryStore.forParticipant(this.ctx.db, participant.id, task.season_id);
    if (entry?.order_status !== "active") {
      throw new Problem(
        403,
        "entry_required",
        `Submitting needs an active entry in season ${task.season_id} (a paid gao-entry order: POST /api/olympiad {"action":"enter"}).`,
        { season_id: task.season_id },
      );
    }
  }

  /** `POST …/submissions`: validated at once, stored with its SHA-256 under the daily quota, scored on the queue. */
  async submit(participant: ParticipantRow, eventId: string, input: SubmissionInput) {
    const { event, task } = await taskOr404(this.ctx, eventId);
    const now = this.ctx.now();
    const state = stateOf(task, now);
    if (state === "scheduled") {
      throw conflict("task_not_open", `Submissions to '${eventId}' open at ${task.opens_at}.`, {
        opens_at: task.opens_at,
      });
    }
    if (state === "closed") {
      throw conflict("task_closed", `'${eventId}' closed at ${task.closes_at}; no more submissions.`, {
        closes_at: task.closes_at,
      });
    }
    const bytes = Buffer.byteLength(input.content, "utf8");
    if (bytes > task.max_file_bytes) {
      throw new Problem(
        413,
        "submission_too_large",
        `The file is ${bytes} bytes; this task takes at most ${task.max_file_bytes}.`,
        {
          bytes,
          max_file_bytes: task.max_file_bytes,
        },
      );
    }
    const entrant = await this.entrantOf(participant, event, task);
    const metric = metricOf(task.metric) as Metric;
    const parsed = parseTable(input.content, input.format, {
      idColumn: task.id_column,
      valueColumn: task.value_column,
      kind: metric.kind,
    });
    if (!parsed.ok) throw invalidSubmission(parsed.issues);
    const key = await this.keys.of(task);
    const issues = checkAgainstKey(parsed.rows, new Set(key.values.keys()), task.id_column);
    if (issues.length > 0) throw invalidSubmission(issues);

    const day = utcDay(now);
    const row: SubmissionRow = {
      id: `sub_${randomBytes(12).toString("hex")}`,
      event_id: eventId,
      entrant_id: entrant.id,
      entrant_kind: entrant.kind,
      participant_id: participant.id,
      format: input.format,
      content: input.content,
      sha256: sha256Hex(input.content),
      bytes,
      rows: parsed.rows.length,
      status: "pending",
      public_score: null,
      private_score: null,
      error: null,
      final: 0,
      created_at: now.toISOString(),
      scored_at: null,
    };
    const counted = { event_id: eventId, entrant_id: entrant.id, day };
    const used = await this.ctx.db.transaction().execute(async (trx) => {
      // one conditional upsert: the count rises only below the quota (row lock on PostgreSQL,
      // one writer at a time on SQLite), so concurrent submissions cannot pass it together
      if (!(await submissionStore.countOne(trx, counted, task.daily_quota))) return null;
      await submissionStore.insert(trx, row);
      return submissionStore.count(trx, counted);
    });
    const resets = new Date(Date.parse(`${day}T00:00:00Z`) + DAY_MS).toISOString();
    if (used === null) {
      const retry = Math.max(1, Math.ceil((Date.parse(resets) - now.getTime()) / 1000));
      throw new Problem(
        429,
        "submission_quota_exceeded",
        `${entrant.kind === "team" ? "The team" : "You"} used today's ${task.daily_quota} submissions to '${eventId}'; the quota resets at ${resets}.`,
        { daily_quota: task.daily_quota, resets_at: resets, entrant: entrant.id },
        { "Retry-After": String(retry) },
      );
    }
    await this.scoring.enqueueScoring(eventId, row.id);
    return {
      submission_id: row.id,
      event_id: eventId,
      entrant: entrant.id,
      entrant_kind: entrant.kind,
      sha256: row.sha256,
      bytes,
      rows: row.rows,
      status: row.status,
      submitted_at: row.created_at,
      quota: { used, daily_quota: task.daily_quota, resets_at: resets },
      submissions_url: `${this.ctx.config.baseUrl}/api/olympiad/events/${eventId}/submissions`,
    };
  }

  /** `GET …/submissions` (participant): the entrant's submissions; private scores only after the close. */
  async mySubmissions(participant: ParticipantRow, eventId: string) {
    const { event, task } = await taskOr404(this.ctx, eventId);
    const entrant = await this.entrantOf(participant, event, task);
    const state = stateOf(task, this.ctx.now());
    const closed = state === "closed";
    const rows = await submissionStore.ofEntrant(this.ctx.db, eventId, entrant.id, 500);
    return {
      event_id: eventId,
      entrant: entrant.id,
      entrant_kind: entrant.kind,
      state,
      max_finals: task.max_finals,
      submissions: rows.map((r) => ({
        submission_id: r.id,
        submitted_by: r.participant_id,
        sha256: r.sha256,
        bytes: r.bytes,
        rows: r.rows,
        status: r.status,
        public_score: r.public_score,
        private_score: closed ? r.private_score : null,
        error: r.error,
        final: r.final === 1,
        submitted_at: r.created_at,
        scored_at: r.scored_at,
      })),
    };
  }

  /** `POST …/finals`: the entrant's final submissions (at most max_finals), before the close. */
  async selectFinals(participant: ParticipantRow, eventId: string, ids: readonly string[]) {
    const { event, task } = await taskOr404(this.ctx, eventId);
    if (stateOf(task, this.ctx.now()) === "closed") {
      throw conflict("task_closed", `'${eventId}' closed at ${task.closes_at}; finals are fixed.`, {
        closes_at: task.closes_at,
      });
    }
    const entrant = await this.entrantOf(participant, event, task);
    const unique = [...new Set(ids)];
    if (unique.length > task.max_finals) {
      throw badRequest("too_many_finals", `At most ${task.max_finals} final submissions.`, {
        max_finals: task.max_finals,
      });
    }
    await this.ctx.db.transaction().execute(async (trx) => {
      if (unique.length > 0) {
        const known = new Set(await submissionStore.idsOfEntrant(trx, eventId, entrant.id, unique));
        const unknown = unique.filter((id) => !known.has(id));
        if (unknown.length > 0) {
          throw notFound(
            "submission_not_found",
            `Not submissions of ${entrant.id} to '${eventId}': ${unknown.join(", ")}.`,
            {
              unknown,
            },
          );
        }
      }
      await submissionStore.clearFinals(trx, eventId, entrant.id);
      if (unique.length > 0) await submissionStore.markFinals(trx, eventId, entrant.id, unique);
    });
    return { event_id: eventId, entrant: entrant.id, finals: unique, max_finals: task.max_finals };
  }
}
