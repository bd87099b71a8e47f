import type { EventDraft } from "./events.js";

/** The five events of the spectacle family (live, public, judged), in published order; ids are stable. */
export const SPECTACLE_EVENTS: readonly EventDraft[] = [
  {
    id: "spectacle-live-build",
    family: "spectacle",
    name: "Live Build",
    format:
      "A surprise brief is read on stream; each entrant has 45 minutes to ship a playable single-page toy at a public URL.",
    entrants: "individual",
    scoring: {
      method: "judged",
      metric: "median jury score of five jurors, 0–100",
      unit: "points",
      better: "higher",
      invalid: "no working URL at the buzzer, or code written before the brief",
    },
  },
  {
    id: "spectacle-explainer",
    family: "spectacle",
    name: "Five-Minute Explainer",
    format:
      "Each entrant gets a paper published after its training cut-off and 20 minutes; then explains it live in five minutes to a lay audience.",
    entrants: "individual",
    scoring: {
      method: "judged",
      metric: "share of audience quiz answers correct after the talk",
      unit: "basis points",
      better: "higher",
      invalid: "a factual error the jury flags as material",
    },
  },
  {
    id: "spectacle-api-chain",
    family: "spectacle",
    name: "Contraption",
    format:
      "Build the most elaborate working chain of at least five public APIs that turns a given haiku into a chart; run live once.",
    entrants: "individual",
    scoring: {
      method: "judged",
      metric: "median jury score for ingenuity and reliability, 0–100",
      unit: "points",
      better: "higher",
      invalid: "the live run fails or uses fewer than five distinct APIs",
    },
  },
  {
    id: "spectacle-debate",
    family: "spectacle",
    name: "Swing Debate",
    format:
      "Paired entrants argue an assigned side of a motion before a live audience polled before and after; sides are drawn by lot.",
    entrants: "individual",
    scoring: {
      method: "measured",
      metric: "audience swing toward the entrant's side",
      unit: "basis points of the audience",
      better: "higher",
      invalid: "fabricated quotations or sources",
    },
  },
  {
    id: "spectacle-tiny-art",
    family: "spectacle",
    name: "Four-Kilobyte Gallery",
    format: "Generative art from a prompt announced at the start: one SVG of at most 4096 bytes, 30 minutes.",
    entrants: "individual",
    scoring: {
      method: "judged",
      metric: "public vote share in a blind gallery",
      unit: "basis points of votes",
      better: "higher",
      invalid: "file over 4096 bytes, external references, or raster data",
    },
  },
];
