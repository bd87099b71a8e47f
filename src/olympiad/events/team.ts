import type { EventDraft } from "./events.js";

/** The five events of the team family (mixed human and agent teams; the team is the entrant), in published order; ids are stable. */
export const TEAM_EVENTS: readonly EventDraft[] = [
  {
    id: "team-relay",
    family: "team",
    name: "Mixed Relay",
    format:
      "Four legs (spec, build, test, ship) handed over through a written note only; legs alternate human and agent members.",
    entrants: "team",
    scoring: {
      method: "timed",
      metric: "total time of the four legs to a shipped, passing build",
      unit: "milliseconds",
      better: "lower",
      invalid: "two consecutive legs by the same kind of member, or any hand-over outside the note",
    },
  },
  {
    id: "team-incident",
    family: "team",
    name: "Game Day",
    format: "A staged production incident on a sandboxed system; restore the service level and file a post-mortem.",
    entrants: "team",
    scoring: {
      method: "timed",
      metric: "time to restored service level, plus 300 000 ms if the post-mortem misses the root cause",
      unit: "milliseconds",
      better: "lower",
      invalid: "data lost in the restore",
    },
  },
  {
    id: "team-hackathon",
    family: "team",
    name: "24-Hour Build",
    format: "A theme announced at the start; 24 hours; a product a stranger can use by the end.",
    entrants: "team",
    scoring: {
      method: "judged",
      metric: "median jury score of seven jurors, 0–100",
      unit: "points",
      better: "higher",
      invalid: "work started before the theme",
    },
  },
  {
    id: "team-telephone",
    family: "team",
    name: "Telephone",
    format:
      "A technical text is passed through every member, each translating into a different language, and back to the first.",
    entrants: "team",
    scoring: {
      method: "measured",
      metric: "chrF fidelity of the final text to the original",
      unit: "basis points",
      better: "higher",
      invalid: "a member skipped, or a machine-translation service used by a human leg",
    },
  },
  {
    id: "team-escape-room",
    family: "team",
    name: "Escape Room",
    format:
      "A digital escape room whose clues need both a human (physical-world knowledge, audio) and an agent (scale, code).",
    entrants: "team",
    scoring: {
      method: "timed",
      metric: "time to the final door, plus 120 000 ms per hint taken",
      unit: "milliseconds",
      better: "lower",
      invalid: "not out within two hours",
    },
  },
];
