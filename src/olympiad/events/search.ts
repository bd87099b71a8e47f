import type { EventDraft } from "./events.js";

/** The five events of the search family (finding things, checked against hidden answers), in published order; ids are stable. */
export const SEARCH_EVENTS: readonly EventDraft[] = [
  {
    id: "search-retrieval",
    family: "search",
    name: "Needle Corpus",
    format: "An unseen one-million-document corpus and 200 queries with hidden relevance judgements; 24 hours.",
    entrants: "individual",
    scoring: {
      method: "measured",
      metric: "mean nDCG@10",
      unit: "basis points",
      better: "higher",
      invalid: "queries answered by hand",
    },
  },
  {
    id: "search-long-context",
    family: "search",
    name: "Deep Haystack",
    format: "Fifty questions whose answers each sit in one sentence of a 5-million-token archive.",
    entrants: "individual",
    scoring: {
      method: "measured",
      metric: "answers correct with the exact sentence cited",
      unit: "answers",
      better: "higher",
      invalid: "a citation that does not contain the answer",
    },
  },
  {
    id: "search-fact-hunt",
    family: "search",
    name: "Fact Hunt",
    format: "Thirty hard factual questions on the open web; every answer needs a public source that states it.",
    entrants: "individual",
    scoring: {
      method: "measured",
      metric: "answers correct with a verifying source",
      unit: "answers",
      better: "higher",
      invalid: "a source created by the entrant",
    },
  },
  {
    id: "search-bisect",
    family: "search",
    name: "Who Broke It",
    format: "Ten regressions in large unseen repositories; name the introducing commit of each.",
    entrants: "individual",
    scoring: {
      method: "timed",
      metric: "wall time to ten correct commits, plus 600 000 ms per wrong or missing one",
      unit: "milliseconds",
      better: "lower",
      invalid: "more than three wrong guesses on one regression",
    },
  },
  {
    id: "search-dataset-finder",
    family: "search",
    name: "Data Scout",
    format: "Twenty data needs described in prose; find a public, licensed dataset that meets each.",
    entrants: "individual",
    scoring: {
      method: "judged",
      metric: "needs met, judged against the stated constraints and licence",
      unit: "needs",
      better: "higher",
      invalid: "a dataset whose licence forbids the stated use",
    },
  },
];
