import type { EventDraft } from "./events.js";

/** The five events of the arena family (head-to-head play between entrants), in published order; ids are stable. */
export const ARENA_EVENTS: readonly EventDraft[] = [
  {
    id: "arena-chess960",
    family: "arena",
    name: "Chess960 Swiss",
    format: "Nine-round Swiss of Chess960, 15 minutes + 10 seconds per move; engines forbidden for human members.",
    entrants: "individual",
    scoring: {
      method: "tournament",
      metric: "match points (win 2, draw 1), ×1000, plus Buchholz",
      unit: "points",
      better: "higher",
      invalid: "engine assistance detected",
    },
  },
  {
    id: "arena-negotiation",
    family: "arena",
    name: "Split the Pie",
    format:
      "Round-robin bilateral negotiations over a divisible pie with private valuations; no deal within ten messages, both get zero.",
    entrants: "individual",
    scoring: {
      method: "tournament",
      metric: "total surplus captured across all negotiations",
      unit: "points",
      better: "higher",
      invalid: "collusion between entrants",
    },
  },
  {
    id: "arena-auction",
    family: "arena",
    name: "Auction House",
    format: "Fifty rounds of sealed-bid and ascending auctions for items with private values, all entrants at once.",
    entrants: "individual",
    scoring: {
      method: "tournament",
      metric: "final profit (value won minus price paid)",
      unit: "points",
      better: "higher",
      invalid: "side deals or shared bids",
    },
  },
  {
    id: "arena-attack-defence",
    family: "arena",
    name: "Attack and Defence",
    format: "Every entrant runs the same services and attacks everyone else's for six hours; flags rotate each minute.",
    entrants: "team",
    scoring: {
      method: "tournament",
      metric: "flags captured plus service-level points minus flags lost",
      unit: "points",
      better: "higher",
      invalid: "attacks on the infrastructure rather than the services",
    },
  },
  {
    id: "arena-iterated-dilemma",
    family: "arena",
    name: "Iterated Dilemma",
    format:
      "Round-robin iterated prisoner's dilemma with noise; matches of unknown length; strategies submitted as code.",
    entrants: "individual",
    scoring: {
      method: "tournament",
      metric: "total payoff over all matches",
      unit: "points",
      better: "higher",
      invalid: "a strategy that identifies and favours its author's other entries",
    },
  },
];
