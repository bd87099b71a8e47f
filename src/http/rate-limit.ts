import rateLimit from "@fastify/rate-limit";
import type { FastifyInstance, FastifyRequest, RouteOptions } from "fastify";
import type { Config } from "../config.js";
import { Problem } from "./problem.js";

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
  // human checkout and claims: each creates a Stripe session or a claim for an operator
  { method: "POST", path: "/api/claims", group: "checkout" },
  { method: "POST", path: "/api/checkout", group: "checkout" },
  { method: "POST", path: "/api/ppp-checkout", group: "checkout" },
  { method: "POST", path: "/pay", group: "checkout" },
  { method: "POST", path: "/pay/claim", group: "checkout" },
  // olympiad actions (register creates a participant; enter may settle an x402 payment) and MCP
  // calls (paid tools, codec work): every request counts, like the paid routes
  { method: "POST", path: "/api/olympiad", group: "paid" },
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

const WINDOW_MS = 60_000;
const MAX_KEYS = 100_000;

/**
 * The counters: one fixed window per (client IP, group), shared by every route of the group (the
 * plugin's own store keeps one per route). Bounded: when full, expired windows go first, then the
 * oldest.
 */
class GroupStore {
  private readonly windows = new Map<string, { current: number; start: number }>();

  incr(key: string, cb: (err: Error | null, res: { current: number; ttl: number }) => void, timeWindow: number) {
    const now = Date.now();
    let w = this.windows.get(key);
    if (!w || w.start + timeWindow <= now) {
      if (w) this.windows.delete(key);
      if (this.windows.size >= MAX_KEYS) this.evict(now, timeWindow);
      w = { current: 0, start: now };
      this.windows.set(key, w);
    }
    w.current += 1;
    cb(null, { current: w.current, ttl: w.start + timeWindow - now });
  }

  /** Gives back one count of the key's current window (an attempt that turned out not to fail). */
  refund(key: string) {
    const w = this.windows.get(key);
    if (w && w.current > 0) w.current -= 1;
  }

  read(key: string, cb: (err: Error | null, res: { current: number; ttl: number }) => void, timeWindow: number) {
    const now = Date.now();
    const w = this.windows.get(key);
    if (!w || w.start + timeWindow <= now) return cb(null, { current: 0, ttl: 0 });
    cb(null, { current: w.current, ttl: w.start + timeWindow - now });
  }

  child(): GroupStore {
    return this;
  }

  private evict(now: number, timeWindow: number) {
    for (const [k, w] of this.windows) if (w.start + timeWindow <= now) this.windows.delete(k);
    // Still full: drop the oldest tenth (Map keeps insertion order, and a new window is re-inserted).
    if (this.windows.size >= MAX_KEYS) {
      let n = Math.ceil(MAX_KEYS / 10);
      for (const k of this.windows.keys()) {
        if (n-- <= 0) break;
        this.windows.delete(k);
      }
    }
  }
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
function limitAdminFailures(app: FastifyInstance) {
  const failures = new GroupStore();
  const keyOf = (request: FastifyRequest) => `${request.ip}|admin`;
  app.addHook("onRequest", async (request) => {
    if (!isAdminRoute(request)) return;
    const { current, ttl } = await new Promise<{ current: number; ttl: number }>((resolve) =>
      failures.incr(keyOf(request), (_err, res) => resolve(res), WINDOW_MS),
    );
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
    if (reply.statusCode !== 401 && reply.statusCode !== 429) failures.refund(keyOf(request));
  });
}

/**
 * Registers the limits (nothing at all when RATE_LIMIT_ENABLED is off). Must run before any
 * route is registered: the table is applied by an `onRoute` hook.
 */
export async function registerRateLimits(app: FastifyInstance, config: Config): Promise<void> {
  if (!config.rateLimit.enabled) return;
  const perMinute = config.rateLimit.perMinute;
  const store = new GroupStore();
  limitAdminFailures(app);

  // First: attach `config.rateLimit` by path; the plugin's own onRoute hook, added next, reads it.
  app.addHook("onRoute", (route: RouteOptions) => {
    const group = rateGroup(route.method, route.url ?? "");
    if (!group) return;
    route.config = {
      ...(route.config as object),
      rateLimit: { max: perMinute[group], timeWindow: WINDOW_MS, groupId: `|${group}` },
    } as never;
  });

  await app.register(rateLimit, {
    global: false,
    store: function Store() {
      return store;
    } as never,
    timeWindow: WINDOW_MS,
    errorResponseBuilder: (request, context) => {
      const group = rateGroup("POST", request.routeOptions.url ?? "") ?? "paid";
      const seconds = Math.max(1, Math.ceil(context.ttl / 1000));
      // Retry-After (seconds) and X-RateLimit-* are set by the plugin before this is thrown.
      return new Problem(
        429,
        "rate_limited",
        `Too many ${GROUP_NAMES[group]} requests from this address: at most ${context.max} a minute. Retry after ${seconds} s.`,
        { group, limit: context.max, window_seconds: WINDOW_MS / 1000, retry_after: seconds },
        { "Retry-After": String(seconds) },
      );
    },
  });
}
