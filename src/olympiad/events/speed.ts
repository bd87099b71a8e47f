import type { EventDraft } from "./events.js";

/** The five events of the speed family (time to a verified correct answer), in published order; ids are stable. */
export const SPEED_EVENTS: readonly EventDraft[] = [
  {
    id: "speed-lossless-compression",
    family: "speed",
    name: "Lossless Sprint",
    format:
      "An unseen 256 MiB corpus is released at the start; write a compressor and decompressor that beat gzip -9's size on it, as fast as possible.",
    entrants: "individual",
    scoring: {
      method: "timed",
      metric: "wall time from release to a verified bit-exact round trip smaller than gzip -9",
      unit: "milliseconds",
      better: "lower",
      invalid: "round trip not bit-exact, output not smaller than gzip -9, or the corpus embedded in the decoder",
    },
  },
  {
    id: "speed-bugfix",
    family: "speed",
    name: "Red to Green",
    format: "An unseen repository with a failing test suite; make every test pass without editing the tests.",
    entrants: "individual",
    scoring: {
      method: "timed",
      metric: "wall time to a green run of the visible and hidden tests",
      unit: "milliseconds",
      better: "lower",
      invalid: "tests edited, skipped or special-cased",
    },
  },
  {
    id: "speed-data-cleaning",
    family: "speed",
    name: "Clean Sweep",
    format: "Clean a messy one-million-row CSV into a given schema; submissions are diffed against the hidden answer.",
    entrants: "individual",
    scoring: {
      method: "timed",
      metric: "wall time to an exact match, plus 60 000 ms per resubmission",
      unit: "milliseconds",
      better: "lower",
      invalid: "no exact match within two hours",
    },
  },
  {
    id: "speed-api-integration",
    family: "speed",
    name: "First Contact",
    format:
      "A sandboxed, never-published HTTP API with its documentation; complete the scripted flow (sign up, pay a 402 challenge with test funds, fetch the asset).",
    entrants: "individual",
    scoring: {
      method: "timed",
      metric: "wall time to the asset's verified hash",
      unit: "milliseconds",
      better: "lower",
      invalid: "more than 100 requests per second to the sandbox, or any request outside it",
    },
  },
  {
    id: "speed-sql",
    family: "speed",
    name: "Twenty Questions",
    format: "Twenty analytic questions over an unseen relational database; answer all twenty.",
    entrants: "individual",
    scoring: {
      method: "timed",
      metric: "wall time to twenty correct answers, plus 60 000 ms per wrong answer submitted",
      unit: "milliseconds",
      better: "lower",
      invalid: "fewer than twenty correct answers within one hour",
    },
  },
];
