import rateLimit, { normalizeIP } from "@fastify/rate-limit";
import type { FastifyInstance, FastifyRequest, RouteOptions } from "fastify";
import type { Config } from "../config.js";
import type { Db } from "../db/database.js";
import { Problem } from "./problem.js";
import { MemoryRateLimitStore, type RateCount, type RateLimitStore } from "./rate-limit-store.js";
import { PgRateLimitStore } from "./rate-limit-store-pg.js";

/**
 * Per-IP request limits of the routes that cost money, chain calls, CPU or operator attention
 * (docs/limits.md). One table, by method and path, applied from outside the domains by an
 * `onRoute` hook: no route file mentions rate limits, and a route added under a listed path is
 * limited without touching this file. Each group has one budget per client IP shared by all its
 * routes (fixed one-minute window). Over it: 429 `rate_limited` with `Retry-After`, answered
 * before the body is read, parsed or validated (an unpaid x402 request, answered 402, counts).
 *
 * The client IP is `request.ip`: the socket's address, or the one a trusted proxy forwarded
 * (TRUST_PROXY). Behind a proxy without TRUST_PROXY every client shares the proxy's budget.
 *
 * The counters (`rate-limit-store.ts`): in PostgreSQL when the database is (shared by every
 * instance), in the process on SQLite (one process). MCP tool calls over `/mcp` count in the same
 * counters, each in the group of the route it stands for (`MCP_TOOL_ROUTES`).
 */

export type RateGroup = "paid" | "checkout" | "join" | "codec";

interface Limited {
  method: "POST";
  path: string;
  /** Also every path under `path/`. */
  prefix?: boolean;
  group: RateGroup;
}

export const RATE_LIMITED_ROUTES: readonly Limited[] = [
  // paid (x402): every request counts, a 402 challenge included
  { method: "POST", path: "/api/x402-products", group: "paid" },
  { method: "POST", path: "/api/x402-suite", prefix: true, group: "paid" },
  // each quote is a stored row; each recovery challenge too, and recovery checks signatures
  { method: "POST", path: "/api/ppp-quote", group: "paid" },
  { method: "POST", path: "/api/orders/recover/challenge", group: "checkout" },
  { method: "POST", path: "/api/orders/recover", group: "checkout" },
  // buyer refund requests (src/refunds): each challenge is a stored row, each request a signature check
  { method: "POST", path: "/api/orders/:id/refund-request/challenge", group: "checkout" },
  { method: "POST", path: "/api/orders/:id/refund-request", group: "checkout" },
  // human checkout and claims: each creates a Stripe session or a claim for an operator
  { method: "POST", path: "/api/claims", group: "checkout" },
  { method: "POST", path: "/api/checkout", group: "checkout" },
  { method: "POST", path: "/api/ppp-checkout", group: "checkout" },
  { method: "POST", path: "/pay", group: "checkout" },
  { method: "POST", path: "/pay/claim", group: "checkout" },
  // olympiad actions (register creates a participant; enter may settle an x402 payment) and MCP
  // calls (paid tools, codec work): every request counts, like the paid routes
  { method: "POST", path: "/api/olympiad", group: "paid" },
  // olympiad submissions and finals (docs/olympiad-tasks.md): each parses a file of up to 512 KiB
  { method: "POST", path: "/api/olympiad/events", prefix: true, group: "paid" },
  { method: "POST", path: "/mcp", group: "paid" },
  // identities
  { method: "POST", path: "/api/join-work", group: "join" },
  { method: "POST", path: "/api/join-work/renew", group: "join" },
  // codec work (CPU)
  { method: "POST", path: "/api/omni", group: "codec" },
  { method: "POST", path: "/api/web-codec", group: "codec" },
  { method: "POST", path: "/api/compress", group: "codec" },
  { method: "POST", path: "/api/decompress", group: "codec" },
  { method: "POST", path: "/api/process", group: "codec" },
];

const GROUP_NAMES: Record<RateGroup, string> = {
  paid: "paid",
  checkout: "checkout and claim",
  join: "join",
  codec: "codec",
};

