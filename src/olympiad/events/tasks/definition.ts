import { randomBytes } from "node:crypto";
import { badRequest, conflict, Problem } from "../../../http/problem.js";
import { quarterOf, seasonOf } from "../../season.js";
import { eventOr404, type TaskContext, taskOf } from "./context.js";
import { type Metric, type MetricId, metricOf } from "./metrics.js";
import { type FileFormat, parseTable } from "./parse.js";
import type { TaskKeys } from "./scores.js";
import { isPublicRow, sha256Hex } from "./split.js";
import { taskStore } from "./store.js";
import type { TaskFileRow, TaskRow } from "./tables.js";

/**
 * A scored event's task as the operator sets it (docs/olympiad-tasks.md): description, public files,
 * hidden key, metric, split, window and quota, checked and committed on the chain (the key's hash)
 * until the task opens.
 */

export const DEFAULT_PUBLIC_PCT = 30;
export const DEFAULT_DAILY_QUOTA = 5;
export const DEFAULT_MAX_FINALS = 2;
export const MAX_FILES = 10;

export interface TaskInput {
  description: string;
  metric: MetricId;
  k?: number | undefined;
  id_column?: string | undefined;
  value_column?: string | undefined;
  key: { format: FileFormat; content: string };
  files?: { name: string; media_type?: string | undefined; content: string }[] | undefined;
  public_pct?: number | undefined;
  split_seed?: string | undefined;
  opens_at: string;
  closes_at: string;
  daily_quota?: number | undefined;
  max_file_bytes?: number | undefined;
  max_finals?: number | undefined;
}

export class TaskDefinition {
  constructor(
    private readonly ctx: TaskContext,
    private readonly keys: TaskKeys,
  ) {}

