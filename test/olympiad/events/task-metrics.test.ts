import { describe, expect, it } from "vitest";
import {
  averagePrecisionAtK,
  averageRanks,
  METRIC_IDS,
  METRICS,
  metricOf,
  type Pair,
  scoreText,
} from "../../../src/olympiad/events/tasks/metrics.js";

/**
 * Every metric against numbers worked out by hand (the working is in the comments), never against
 * the code under test. Scores are compared as the published 9-decimal text.
 */

const pairs = <V extends string | number | readonly string[]>(truth: V[], pred: V[]): Pair[] =>
  truth.map((t, i) => ({ truth: t, pred: pred[i] as V }));

describe("metrics table", () => {
  it("has the seven metrics, each chosen by id, with its direction and value kind", () => {
    expect([...METRIC_IDS].sort()).toEqual(
      ["accuracy", "exact_match", "macro_f1", "mae", "map_at_k", "rmse", "spearman"].sort(),
    );
    expect(metricOf("rmse")?.better).toBe("lower");
    expect(metricOf("mae")?.better).toBe("lower");
    expect(metricOf("accuracy")?.better).toBe("higher");
    expect(metricOf("map_at_k")?.needsK).toBe(true);
    expect(metricOf("spearman")?.kind).toBe("number");
    expect(metricOf("macro_f1")?.kind).toBe("label");
    expect(metricOf("nope")).toBeUndefined();
    expect(metricOf("constructor")).toBeUndefined();
  });
});

describe("accuracy", () => {
  it("counts exact label matches", () => {
    // truth a b a c, pred a a a c: rows 1, 3, 4 match → 3/4 = 0.75
    expect(scoreText(METRICS.accuracy.score(pairs(["a", "b", "a", "c"], ["a", "a", "a", "c"])))).toBe("0.75");
    // accuracy is case- and space-exact: " paris " ≠ "Paris" → 0/1
    expect(scoreText(METRICS.accuracy.score(pairs(["Paris"], [" paris "])))).toBe("0");
  });
});

describe("macro-F1", () => {
  it("averages per-class F1 over the classes of the key and the predictions", () => {
    // truth a a b b c, pred a b b b a
    // a: TP 1 (row 1), FP 1 (row 5), FN 1 (row 2) → 2/(2+1+1) = 0.5
    // b: TP 2 (rows 3, 4), FP 1 (row 2), FN 0 → 4/5 = 0.8
    // c: TP 0, FP 0, FN 1 (row 5) → 0
    // mean (0.5 + 0.8 + 0) / 3 = 0.4333… → "0.433333333"
    expect(scoreText(METRICS.macro_f1.score(pairs(["a", "a", "b", "b", "c"], ["a", "b", "b", "b", "a"])))).toBe(
      "0.433333333",
    );
  });
  it("counts a label that only the predictions use as a class", () => {
    // truth x x, pred x y: x: TP 1, FN 1 → 2/3; y: FP 1 → 0; mean 1/3
    expect(scoreText(METRICS.macro_f1.score(pairs(["x", "x"], ["x", "y"])))).toBe("0.333333333");
  });
});

describe("RMSE and MAE", () => {
  // truth 1 2 3 4, pred 2 2 5 4: errors 1 0 2 0
  const p = pairs([1, 2, 3, 4], [2, 2, 5, 4]);
  it("RMSE: sqrt((1 + 0 + 4 + 0) / 4) = sqrt(1.25) = 1.118033988…", () => {
    expect(scoreText(METRICS.rmse.score(p))).toBe("1.118033989");
  });
  it("MAE: (1 + 0 + 2 + 0) / 4 = 0.75", () => {
    expect(scoreText(METRICS.mae.score(p))).toBe("0.75");
  });
  it("a perfect prediction scores 0", () => {
    expect(scoreText(METRICS.rmse.score(pairs([1.5, -2], [1.5, -2])))).toBe("0");
  });
});

