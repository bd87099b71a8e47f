/**
 * The metrics a scored event can use (docs/olympiad-tasks.md "Metrics"): one interface, chosen by
 * name from one table (as the codec's chambers are). Every metric reads the key's rows paired with
 * the prediction of the same id, in key order, and answers one number; `better` says which way
 * ranks. Pure and deterministic, so anyone holding the published key can re-score.
 *
 * Value kinds: `label` (a string, compared exactly), `number` (a finite decimal), `ranking` (an
 * ordered list of item ids; the key's value is the set of relevant ids).
 */

export type ValueKind = "label" | "number" | "ranking";
export type Value = string | number | readonly string[];

export interface Pair<V extends Value = Value> {
  truth: V;
  pred: V;
}

export interface Metric {
  id: MetricId;
  name: string;
  better: "higher" | "lower";
  kind: ValueKind;
  /** whether the task must give `k` (MAP@k) */
  needsK: boolean;
  /** what it computes, as published */
  rule: string;
  /** the score of the pairs (at least one pair); `k` only for metrics that need it */
  score(pairs: readonly Pair[], k?: number): number;
}

export const METRIC_IDS = ["accuracy", "macro_f1", "rmse", "mae", "exact_match", "spearman", "map_at_k"] as const;
export type MetricId = (typeof METRIC_IDS)[number];

const labels = (pairs: readonly Pair[]) => pairs as readonly Pair<string>[];
const numbers = (pairs: readonly Pair[]) => pairs as readonly Pair<number>[];
const rankings = (pairs: readonly Pair[]) => pairs as readonly Pair<readonly string[]>[];

/** Exact match's normalisation: Unicode NFC, trimmed, inner whitespace runs as one space, lower case. */
export function normaliseAnswer(s: string): string {
  return s.normalize("NFC").trim().replace(/\s+/gu, " ").toLowerCase();
}

/** 1-based ranks with ties given the average of the ranks they span (fractional ranking). */
export function averageRanks(values: readonly number[]): number[] {
  const order = values.map((v, i) => ({ v, i })).sort((a, b) => a.v - b.v || a.i - b.i);
  const ranks = new Array<number>(values.length);
  let start = 0;
  while (start < order.length) {
    let end = start;
    while (end + 1 < order.length && (order[end + 1] as { v: number }).v === (order[start] as { v: number }).v) end++;
    const avg = (start + 1 + (end + 1)) / 2;
    for (let j = start; j <= end; j++) ranks[(order[j] as { i: number }).i] = avg;
    start = end + 1;
  }
  return ranks;
}

function pearson(x: readonly number[], y: readonly number[]): number {
  const n = x.length;
  const mx = x.reduce((a, b) => a + b, 0) / n;
  const my = y.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = (x[i] as number) - mx;
    const dy = (y[i] as number) - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  // a constant column has no rank correlation: scored 0 (documented)
  if (sxx === 0 || syy === 0) return 0;
  return sxy / Math.sqrt(sxx * syy);
}

/** Average precision at k of one ranked list against a set of relevant ids (repeats count once). */
export function averagePrecisionAtK(relevant: readonly string[], predicted: readonly string[], k: number): number {
  const rel = new Set(relevant);
  if (rel.size === 0) return 0;
  const seen = new Set<string>();
  let hits = 0;
  let sum = 0;
  for (let i = 0; i < Math.min(k, predicted.length); i++) {
    const p = predicted[i] as string;
    if (seen.has(p)) continue;
    seen.add(p);
    if (rel.has(p)) {
      hits += 1;
      sum += hits / (i + 1);
    }
  }
  return sum / Math.min(rel.size, k);
}