  /** `PUT /api/admin/olympiad/events/:event_id/task`: sets the task until it opens; commits the key's hash on the chain. */
  async setTask(eventId: string, input: TaskInput, actor: string): Promise<{ created: boolean; task: TaskRow }> {
    eventOr404(this.ctx, eventId);
    const now = this.ctx.now();
    const metric = metricOf(input.metric) as Metric;
    if (metric.needsK && input.k === undefined) {
      throw badRequest("task_k_required", `${metric.id} needs k (how many predicted ids of a row count).`);
    }
    const opens = Date.parse(input.opens_at);
    const closes = Date.parse(input.closes_at);
    if (Number.isNaN(opens) || Number.isNaN(closes) || closes <= opens || closes <= now.getTime()) {
      throw badRequest("task_window_invalid", "opens_at must be before closes_at, and closes_at in the future.", {
        opens_at: input.opens_at,
        closes_at: input.closes_at,
      });
    }
    const existing = await taskOf(this.ctx.db, eventId);
    if (existing && now.getTime() >= Date.parse(existing.opens_at)) {
      throw conflict(
        "task_already_open",
        `The task of '${eventId}' opened at ${existing.opens_at}; its key and rules are committed and cannot change.`,
        { opens_at: existing.opens_at, commit_seq: existing.commit_seq },
      );
    }
    const season = seasonOf(this.ctx.config, now);
    const closeDate = new Date(closes);
    const closeSeason = seasonOf(this.ctx.config, closeDate);
    let quarter: TaskRow["quarter"];
    if (!closeSeason.registration_open) quarter = "tryouts";
    else {
      const q = quarterOf(closeDate);
      if (q === "Q4") {
        throw badRequest(
          "task_close_in_archive_quarter",
          "The close falls in Q4, the archive quarter, which has no counting events.",
          { closes_at: input.closes_at },
        );
      }
      quarter = q;
    }
    const ceiling = this.ctx.config.olympiadTasks.submissionMaxBytes;
    const maxFileBytes = input.max_file_bytes ?? ceiling;
    if (maxFileBytes > ceiling) {
      throw badRequest(
        "task_file_limit_too_high",
        `max_file_bytes is at most ${ceiling} (OLYMPIAD_SUBMISSION_MAX_BYTES).`,
        {
          max: ceiling,
        },
      );
    }
    const tooLarge = [
      { name: "key", text: input.key.content },
      ...(input.files ?? []).map((f) => ({ name: f.name, text: f.content })),
    ].find((f) => Buffer.byteLength(f.text, "utf8") > ceiling);
    if (tooLarge) {
      throw new Problem(
        413,
        "task_file_too_large",
        `'${tooLarge.name}' is larger than ${ceiling} bytes (OLYMPIAD_SUBMISSION_MAX_BYTES).`,
        { name: tooLarge.name, max: ceiling },
      );
    }
    const cols = {
      idColumn: input.id_column ?? "id",
      valueColumn: input.value_column ?? "prediction",
      kind: metric.kind,
    };
    const parsed = parseTable(input.key.content, input.key.format, cols);
    if (!parsed.ok) {
      throw badRequest("task_key_invalid", `The answer key does not parse: ${parsed.issues[0]?.problem}.`, {
        issues: parsed.issues,
      });
    }
    const publicBp = (input.public_pct ?? DEFAULT_PUBLIC_PCT) * 100;
    const seed = input.split_seed ?? randomBytes(16).toString("hex");
    const publicRows = parsed.rows.filter((r) => isPublicRow(seed, r.id, publicBp)).length;
    if (publicRows === 0 || publicRows === parsed.rows.length) {
      throw badRequest(
        "task_split_empty",
        `The split leaves the ${publicRows === 0 ? "public" : "private"} part empty (${parsed.rows.length} rows at ${publicBp / 100} %); add rows or choose another seed.`,
        { key_rows: parsed.rows.length },
      );
    }
    const files: TaskFileRow[] = (input.files ?? []).map((f) => ({
      event_id: eventId,
      name: f.name,
      media_type: f.media_type ?? "text/plain; charset=utf-8",
      content: f.content,
      sha256: sha256Hex(f.content),
      bytes: Buffer.byteLength(f.content, "utf8"),
    }));
    if (new Set(files.map((f) => f.name)).size !== files.length) {
      throw badRequest("task_file_name_repeated", "Two public files have the same name.");
    }
    const at = now.toISOString();
    const keySha = sha256Hex(input.key.content);
    const row: TaskRow = {
      event_id: eventId,
      season_id: season.id,
      quarter,
      description: input.description,
      metric: metric.id,
      k: metric.needsK ? (input.k as number) : null,
      id_column: cols.idColumn,
      value_column: cols.valueColumn,
      key_format: input.key.format,
      key_text: input.key.content,
      key_sha256: keySha,
      key_rows: parsed.rows.length,
      public_bp: publicBp,
      split_seed: seed,
      opens_at: new Date(opens).toISOString(),
      closes_at: new Date(closes).toISOString(),
      daily_quota: input.daily_quota ?? DEFAULT_DAILY_QUOTA,
      max_file_bytes: maxFileBytes,
      max_finals: input.max_finals ?? DEFAULT_MAX_FINALS,
      commit_seq: null,
      created_at: existing?.created_at ?? at,
      updated_at: at,
      closed_at: null,
      record_seq: null,
      close_error: null,
      scoring_lease_until: null,
      scoring_owner: null,
    };
    // The commitment: everything that decides the scores, with the key's and the seed's hashes.
    const commitment = {
      event_id: eventId,
      season_id: row.season_id,
      quarter,
      metric: row.metric,
      k: row.k,
      better: metric.better,
      id_column: row.id_column,
      value_column: row.value_column,
      key_format: row.key_format,
      key_sha256: keySha,
      key_rows: row.key_rows,
      public_bp: publicBp,
      split_seed_sha256: sha256Hex(seed),
      opens_at: row.opens_at,
      closes_at: row.closes_at,
      files: files.map((f) => ({ name: f.name, sha256: f.sha256 })),
    };
    await this.ctx.records.appendOwn("task", commitment, actor, async (trx, entry) => {
      row.commit_seq = entry.seq;
      if (existing) {
        await taskStore.deleteTask(trx, eventId);
        await taskStore.deleteFiles(trx, eventId);
      }
      await taskStore.insertTask(trx, row);
      if (files.length > 0) await taskStore.insertFiles(trx, files);
    });
    this.keys.clear();
    return { created: !existing, task: row };
  }
}
