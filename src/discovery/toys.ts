import { VERSIONS } from "../versions.js";
import { abs, type DiscoveryContext } from "./context.js";
import { AISLES, type Toy, type Toys } from "./schemas.js";

/**
 * The toy store: free, light-floor toys in four aisles. Toys are NOT commercial SKUs:
 * nothing here can be bought, and no toy id is a catalog sku.
 *
 * A toy's status is derived from the route table, never declared: `story` toys are text
 * only; the others are `live` when every endpoint they need is served, else `parked`
 * (with `waiting_for` naming the missing endpoints). Links are kept only when served.
 */

export interface ToyDefinition {
  id: string;
  name: string;
  aisle: (typeof AISLES)[number];
  blurb: string;
  tags: string[];
  /** Endpoints ("METHOD /path") the toy needs; empty for a story. */
  needs: string[];
  /** GET paths (query allowed) worth following. */
  links: { label: string; path: string }[];
  story?: boolean;
  idea_id?: string;
}

export const AISLE_INFO: Record<(typeof AISLES)[number], { title: string; description: string }> = {
  fun: { title: "Fun", description: "Things to poke at for the pleasure of it." },
  theory: { title: "Theory", description: "Small ideas behind the service, explained with something to try." },
  artifact: { title: "Artifact", description: "Objects the lab made along the way: diagrams, rails, barrels." },
  history: { title: "History", description: "What the lab used to be, and the fossils it kept." },
};

export const TOYS: readonly ToyDefinition[] = [
  {
    id: "alias-roulette",
    name: "Alias roulette",
    aisle: "fun",
    blurb:
      "Every product answers to nicknames, case-insensitively. Guess one (l33t-sauc3? noob? twin?) and see which SKU it lands on.",
    tags: ["catalog", "aliases", "game"],
    needs: ["GET /api/x402-products"],
    links: [
      { label: "try l33t-sauc3", path: "/api/x402-products?sku=l33t-sauc3" },
      { label: "try twin", path: "/api/x402-products?sku=twin" },
    ],
  },
  {
    id: "gao-board",
    name: "Olympiad board",
    aisle: "fun",
    blurb:
      "The Great Agentic Olympiad at a glance: season, quarters, event families and how entry works. Entry itself is the gao-entry SKU, not this toy.",
    tags: ["olympiad", "board"],
    needs: ["GET /api/olympiad"],
    links: [
      { label: "olympiad", path: "/api/olympiad" },
      { label: "olympiad.json", path: "/olympiad.json" },
    ],
    idea_id: "olympiad-ledger",
  },
  {
    id: "problem-zoo",
    name: "Problem zoo",
    aisle: "fun",
    blurb:
      "Send a wrong method, a broken body or an unknown path and collect the answers: every one is an RFC 9457 problem with a stable code, never a 500.",
    tags: ["errors", "rfc9457"],
    needs: ["GET /openapi.json"],
    links: [{ label: "every route and its problems", path: "/openapi.json" }],
  },
  {
    id: "atomic-units-primer",
    name: "Atomic units primer",
    aisle: "theory",
    blurb:
      "USDC has 6 decimals, a cent is 10,000 units, and no price here ever passes through a float. Compare amount_cents with the 402's amount for any SKU.",
    tags: ["x402", "money", "integers"],
    needs: ["GET /llms-full.txt"],
    links: [{ label: "llms-full.txt", path: "/llms-full.txt" }],
  },
  {
    id: "many-rails-one-grant",
    name: "Many rails, one grant",
    aisle: "theory",
    blurb:
      "Card, x402, manual crypto and wire all end in the same grant: one proof of payment, one order, whatever the rail. The matrix shows which rails this deployment has.",
    tags: ["payments", "idempotency"],
    needs: ["GET /api/payments"],
    links: [{ label: "payments matrix", path: "/api/payments" }],
  },
  {
    id: "weighted-vote",
    name: "Weighted vote",
    aisle: "theory",
    blurb:
      "The olympiad's mixed governance weights (team captains 0.4, entered agents 0.25, public 0.2, stewards 0.1, residual integrity 0.05) as a vote you can reason about.",
    tags: ["olympiad", "governance"],
    needs: ["GET /api/olympiad"],
    links: [{ label: "governance view", path: "/api/olympiad?view=governance" }],
    idea_id: "olympiad-ledger",
  },
  {
    id: "barrel-cone",
    name: "Barrel cone",
    aisle: "artifact",
    blurb:
      "The codec engine's two barrels: eight compress chambers and seventeen decompress chambers that rotate and fire. A fire leaves a fingerprint, not data.",
    tags: ["codec", "engine"],
    needs: ["POST /api/omni"],
    links: [],
    idea_id: "codec-web-demo",
  },
  {
    id: "ten-thousand-zeros",
    name: "Ten thousand zeros",
    aisle: "artifact",
    blurb: "Ten thousand int32 zeros through the ZRW rail: how small can nothing get, and does it come back intact?",
    tags: ["codec", "zrw"],
    needs: ["POST /api/compress", "POST /api/decompress"],
    links: [],
    idea_id: "zrw-rail",
  },
  {
    id: "try-gate-fossil",
    name: "Try-gate fossil",
    aisle: "history",
    blurb:
      "The try gate was a paid chip-in before suite jobs became free up to a cap. It still answers, with 410 Gone and a pointer to the free cap.",
    tags: ["catalog", "retired"],
    needs: ["GET /api/x402-products"],
    links: [{ label: "ask for chip", path: "/api/x402-products?sku=chip" }],
  },
  {
    id: "notes-app-ledger",
    name: "The notes-app ledger",
    aisle: "history",
    blurb:
      "The first version of the lab kept its orders as pages in a notes app and its payments only on chain. This one keeps every order in a database with unique keys.",
    tags: ["story", "storage"],
    needs: [],
    links: [],
    story: true,
  },
  {
    id: "version-strata",
    name: "Version strata",
    aisle: "history",
    blurb:
      "API 1.5.0, discovery 1.10.0, engine 1.4.0-barrel-cone, web codec 2.1.0-creator-cloak: layers of the lab's history, all read from one place.",
    tags: ["versions"],
    needs: ["GET /platform.json"],
    links: [{ label: "platform.json versions", path: "/platform.json" }],
  },
];

