import { createHash } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import { type Kysely, sql } from "kysely";
import type { Database } from "../../db/schema.js";

/**
 * Cached olympiad pages and JSON views (issue #21 item 5; docs/pages.md "Caching").
 *
 * Every olympiad page and view is a function of the olympiad tables, the olympiad hash chain, the
 * UTC date (the season's phase and quarter) and the configuration. `olympiadVersion` reads a
 * fingerprint of those tables in one query (row counts and the latest timestamps, the proposals
 * whose window has ended, the chain head): every write that changes a page changes it, whichever
 * service instance made the write (on PostgreSQL several share the database), so no in-process
 * counter is needed. A page is built once per (page, version), concurrent requests for it wait for
 * the one build, and the answer carries a strong ETag: `If-None-Match` with it gets 304.
 *
 * The cache is bounded (entries and bytes, least recently used first out), so cursors of every
 * page cannot grow it without limit.
 */

export interface CachedPage {
  etag: string;
  body: string;
  type: string;
}

const MiB = 1024 * 1024;

export class PageCache {
  private readonly entries = new Map<string, { version: string; page: CachedPage; bytes: number }>();
  private readonly building = new Map<string, Promise<CachedPage>>();
  private bytes = 0;
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  /** Builds done (tests read it: a second request of an unchanged page builds nothing). */
  builds = 0;

  /**
   * `maxBuilds`: pages built at the same time; more wait their turn. Many different pages asked at
   * once (every cursor of a long list) then hold at most this many builds in memory, and the event
   * loop answers /healthz between them.
   */
  constructor(
    private readonly maxEntries = 256,
    private readonly maxBytes = 32 * MiB,
    private readonly maxBuilds = 2,
  ) {}

  /**
   * Waits for a build slot; the answer frees it (handing it straight to the next in line). Each
   * build starts on a fresh turn of the event loop: the SQLite driver answers synchronously, so
   * builds chained through promises alone would never let /healthz (or any request) in between.
   */
  private async turn(): Promise<() => void> {
    if (this.running < this.maxBuilds) this.running++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    await new Promise<void>((resolve) => setImmediate(resolve));
    return () => {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    };
  }

  /** The page `key` at `version`: from the cache, from a build under way, or built now. */
  async get(key: string, version: string, build: () => Promise<{ body: string; type: string }>): Promise<CachedPage> {
    const hit = this.entries.get(key);
    if (hit && hit.version === version) {
      // most recently used last
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit.page;
    }
    const flight = `${key}\n${version}`;
    const pending = this.building.get(flight);
    if (pending) return pending;
    const promise = (async () => {
      const done = await this.turn();
      try {
        this.builds++;
        const built = await build();
        const page: CachedPage = { ...built, etag: etagOf(built.body) };
        this.store(key, version, page);
        return page;
      } finally {
        done();
      }
    })();
    this.building.set(flight, promise);
    try {
      return await promise;
    } finally {
      this.building.delete(flight);
    }
  }

  private store(key: string, version: string, page: CachedPage): void {
    const bytes = page.body.length * 2;
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.bytes -= old.bytes;
    }
    if (bytes > this.maxBytes / 4) return; // too large to keep: served, not cached
    this.entries.set(key, { version, page, bytes });
    this.bytes += bytes;
    while (this.entries.size > this.maxEntries || this.bytes > this.maxBytes) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.bytes -= this.entries.get(oldest)?.bytes ?? 0;
      this.entries.delete(oldest);
    }
  }
}

export function etagOf(body: string): string {
  return `"${createHash("sha256").update(body).digest("base64url").slice(0, 32)}"`;
}

/** True when `If-None-Match` names the ETag (weak or strong) or is `*`. */
export function notModified(request: FastifyRequest, etag: string): boolean {
  const given = request.headers["if-none-match"];
  if (!given) return false;
  return given.split(",").some((t) => {
    const tag = t.trim();
    return tag === "*" || tag.replace(/^W\//, "") === etag;
  });
}

/** Sends a cached page with its ETag, or 304 when the caller already holds it. */
export function sendCached(
  request: FastifyRequest,
  reply: FastifyReply,
  page: CachedPage,
  cacheControl = "no-cache",
): FastifyReply {
  reply.header("ETag", page.etag).header("Cache-Control", cacheControl);
  if (notModified(request, page.etag)) return reply.code(304).send();
  return reply
    .code(200)
    .type(page.type)
    .serializer(String)
    .send(page.body as never);
}

export const JSON_TYPE = "application/json; charset=utf-8";
export const HTML_TYPE = "text/html; charset=utf-8";

/**
 * The olympiad's data version at `now`: a hash of counts and latest timestamps of every table the
 * pages show, the proposals whose window has ended by `now` (a page built before they closed is
 * stale), the scored events' tasks that have opened or closed by `now` and their scored
 * submissions (a new public score changes the leaderboards), the olympiad chain's head and the UTC date. One round trip on SQLite or PostgreSQL.
 */
export async function olympiadVersion(db: Kysely<Database>, now: Date): Promise<string> {
  const nowIso = now.toISOString();
  const row = await sql<Record<string, unknown>>`select
    (select count(*) from olympiad_proposals) as p_n,
    (select max(opens_at) from olympiad_proposals) as p_at,
    (select max(closes_at) from olympiad_proposals) as p_closes,
    (select count(*) from olympiad_proposals where state = 'closed') as p_closed,
    (select count(*) from olympiad_proposals where state = 'open' and closes_at <= ${nowIso}) as p_due,
    (select count(*) from olympiad_votes) as v_n,
    (select max(updated_at) from olympiad_votes) as v_at,
    (select count(*) from olympiad_participants) as pa_n,
    (select max(created_at) from olympiad_participants) as pa_at,
    (select count(*) from olympiad_intents) as i_n,
    (select max(created_at) from olympiad_intents) as i_at,
    (select count(*) from olympiad_entries) as e_n,
    (select max(created_at) from olympiad_entries) as e_at,
    (select count(*) from olympiad_teams) as t_n,
    (select max(updated_at) from olympiad_teams) as t_at,
    (select count(*) from olympiad_team_members) as m_n,
    (select max(joined_at) from olympiad_team_members) as m_at,
    (select count(*) from olympiad_roles) as r_n,
    (select max(appointed_at) from olympiad_roles) as r_at,
    (select count(*) from olympiad_tasks) as tk_n,
    (select max(updated_at) from olympiad_tasks) as tk_at,
    (select count(*) from olympiad_tasks where opens_at <= ${nowIso}) as tk_opened,
    (select count(*) from olympiad_tasks where closes_at <= ${nowIso}) as tk_due,
    (select count(*) from olympiad_tasks where closed_at is not null) as tk_closed,
    (select count(*) from olympiad_submissions where status = 'scored') as s_scored,
    (select max(seq) from chain_heads where chain = 'olympiad') as c_seq,
    (select max(hash) from chain_heads where chain = 'olympiad') as c_hash`.execute(db);
  const facts = row.rows[0] ?? {};
  const text = JSON.stringify([nowIso.slice(0, 10), ...Object.keys(facts).map((k) => String(facts[k] ?? ""))]);
  return createHash("sha256").update(text).digest("base64url").slice(0, 24);
}