/** The group of a route, if it is limited. */
export function rateGroup(method: string | string[], url: string): RateGroup | undefined {
  const methods = Array.isArray(method) ? method : [method];
  const hit = RATE_LIMITED_ROUTES.find(
    (r) => methods.includes(r.method) && (url === r.path || (r.prefix === true && url.startsWith(`${r.path}/`))),
  );
  return hit?.group;
}

export const WINDOW_MS = 60_000;

/**
 * MCP tools and the HTTP route each stands for (issue #21 item 6, docs/mcp.md "Limits"): a tool
 * call counts against that route's group, per client IP, in the same counters as the route. `null`:
 * the tool stands for a read (GET), which is not limited. Every tool must be listed (a test checks).
 */
export const MCP_TOOL_ROUTES: Readonly<Record<string, string | null>> = {
  catalog: null, // GET /api/x402-products
  payments: null, // GET /api/payments
  job_status: null, // GET /api/jobs/:id
  job_upload: null, // the upload's address (the PUT itself is the HTTP route's)
  job_download: null, // GET /api/jobs/:id/output (the link; the bytes come from the route)
  job_cancel: null, // POST /api/jobs/:id/cancel: with the job token, in no limited group (as over HTTP)
  buy_suite: "/api/x402-suite",
  quote_suite: "/api/ppp-quote",
  buy: "/api/x402-products",
  compress: "/api/omni",
  decompress: "/api/omni",
  profile: "/api/omni",
  bench: "/api/omni",
  olympiad_register: "/api/olympiad",
  olympiad_vote: "/api/olympiad",
  olympiad_submit: "/api/olympiad/events",
};

/** The group a tool call counts in (undefined: not limited). */
export function toolGroup(tool: string): RateGroup | undefined {
  const route = MCP_TOOL_ROUTES[tool];
  return route ? rateGroup("POST", route) : undefined;
}

/** The counter key of a client address in a group (the plugin's default key plus its groupId). */
export function rateKey(ip: string, group: RateGroup | "admin"): string {
  return `${normalizeIP(ip)}|${group}`;
}

/** The 429 problem of a group over its budget. */
export function rateLimitedProblem(group: RateGroup, max: number, ttlMs: number): Problem {
  const seconds = Math.max(1, Math.ceil(ttlMs / 1000));
  return new Problem(
    429,
    "rate_limited",
    `Too many ${GROUP_NAMES[group]} requests from this address: at most ${max} a minute. Retry after ${seconds} s.`,
    { group, limit: max, window_seconds: WINDOW_MS / 1000, retry_after: seconds },
    { "Retry-After": String(seconds) },
  );
}

/**
 * The per-IP budgets and their counters, reachable outside the route hooks: the MCP server counts
 * each tool call here (`take`), in the same store as the HTTP routes.
 */
export class RateLimiter {
  constructor(
    readonly store: RateLimitStore,
    readonly perMinute: Record<RateGroup, number>,
  ) {}

  /** Counts one request of `ip` in `group`: null when within the budget, the 429 problem when over. */
  async take(ip: string, group: RateGroup): Promise<Problem | null> {
    const max = this.perMinute[group];
    const { current, ttl } = await this.store.incr(rateKey(ip, group), WINDOW_MS);
    return current <= max ? null : rateLimitedProblem(group, max, ttl);
  }
}

/** The store of a deployment: PostgreSQL's table when the database is PostgreSQL, else the process. */
export function rateLimitStoreFor(db: Db | undefined): RateLimitStore {
  if (db?.kind === "postgres") return new PgRateLimitStore(db.kysely, { maxWindowMs: WINDOW_MS });
  return new MemoryRateLimitStore();
}

/** Failed operator-token attempts (401 on /api/admin/*) allowed per client IP and minute. */
export const ADMIN_FAILURES_PER_MINUTE = 10;

const isAdminRoute = (request: FastifyRequest) => (request.routeOptions.url ?? "").startsWith("/api/admin/");

