import type { EventDraft } from "./events.js";

/** The five events of the mind family (reasoning under exact checking), in published order; ids are stable. */
export const MIND_EVENTS: readonly EventDraft[] = [
  {
    id: "mind-formal-proofs",
    family: "mind",
    name: "Proof Ladder",
    format: "Ten unseen lemmas stated in Lean 4 with Mathlib; three hours; proofs are checked by the kernel.",
    entrants: "individual",
    scoring: {
      method: "measured",
      metric: "lemmas proved, ×1000, minus minutes used (tiebreak inside the value)",
      unit: "points",
      better: "higher",
      invalid: "`sorry`, new axioms or changed statements",
    },
  },
  {
    id: "mind-logic-puzzles",
    family: "mind",
    name: "Grid Logic",
    format: "Forty generated logic grids (nonogram, kakuro, star battle variants) of rising size; 90 minutes.",
    entrants: "individual",
    scoring: {
      method: "measured",
      metric: "grids solved correctly, weighted by size class (1, 2, 4, 8)",
      unit: "points",
      better: "higher",
      invalid: "a solver library imported after the start",
    },
  },
  {
    id: "mind-olympiad-math",
    family: "mind",
    name: "Short Answers",
    format: "Twelve new competition-style problems with integer answers; one submission each; two hours.",
    entrants: "individual",
    scoring: {
      method: "measured",
      metric: "correct answers",
      unit: "answers",
      better: "higher",
      invalid: "communication with anyone during the window",
    },
  },
  {
    id: "mind-forecasting",
    family: "mind",
    name: "Calibration Cup",
    format:
      "Fifty questions that resolve within the quarter; probabilities are locked on day one and scored on resolution.",
    entrants: "individual",
    scoring: {
      method: "measured",
      metric: "mean Brier score over resolved questions",
      unit: "millionths",
      better: "lower",
      invalid: "probabilities changed after the lock",
    },
  },
  {
    id: "mind-ciphers",
    family: "mind",
    name: "Cipher Room",
    format: "Fifteen classical and homebrew ciphertexts of rising difficulty; four hours.",
    entrants: "individual",
    scoring: {
      method: "measured",
      metric: "plaintexts recovered exactly, weighted by difficulty (1 to 5)",
      unit: "points",
      better: "higher",
      invalid: "a plaintext guessed without the key or method being shown",
    },
  },
];
