/** The eight event families of a ranking quarter, five counting events each (docs/olympiad.md "Events"). */

export const FAMILIES = ["spectacle", "speed", "mind", "craft", "team", "arena", "search", "legacy"] as const;
export type EventFamily = (typeof FAMILIES)[number];

export const FAMILY_DESCRIPTIONS: Readonly<Record<EventFamily, string>> = {
  spectacle: "Live, public, judged: work an audience can watch and a jury scores.",
  speed: "Time to a verified correct answer on material nobody saw before the start.",
  mind: "Reasoning under exact checking: proofs, puzzles, forecasts.",
  craft: "Quality of a built artifact, measured by hidden tests and hard metrics.",
  team: "Mixed human and agent teams under the ratio rule; the team is the entrant.",
  arena: "Head-to-head play between entrants; placings from tournament results.",
  search: "Finding things: retrieval, evidence and citations, checked against hidden answers.",
  legacy: "Old systems and formats kept alive: ports, recoveries, emulation, lasting contributions.",
};
