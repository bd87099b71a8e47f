/** Scored events' tables (migration 0020, docs/olympiad-tasks.md). Timestamps are ISO 8601 text. */

export interface TaskRow {
  /** one of the 40 events */
  event_id: string;
  season_id: string;
  /** the quarter the close falls in (Q1–Q3), or tryouts before open registration */
  quarter: "Q1" | "Q2" | "Q3" | "tryouts";
  description: string;
  metric: string;
  /** MAP@k's k; null for the other metrics */
  k: number | null;
  id_column: string;
  value_column: string;
  key_format: "csv" | "jsonl";
  /** the hidden answer key, as the operator gave it; served only after the close */
  key_text: string;
  key_sha256: string;
  key_rows: number;
  /** share of the key's rows in the public part, in basis points (3000 = 30 %) */
  public_bp: number;
  /** the split's seed (hex); secret until the close */
  split_seed: string;
  opens_at: string;
  closes_at: string;
  daily_quota: number;
  max_file_bytes: number;
  max_finals: number;
  /** the chain entry (kind `task`) that committed the key's hash */
  commit_seq: number | null;
  created_at: string;
  updated_at: string;
  closed_at: string | null;
  /** the chain entry with the results (or its latest correction) */
  record_seq: number | null;
  close_error: string | null;
  scoring_lease_until: string | null;
  scoring_owner: string | null;
}

export interface TaskFileRow {
  event_id: string;
  name: string;
  media_type: string;
  content: string;
  sha256: string;
  bytes: number;
}

export type SubmissionStatus = "pending" | "scored" | "failed";

export interface SubmissionRow {
  /** sub_… */
  id: string;
  event_id: string;
  /** the team (team events) or the participant (individual events) */
  entrant_id: string;
  entrant_kind: "participant" | "team";
  /** who sent it */
  participant_id: string;
  format: "csv" | "jsonl";
  content: string;
  sha256: string;
  bytes: number;
  rows: number;
  status: SubmissionStatus;
  public_score: string | null;
  /** never served before the close */
  private_score: string | null;
  error: string | null;
  /** 1 when selected as a final submission */
  final: number;
  created_at: string;
  scored_at: string | null;
}

export interface SubmissionCountRow {
  event_id: string;
  entrant_id: string;
  /** YYYY-MM-DD (UTC) */
  day: string;
  n: number;
}

export interface TaskTables {
  olympiad_tasks: TaskRow;
  olympiad_task_files: TaskFileRow;
  olympiad_submissions: SubmissionRow;
  olympiad_submission_counts: SubmissionCountRow;
}