/**
 * Guessing the operator token: every request to an operator route counts as an attempt when it
 * arrives (so a burst sent at once is bounded too) and is given back when its answer is not 401.
 * Over the budget, every operator route answers 429 `rate_limited` (group `admin`) to that
 * address until the window ends, the right token included: a 429 tells nothing about a guess.
 */
function limitAdminFailures(app: FastifyInstance, store: RateLimitStore) {
  const keyOf = (request: FastifyRequest) => rateKey(request.ip, "admin");
  app.addHook("onRequest", async (request) => {
    if (!isAdminRoute(request)) return;
    const { current, ttl } = await store.incr(keyOf(request), WINDOW_MS);
    if (current <= ADMIN_FAILURES_PER_MINUTE) return;
    const seconds = Math.max(1, Math.ceil(ttl / 1000));
    throw new Problem(
      429,
      "rate_limited",
      `Too many failed operator-token attempts from this address: at most ${ADMIN_FAILURES_PER_MINUTE} a minute. Retry after ${seconds} s.`,
      { group: "admin", limit: ADMIN_FAILURES_PER_MINUTE, window_seconds: WINDOW_MS / 1000, retry_after: seconds },
      { "Retry-After": String(seconds) },
    );
  });
  app.addHook("onResponse", async (request, reply) => {
    if (!isAdminRoute(request)) return;
    if (reply.statusCode !== 401 && reply.statusCode !== 429) await store.refund(keyOf(request), WINDOW_MS);
  });
}

/** The plugin's store face (callbacks) over ours (promises): one instance for every route. */
function pluginStore(store: RateLimitStore) {
  type Cb = (err: Error | null, res?: RateCount) => void;
  const face = {
    incr: (key: string, cb: Cb, timeWindow: number) => {
      store.incr(key, timeWindow).then(
        (res) => cb(null, res),
        (err: Error) => cb(err),
      );
    },
    read: (key: string, cb: Cb, timeWindow: number) => {
      store.read(key, timeWindow).then(
        (res) => cb(null, res),
        (err: Error) => cb(err),
      );
    },
    // One budget per (IP, group) shared by the group's routes, not one per route.
    child: () => face,
  };
  return face;
}

/**
 * Registers the limits (nothing at all when RATE_LIMIT_ENABLED is off) and answers the limiter
 * (for the MCP tool calls), or undefined when limits are off. Must run before any route is
 * registered: the table is applied by an `onRoute` hook. With a PostgreSQL database the counters
 * are shared by every instance (`rate_limits` table); otherwise they live in the process.
 */
export async function registerRateLimits(
  app: FastifyInstance,
  config: Config,
  db?: Db,
  store: RateLimitStore = rateLimitStoreFor(db),
): Promise<RateLimiter | undefined> {
  if (!config.rateLimit.enabled) {
    await store.close();
    return undefined;
  }
  const perMinute = config.rateLimit.perMinute;
  app.addHook("onClose", async () => store.close());
  limitAdminFailures(app, store);

  // First: attach `config.rateLimit` by path; the plugin's own onRoute hook, added next, reads it.
  app.addHook("onRoute", (route: RouteOptions) => {
    const group = rateGroup(route.method, route.url ?? "");
    if (!group) return;
    route.config = {
      ...(route.config as object),
      rateLimit: { max: perMinute[group], timeWindow: WINDOW_MS, groupId: `|${group}` },
    } as never;
  });

  const face = pluginStore(store);
  await app.register(rateLimit, {
    global: false,
    store: function Store() {
      return face;
    } as never,
    timeWindow: WINDOW_MS,
    // The same key as `rateKey` (the plugin adds `|<group>`).
    keyGenerator: (request) => normalizeIP(request.ip),
    errorResponseBuilder: (request, context) => {
      const group = rateGroup("POST", request.routeOptions.url ?? "") ?? "paid";
      // Retry-After (seconds) and X-RateLimit-* are set by the plugin before this is thrown.
      return rateLimitedProblem(group, context.max, context.ttl);
    },
  });
  return new RateLimiter(store, perMinute);
}
