import { type Metric, metricOf, type Pair, scoreText, type Value } from "./metrics.js";
import { parseTable, type TableRow } from "./parse.js";
import { compareScores, isPublicRow } from "./split.js";
import type { SubmissionRow, TaskRow } from "./tables.js";

/** A task's key as scoring reads it: its values by id and its public ids. */
export interface ParsedKey {
  values: Map<string, Value>;
  publicIds: Set<string>;
}

/** The keys of the tasks, parsed and split once per task (cleared when a task is set). */
export class TaskKeys {
  private readonly cache = new Map<string, ParsedKey>();

  clear(): void {
    this.cache.clear();
  }

  /** The key's values by id and its public ids (parsed and split once per task). */
  async of(task: TaskRow): Promise<ParsedKey> {
    const cached = this.cache.get(task.key_sha256 + task.event_id);
    if (cached) return cached;
    const metric = metricOf(task.metric) as Metric;
    const parsed = parseTable(task.key_text, task.key_format, {
      idColumn: task.id_column,
      valueColumn: task.value_column,
      kind: metric.kind,
    });
    if (!parsed.ok) throw new Error(`stored key of ${task.event_id} does not parse`);
    const map = {
      values: new Map(parsed.rows.map((r) => [r.id, r.value])),
      publicIds: new Set(
        parsed.rows.filter((r) => isPublicRow(task.split_seed, r.id, task.public_bp)).map((r) => r.id),
      ),
    };
    if (this.cache.size > 50) this.cache.clear();
    this.cache.set(task.key_sha256 + task.event_id, map);
    return map;
  }

  /** The public and private scores of one file against the key. */
  async scoresOf(
    task: TaskRow,
    sub: Pick<SubmissionRow, "content" | "format">,
  ): Promise<{ public_score: string; private_score: string } | { error: string }> {
    const metric = metricOf(task.metric) as Metric;
    const key = await this.of(task);
    const parsed = parseTable(sub.content, sub.format, {
      idColumn: task.id_column,
      valueColumn: task.value_column,
      kind: metric.kind,
    });
    if (!parsed.ok) return { error: `the file no longer parses: ${parsed.issues[0]?.problem}` };
    const byId = new Map(parsed.rows.map((r: TableRow) => [r.id, r.value]));
    const pub: Pair[] = [];
    const priv: Pair[] = [];
    for (const [id, truth] of key.values) {
      const pred = byId.get(id);
      if (pred === undefined) return { error: `id ${id} is missing` };
      (key.publicIds.has(id) ? pub : priv).push({ truth, pred });
    }
    try {
      const p = scoreText(metric.score(pub, task.k ?? undefined));
      const q = scoreText(metric.score(priv, task.k ?? undefined));
      if (p === null || q === null) return { error: "the metric's value is not a finite number" };
      return { public_score: p, private_score: q };
    } catch (err) {
      return { error: `the metric failed: ${err instanceof Error ? err.message : String(err)}` };
    }
  }
}

/** a beats b: the better score by the metric's direction; equal scores go to the earlier submission. */
export function better(metric: Metric, a: string, aAt: string, b: string, bAt: string): boolean {
  const c = compareScores(a, b);
  if (c !== 0) return metric.better === "higher" ? c > 0 : c < 0;
  return aAt < bAt;
}
