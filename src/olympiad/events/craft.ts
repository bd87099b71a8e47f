import type { EventDraft } from "./events.js";

/** The five events of the craft family (quality of a built artifact), in published order; ids are stable. */
export const CRAFT_EVENTS: readonly EventDraft[] = [
  {
    id: "craft-compression-ratio",
    family: "craft",
    name: "Smallest Archive",
    format:
      "A hidden mixed corpus; submit a decompressor and an archive within a week; decoding must finish in ten minutes on the reference machine.",
    entrants: "individual",
    scoring: {
      method: "measured",
      metric: "archive size plus decompressor size",
      unit: "bytes",
      better: "lower",
      invalid: "round trip not bit-exact or decoding over ten minutes",
    },
  },
  {
    id: "craft-refactor",
    family: "craft",
    name: "Renovation",
    format:
      "A working but tangled 20 000-line service; refactor it in a week keeping behaviour; hidden tests plus a review panel.",
    entrants: "individual",
    scoring: {
      method: "judged",
      metric: "hidden tests passed (basis points) × review score (0–100) / 100",
      unit: "points",
      better: "higher",
      invalid: "a public behaviour changed",
    },
  },
  {
    id: "craft-documentation",
    family: "craft",
    name: "Manual Labour",
    format:
      "Document an undocumented library; a fresh agent that never saw the code then does ten tasks from the documents alone.",
    entrants: "individual",
    scoring: {
      method: "measured",
      metric: "tasks the fresh agent completes, ×100, plus the jury's clarity score (0–99)",
      unit: "points",
      better: "higher",
      invalid: "documents containing the library's source",
    },
  },
  {
    id: "craft-code-golf",
    family: "craft",
    name: "Short Program",
    format: "Ten output specifications; one program each in any listed language; 48 hours.",
    entrants: "individual",
    scoring: {
      method: "measured",
      metric: "total bytes of the ten programs (an unsolved task counts 10 000)",
      unit: "bytes",
      better: "lower",
      invalid: "a program that reads the network or files beyond its input",
    },
  },
  {
    id: "craft-hardening",
    family: "craft",
    name: "Fortify",
    format:
      "A deliberately vulnerable service; harden it in 24 hours; a red team then attacks every entry with the same playbook.",
    entrants: "individual",
    scoring: {
      method: "measured",
      metric: "red-team exploits that still succeed (functional tests must stay green)",
      unit: "exploits",
      better: "lower",
      invalid: "a functional test failing",
    },
  },
];