function served(ctx: DiscoveryContext, e: string): boolean {
  const [method = "", path = ""] = e.split(" ");
  return ctx.hasRoute(method, path);
}

export function toy(ctx: DiscoveryContext, def: ToyDefinition): Toy {
  const waiting = def.needs.filter((e) => !served(ctx, e));
  return {
    id: def.id,
    name: def.name,
    aisle: def.aisle,
    status: def.story ? "story" : waiting.length === 0 ? "live" : "parked",
    price: "free / not for sale",
    commercial_sku: false,
    blurb: def.blurb,
    tags: def.tags,
    links: def.links
      .filter((l) => served(ctx, `GET ${l.path.split("?")[0]}`))
      .map((l) => ({ label: l.label, href: abs(ctx, l.path) })),
    waiting_for: waiting,
    idea_id: def.idea_id ?? null,
  };
}

export function toysDocument(ctx: DiscoveryContext, defs: readonly ToyDefinition[] = TOYS): Toys {
  const toys = defs.map((d) => toy(ctx, d));
  const aisles: Toys["aisles"] = {};
  for (const id of AISLES) {
    aisles[id] = { ...AISLE_INFO[id], count: toys.filter((t) => t.aisle === id).length };
  }
  return {
    service: "Lab Phi toy store",
    version: VERSIONS.discovery,
    site: ctx.baseUrl,
    policy: {
      what_belongs: "Light, free things that show how the lab works: games, primers, artifacts and fossils.",
      not_for_sale: true,
      note: "Toys are not commercial SKUs: none can be bought and no toy id is a catalog sku. Products live in the catalog.",
    },
    aisles,
    count: toys.length,
    toys,
  };
}