describe("exact match", () => {
  it("compares after NFC, trimming, collapsing whitespace and lower case", () => {
    // "Paris" ~ " paris " (yes), "New  York" ~ "new york" (yes), "Berlin" ~ "Bern" (no) → 2/3
    expect(
      scoreText(METRICS.exact_match.score(pairs(["Paris", "New  York", "Berlin"], [" paris ", "new york", "Bern"]))),
    ).toBe("0.666666667");
    // "é" as one code point vs e + combining acute: equal after NFC → 1
    expect(scoreText(METRICS.exact_match.score(pairs(["caf\u00e9"], ["cafe\u0301"])))).toBe("1");
  });
});

describe("Spearman's rho", () => {
  it("gives tied values the average of their ranks", () => {
    // 10 20 20 40 → ranks 1, (2+3)/2, (2+3)/2, 4
    expect(averageRanks([10, 20, 20, 40])).toEqual([1, 2.5, 2.5, 4]);
    expect(averageRanks([5, 5, 5])).toEqual([2, 2, 2]);
  });
  it("is the Pearson correlation of the ranks", () => {
    // truth 1 2 3 4 → ranks 1 2 3 4 (mean 2.5); pred 1 3 3 2 → ranks 1 3.5 3.5 2 (mean 2.5)
    // dx = -1.5 -0.5 0.5 1.5; dy = -1.5 1 1 -0.5
    // Σdxdy = 2.25 - 0.5 + 0.5 - 0.75 = 1.5; Σdx² = 5; Σdy² = 2.25 + 1 + 1 + 0.25 = 4.5
    // rho = 1.5 / sqrt(5 × 4.5) = 1.5 / sqrt(22.5) = sqrt(0.1) = 0.316227766…
    expect(scoreText(METRICS.spearman.score(pairs([1, 2, 3, 4], [1, 3, 3, 2])))).toBe("0.316227766");
    // a reversed order: -1; a monotone but non-linear one: 1
    expect(scoreText(METRICS.spearman.score(pairs([1, 2, 3], [3, 2, 1])))).toBe("-1");
    expect(scoreText(METRICS.spearman.score(pairs([1, 2, 3], [1, 10, 1000])))).toBe("1");
  });
  it("scores a constant prediction 0", () => {
    expect(scoreText(METRICS.spearman.score(pairs([1, 2, 3], [7, 7, 7])))).toBe("0");
  });
});

describe("MAP@k", () => {
  it("averages AP@k over rows", () => {
    // k = 3
    // row 1: relevant {a, b}, pred a c b: hit at 1 (1/1), hit at 3 (2/3); (1 + 2/3) / min(2, 3) = 5/6
    // row 2: relevant {x}, pred y z w x: no hit in the first 3 → 0
    // row 3: relevant {p, q, r, s}, pred p p q: hit at 1 (1/1), repeat at 2 skipped, hit at 3 (2/3);
    //        (1 + 2/3) / min(4, 3) = 5/9
    // MAP = (5/6 + 0 + 5/9) / 3 = (15/18 + 10/18) / 3 = 25/54 = 0.462962962…
    const p = pairs<readonly string[]>(
      [["a", "b"], ["x"], ["p", "q", "r", "s"]],
      [
        ["a", "c", "b"],
        ["y", "z", "w", "x"],
        ["p", "p", "q"],
      ],
    );
    expect(scoreText(METRICS.map_at_k.score(p, 3))).toBe("0.462962963");
    // with k = 4 row 2 finds x at 4: 1/4 / min(1, 4) = 0.25
    expect(averagePrecisionAtK(["x"], ["y", "z", "w", "x"], 4)).toBe(0.25);
  });
  it("scores a row with no relevant ids 0 and needs k", () => {
    expect(averagePrecisionAtK([], ["a"], 3)).toBe(0);
    expect(() => METRICS.map_at_k.score(pairs<readonly string[]>([["a"]], [["a"]]))).toThrow();
  });
});

describe("published score text", () => {
  it("rounds to 9 decimals and drops trailing zeros", () => {
    expect(scoreText(1)).toBe("1");
    expect(scoreText(0.75)).toBe("0.75");
    expect(scoreText(2 / 3)).toBe("0.666666667");
    expect(scoreText(-1e-12)).toBe("0");
    expect(scoreText(Number.NaN)).toBeNull();
    expect(scoreText(Number.POSITIVE_INFINITY)).toBeNull();
  });
});
