import { VERSIONS } from "../versions.js";
import { abs, type DiscoveryContext } from "./context.js";
import type { Idea, Ideas } from "./schemas.js";

/**
 * The idea lab: things the lab means to build or has built. An idea's status is derived
 * from the route table: `shipped` when every endpoint it lands as is served, `partial`
 * when some are, `proposed` when none are, `open` when it lands as no endpoint of its own
 * (a behaviour or a practice, not a route).
 */

export interface IdeaDefinition {
  id: string;
  bucket: keyof typeof BUCKETS;
  title: string;
  summary: string;
  lands_as: string[];
}

export const BUCKETS = {
  commerce: "selling to humans and agents",
  protocol: "x402 and payment-protocol behaviour",
  discovery: "how agents find and understand the service",
  olympiad: "the Great Agentic Olympiad",
  codec: "the compression engine and its faces",
  ops: "running the service",
} as const;

export const IDEA_STATUS_MEANING = {
  shipped: "every endpoint it lands as is served here",
  partial: "some of its endpoints are served here",
  proposed: "none of its endpoints is served yet",
  open: "not an endpoint: a behaviour or practice, tracked in the docs",
} as const;

export const IDEAS: readonly IdeaDefinition[] = [
  {
    id: "one-price-everywhere",
    bucket: "commerce",
    title: "One price, everywhere",
    summary:
      "A price lives once, in integer cents in the catalog; the catalog, payments matrix, agent document, llms.txt and every 402 derive it.",
    lands_as: ["GET /api/x402-products", "GET /api/payments", "GET /api/agent", "GET /llms.txt"],
  },
  {
    id: "claims-api",
    bucket: "commerce",
    title: "Claims through an API",
    summary:
      "Manual crypto transfers and wire invoices claimed with a request, not only an e-mail, and decided by an operator.",
    lands_as: ["POST /api/claims"],
  },
  {
    id: "hosted-checkout",
    bucket: "commerce",
    title: "Hosted card checkout from the catalog",
    summary: "Checkout sessions built only from server-side catalog prices, with idempotency keys and signed webhooks.",
    lands_as: ["POST /api/checkout"],
  },
  {
    id: "metered-suite",
    bucket: "commerce",
    title: "Metered suite jobs",
    summary: "Compression suite jobs free up to the cap, then metered per GB, billed on measured bytes.",
    lands_as: ["POST /api/x402-suite", "POST /api/ppp-quote", "POST /api/ppp-checkout"],
  },
  {
    id: "payment-identifier",
    bucket: "protocol",
    title: "Idempotent agent retries",
    summary:
      "Honour x402 payment-identifier ids so an agent retrying the same payment gets the same order, never a second one.",
    lands_as: [],
  },
  {
    id: "bazaar-listing",
    bucket: "protocol",
    title: "Bazaar listing in every 402",
    summary: "Every 402 carries extensions.bazaar with input and output schemas so facilitators can index the SKUs.",
    lands_as: [],
  },
  {
    id: "well-known-x402",
    bucket: "discovery",
    title: "/.well-known/x402",
    summary: "An origin-hosted resource list for x402 indexers, generated from the catalog.",
    lands_as: ["GET /.well-known/x402"],
  },
  {
    id: "agent-card",
    bucket: "discovery",
    title: "A2A agent card",
    summary: "/.well-known/agent-card.json describing the buy and codec skills for agent-to-agent clients.",
    lands_as: ["GET /.well-known/agent-card.json"],
  },
  {
    id: "api-catalog",
    bucket: "discovery",
    title: "RFC 9727 API catalog",
    summary: "/.well-known/api-catalog linking the OpenAPI description, llms.txt and agents.json.",
    lands_as: ["GET /.well-known/api-catalog"],
  },
  {
    id: "olympiad-ledger",
    bucket: "olympiad",
    title: "An olympiad that remembers",
    summary:
      "Registrations, teams, proposals and votes stored with identity; entry tied to a paid gao-entry order; tallies with the published weights.",
    lands_as: ["GET /api/olympiad", "POST /api/olympiad", "GET /olympiad.json", "GET /olympiad-records.json"],
  },
  {
    id: "standings-proof",
    bucket: "olympiad",
    title: "Standings anyone can recompute",
    summary: "Public standings with the measurements and commands behind every number.",
    lands_as: ["GET /standings.json"],
  },
  {
    id: "codec-web-demo",
    bucket: "codec",
    title: "Free web codec demo",
    summary: "Compress, decompress and bench against gzip-9 and brotli-11 in the browser, honestly lossless.",
    lands_as: ["POST /api/web-codec", "POST /api/omni"],
  },
  {
    id: "zrw-rail",
    bucket: "codec",
    title: "The ZRW integer rail",
    summary: "Raw int32 streams through compress, decompress and the full loop, with a round-trip check that can fail.",
    lands_as: ["POST /api/compress", "POST /api/decompress", "POST /api/process"],
  },
  {
    id: "join-the-work",
    bucket: "codec",
    title: "Join the work",
    summary:
      "A name, one sentence of intent and a 33-byte seed phrase (hashed, never stored) for public freemium access.",
    lands_as: ["POST /api/join-work"],
  },
  {
    id: "honest-metrics",
    bucket: "ops",
    title: "Metrics that are measured",
    summary: "Request counts and latency percentiles per route, in JSON and Prometheus text, from the running process.",
    lands_as: ["GET /api/lab/metrics", "GET /metrics"],
  },
];

function served(ctx: DiscoveryContext, e: string): boolean {
  const [method = "", path = ""] = e.split(" ");
  return ctx.hasRoute(method, path);
}

export function idea(ctx: DiscoveryContext, def: IdeaDefinition): Idea {
  const live = def.lands_as.filter((e) => served(ctx, e));
  const status =
    def.lands_as.length === 0
      ? "open"
      : live.length === def.lands_as.length
        ? "shipped"
        : live.length > 0
          ? "partial"
          : "proposed";
  return {
    id: def.id,
    bucket: def.bucket,
    title: def.title,
    summary: def.summary,
    status,
    lands_as: def.lands_as,
    served: live,
    links: live.filter((e) => e.startsWith("GET ")).map((e) => abs(ctx, e.slice(4))),
  };
}

export function ideasDocument(ctx: DiscoveryContext, defs: readonly IdeaDefinition[] = IDEAS): Ideas {
  const ideas = defs.map((d) => idea(ctx, d));
  return {
    service: "Lab Phi idea lab",
    version: VERSIONS.discovery,
    site: ctx.baseUrl,
    note: "Ideas, not promises. Status is computed from the routes this deployment serves, so it changes as ideas land.",
    buckets: { ...BUCKETS },
    statuses: { ...IDEA_STATUS_MEANING },
    count: ideas.length,
    ideas,
  };
}
