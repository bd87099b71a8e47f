/**
 * The fixed SKU catalog: pure data. Prices are integer US cents.
 * Everything that shows a price (catalog, payments matrix, discovery documents,
 * x402 challenges, checkout sessions) derives it from a Catalog built from this list.
 */

export type ProductKind = "license" | "service" | "support" | "olympiad";

export interface ProductDefinition {
  sku: string;
  name: string;
  amountCents: number;
  kind: ProductKind;
  blurb: string;
  /** What the buyer receives once the order is granted. */
  grants: string;
}

export const PRODUCTS: readonly ProductDefinition[] = [
  {
    sku: "cddg-split",
    name: "CDDG Split licence",
    amountCents: 19900,
    kind: "license",
    blurb: "Residual-governance twin split: a licence for the CDDG split toolkit.",
    grants: "a licence key for the CDDG split toolkit",
  },
  {
    sku: "zrw-n00b",
    name: "ZRW n00b licence (starting gate)",
    amountCents: 7900,
    kind: "license",
    blurb: "Starting-gate licence for the ZRW integer codec: one project, community support.",
    grants: "a ZRW starting-gate licence key",
  },
  {
    sku: "zrw-pro",
    name: "ZRW Pro licence",
    amountCents: 24900,
    kind: "license",
    blurb: "Pro licence for the ZRW integer codec: commercial use in one product.",
    grants: "a ZRW Pro licence key",
  },
  {
    sku: "zrw-l33t",
    name: "ZRW l33t licence (unlimited)",
    amountCents: 69900,
    kind: "license",
    blurb: "Unlimited ZRW licence: every product of one organisation.",
    grants: "an unlimited ZRW licence key",
  },
  {
    sku: "blackjack",
    name: "Blackjack licence",
    amountCents: 19900,
    kind: "license",
    blurb: "Licence for the Blackjack simulation kit.",
    grants: "a Blackjack licence key",
  },
  {
    sku: "shard-zip",
    name: "Shard Zip licence",
    amountCents: 19900,
    kind: "license",
    blurb: "Licence for Shard Zip, the chunked archive format built on the Lab Phi codec.",
    grants: "a Shard Zip licence key",
  },
  {
    sku: "shard-tsdb",
    name: "Shard TSDB licence",
    amountCents: 19900,
    kind: "license",
    blurb: "Licence for Shard TSDB, time-series storage with the float and delta chambers.",
    grants: "a Shard TSDB licence key",
  },
  {
    sku: "lab-phi",
    name: "Lab Phi licence",
    amountCents: 19900,
    kind: "license",
    blurb: "Commercial licence for the Lab Phi codec engine (omni).",
    grants: "a Lab Phi codec licence key",
  },
  {
    sku: "support-integration",
    name: "Integration support",
    amountCents: 19900,
    kind: "service",
    blurb: "Help wiring the catalog, x402 rails or codec into your stack.",
    grants: "an integration support ticket, answered by e-mail",
  },
  {
    sku: "consulting",
    name: "Consulting session",
    amountCents: 25000,
    kind: "service",
    blurb: "A consulting session on compression, agent commerce or payments.",
    grants: "a consulting session, scheduled by e-mail",
  },
  {
    sku: "sponsor",
    name: "Sponsor",
    amountCents: 2900,
    kind: "support",
    blurb: "Sponsor Lab Phi's open work and the olympiad prize pool.",
    grants: "a sponsor acknowledgement",
  },
  {
    sku: "donate",
    name: "Donation",
    amountCents: 2999,
    kind: "support",
    blurb: "A donation to the olympiad prize pool.",
    grants: "a donation receipt",
  },
  {
    sku: "gao-entry",
    name: "Great Agentic Olympiad entry",
    amountCents: 100,
    kind: "olympiad",
    blurb: "One entry seat in the Great Agentic Olympiad: unlocks the current ranking quarter.",
    grants: "an olympiad entry seat",
  },
];

/** alias → canonical sku (lower case). `try-gate` is a retired target, not a product. */
export const ALIASES: Readonly<Record<string, string>> = {
  residual: "cddg-split",
  "residual-governance": "cddg-split",
  twin: "cddg-split",
  cddg: "cddg-split",
  split: "cddg-split",
  zrw: "zrw-n00b",
  n00b: "zrw-n00b",
  noob: "zrw-n00b",
  starting: "zrw-n00b",
  "zrw-starting-gate": "zrw-n00b",
  "starting-gate": "zrw-n00b",
  pro: "zrw-pro",
  "zrw-pro-starter": "zrw-pro",
  l33t: "zrw-l33t",
  "l33t-sauc3": "zrw-l33t",
  "zrw-l33t-unlimited": "zrw-l33t",
  unlimited: "zrw-l33t",
  support: "support-integration",
  integration: "support-integration",
  donation: "donate",
  gao: "gao-entry",
  olympiad: "gao-entry",
  "olympiad-entry": "gao-entry",
  "great-agentic-olympiad": "gao-entry",
  chip: "try-gate",
  "try-gate-chip-in": "try-gate",
};

/** Skus that once existed and are retired: they answer 410 Gone. */
export const RETIRED_SKUS: Readonly<Record<string, string>> = {
  "try-gate": "The try gate is retired: suite jobs are free up to the cap, then metered per GB.",
};