const ALL: readonly Metric[] = [
  {
    id: "accuracy",
    name: "Accuracy",
    better: "higher",
    kind: "label",
    needsK: false,
    rule: "share of rows whose predicted label equals the key's label exactly",
    score(pairs) {
      const p = labels(pairs);
      return p.filter((x) => x.truth === x.pred).length / p.length;
    },
  },
  {
    id: "macro_f1",
    name: "Macro-F1",
    better: "higher",
    kind: "label",
    needsK: false,
    rule: "mean over every label seen in the key or the predictions of F1 = 2TP / (2TP + FP + FN) (0 when that is 0/0)",
    score(pairs) {
      // one pass: per label, true positives, false positives and false negatives
      const counts = new Map<string, { tp: number; fp: number; fn: number }>();
      const of = (c: string) => {
        let x = counts.get(c);
        if (!x) {
          x = { tp: 0, fp: 0, fn: 0 };
          counts.set(c, x);
        }
        return x;
      };
      for (const x of labels(pairs)) {
        if (x.pred === x.truth) of(x.truth).tp++;
        else {
          of(x.pred).fp++;
          of(x.truth).fn++;
        }
      }
      let sum = 0;
      for (const { tp, fp, fn } of counts.values()) {
        const d = 2 * tp + fp + fn;
        sum += d === 0 ? 0 : (2 * tp) / d;
      }
      return sum / counts.size;
    },
  },
  {
    id: "rmse",
    name: "Root mean squared error",
    better: "lower",
    kind: "number",
    needsK: false,
    rule: "sqrt(mean((prediction - key)^2))",
    score(pairs) {
      const p = numbers(pairs);
      return Math.sqrt(p.reduce((a, x) => a + (x.pred - x.truth) ** 2, 0) / p.length);
    },
  },
  {
    id: "mae",
    name: "Mean absolute error",
    better: "lower",
    kind: "number",
    needsK: false,
    rule: "mean(|prediction - key|)",
    score(pairs) {
      const p = numbers(pairs);
      return p.reduce((a, x) => a + Math.abs(x.pred - x.truth), 0) / p.length;
    },
  },
  {
    id: "exact_match",
    name: "Exact match",
    better: "higher",
    kind: "label",
    needsK: false,
    rule: "share of rows whose answer equals the key's after normalisation (Unicode NFC, trimmed, whitespace runs as one space, lower case)",
    score(pairs) {
      const p = labels(pairs);
      return p.filter((x) => normaliseAnswer(x.truth) === normaliseAnswer(x.pred)).length / p.length;
    },
  },
  {
    id: "spearman",
    name: "Spearman's rho",
    better: "higher",
    kind: "number",
    needsK: false,
    rule: "Pearson correlation of the average ranks (ties share the mean of their ranks) of predictions and key; 0 when either is constant",
    score(pairs) {
      const p = numbers(pairs);
      return pearson(averageRanks(p.map((x) => x.truth)), averageRanks(p.map((x) => x.pred)));
    },
  },
  {
    id: "map_at_k",
    name: "Mean average precision at k",
    better: "higher",
    kind: "ranking",
    needsK: true,
    rule: "mean over rows of AP@k = (sum over the first k predicted ids, repeats counted once, of precision at each relevant hit) / min(|relevant|, k); a row with no relevant ids scores 0",
    score(pairs, k) {
      if (k === undefined || !Number.isSafeInteger(k) || k < 1) throw new Error("map_at_k needs a positive integer k");
      const p = rankings(pairs);
      return p.reduce((a, x) => a + averagePrecisionAtK(x.truth, x.pred, k), 0) / p.length;
    },
  },
];

/** The table: metric id → metric. */
export const METRICS: Readonly<Record<MetricId, Metric>> = Object.fromEntries(ALL.map((m) => [m.id, m])) as Record<
  MetricId,
  Metric
>;

export function metricOf(id: string): Metric | undefined {
  return (METRIC_IDS as readonly string[]).includes(id) ? METRICS[id as MetricId] : undefined;
}

/** Decimal places a score is published with (fixed, so a re-scorer gets the same string). */
export const SCORE_DECIMALS = 9;

/**
 * The published score: the metric's value rounded to 9 decimals (as `Number.prototype.toFixed`
 * does), trailing zeros dropped: "0.75", "1.290994449". null for a value that is not finite.
 */
export function scoreText(value: number): string | null {
  if (!Number.isFinite(value) || Math.abs(value) >= 1e20) return null;
  const fixed = value.toFixed(SCORE_DECIMALS);
  const trimmed = fixed.includes(".") ? fixed.replace(/0+$/, "").replace(/\.$/, "") : fixed;
  return trimmed === "-0" ? "0" : trimmed;
}
