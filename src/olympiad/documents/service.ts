import { type Kysely, sql } from "kysely";
import type { Catalog } from "../../catalog/service.js";
import type { Config } from "../../config.js";
import { type KeysetRequest, keysetPage } from "../../db/paginate.js";
import type { Database } from "../../db/schema.js";
import { Problem } from "../../http/problem.js";
import { seasonOf } from "../season.js";
import type { ProposalRow } from "../tables.js";
import { dataView, machineMap, olympiadRecord, recordView } from "./olympiad-record.js";
import { olympiadVersion, PageCache } from "./page-cache.js";
import { type MachineMap, type OlympiadRecord, type OlympiadView, VIEWS, type View } from "./schemas.js";

/**
 * The olympiad documents service (GET /api/olympiad, GET /olympiad.json): gathers the database
 * facts the record needs through providers and builds every document from record.ts.
 *
 * The proposals and records views belong to the governance and records services: the composition
 * root passes theirs beside `tableProviders`, which reads the other facts from the tables directly.
 */

export interface OlympiadDataProviders {
  /** one page of the proposals view's fields (governance): at most `limit`, after `cursor` */
  proposals(page?: KeysetRequest): Promise<Record<string, unknown>>;
  /** the records view's fields (records and standings) */
  records(): Promise<Record<string, unknown>>;
  /** events of the season with recorded official (non-tryout) results */
  eventsCompleted(seasonId: string): Promise<number>;
  /** ISO 8601 of the latest change of any olympiad data, or null when there is none */
  lastChange(): Promise<string | null>;
  /** the data version at `now` (page-cache.ts): changes with every write any page shows */
  version(now: Date): Promise<string>;
}

/** The olympiad chain on the shared hash chain (docs/olympiad-records.md). */
const RECORDS_CHAIN = "olympiad";

function latest(values: readonly (string | null | undefined)[]): string | null {
  let best: string | null = null;
  for (const v of values) {
    if (typeof v !== "string" || Number.isNaN(Date.parse(v))) continue;
    if (best === null || Date.parse(v) > Date.parse(best)) best = v;
  }
  return best;
}

/** Providers that read the olympiad tables directly (small queries; the other services may replace them). */
export function tableProviders(db: Kysely<Database>): OlympiadDataProviders {
  const max = async (
    table: "olympiad_participants" | "olympiad_intents" | "olympiad_entries" | "olympiad_team_members",
    column: "created_at" | "joined_at",
  ) => {
    const row = await db
      .selectFrom(table)
      .select(sql<string | null>`max(${sql.ref(column)})`.as("at"))
      .executeTakeFirst();
    return row?.at ?? null;
  };
  return {
    async proposals(page = {}) {
      const listed = await keysetPage<ProposalRow>(
        db.selectFrom("olympiad_proposals"),
        [
          ["opens_at", "desc"],
          ["id", "desc"],
        ],
        page,
        (r) => [r.opens_at, r.id],
      );
      const rows = listed.items;
      const count = await db
        .selectFrom("olympiad_proposals")
        .select((eb) => eb.fn.countAll<string | number>().as("n"))
        .executeTakeFirst();
      return {
        count: Number(count?.n ?? 0),
        limit: listed.limit,
        next_cursor: listed.next_cursor,
        proposals: rows.map((r) => ({
          proposal_id: r.id,
          kind: r.kind,
          title: r.title,
          state: r.state,
          outcome: r.outcome,
          opens_at: r.opens_at,
          closes_at: r.closes_at,
        })),
      };
    },
    async records() {
      const head = await db
        .selectFrom("chain_heads")
        .select(["seq", "hash", "updated_at"])
        .where("chain", "=", RECORDS_CHAIN)
        .executeTakeFirst();
      return {
        chain: RECORDS_CHAIN,
        entries: head?.seq ?? 0,
        head_hash: head?.hash ?? null,
        updated_at: head?.updated_at ?? null,
      };
    },
    async eventsCompleted(seasonId) {
      const rows = await db
        .selectFrom("chain_entries")
        .select(["kind", "body"])
        .where("chain", "=", RECORDS_CHAIN)
        .where("kind", "in", ["result", "correction"])
        .execute();
      const done = new Set<string>();
      for (const row of rows) {
        let body: unknown;
        try {
          body = JSON.parse(row.body);
        } catch {
          continue;
        }
        const b = body as { season_id?: unknown; quarter?: unknown; event_id?: unknown };
        if (b.season_id !== seasonId || typeof b.event_id !== "string" || typeof b.quarter !== "string") continue;
        if (b.quarter === "tryouts") continue;
        done.add(`${b.quarter}|${b.event_id}`);
      }
      return done.size;
    },
    version: (now) => olympiadVersion(db, now),
    async lastChange() {
      const teams = await db
        .selectFrom("olympiad_teams")
        .select(sql<string | null>`max(updated_at)`.as("at"))
        .executeTakeFirst();
      // One aggregate per query: SQLite answers a lone max() from an index (migration 0013), two
      // in one query from a scan of every row, bodies included. opens_at is the proposal's created_at.
      const created = await db
        .selectFrom("olympiad_proposals")
        .select(sql<string | null>`max(opens_at)`.as("at"))
        .executeTakeFirst();
      const closing = await db
        .selectFrom("olympiad_proposals")
        .select(sql<string | null>`max(closes_at)`.as("at"))
        .executeTakeFirst();
      const proposals = { created: created?.at ?? null, closes: closing?.at ?? null };
      const votes = await db
        .selectFrom("olympiad_votes")
        .select(sql<string | null>`max(updated_at)`.as("at"))
        .executeTakeFirst();
      const roles = await db
        .selectFrom("olympiad_roles")
        .select(sql<string | null>`max(appointed_at)`.as("at"))
        .executeTakeFirst();
      const chain = await db
        .selectFrom("chain_heads")
        .select("updated_at")
        .where("chain", "=", RECORDS_CHAIN)
        .executeTakeFirst();
      // A proposal's window closing changes its outcome: count it once it has passed.
      const now = Date.now();
      const closes = proposals?.closes && Date.parse(proposals.closes) <= now ? proposals.closes : null;
      return latest([
        await max("olympiad_participants", "created_at"),
        await max("olympiad_intents", "created_at"),
        await max("olympiad_entries", "created_at"),
        await max("olympiad_team_members", "joined_at"),
        teams?.at,
        proposals?.created,
        closes,
        votes?.at,
        roles?.at,
        chain?.updated_at,
      ]);
    },
  };
}

/** 400 `invalid_view`: the answer lists the valid views. */
export function invalidView(view: string): Problem {
  return new Problem(400, "invalid_view", `Unknown view "${view}"; valid views: ${VIEWS.join(", ")}.`, {
    view,
    valid_views: [...VIEWS],
  });
}

export function parseView(view: string | undefined): View | undefined {
  if (view === undefined) return undefined;
  const v = view.trim().toLowerCase();
  if ((VIEWS as readonly string[]).includes(v)) return v as View;
  throw invalidView(view);
}

export class OlympiadDocuments {
  private readonly providers: OlympiadDataProviders;
  private readonly startedAt: Date;
  readonly now: () => Date;
  /** The built pages and views of the olympiad (GET /api/olympiad, /olympiad.json, /olympiad), by data version. */
  readonly cache = new PageCache();

  constructor(
    private readonly deps: {
      config: Pick<Config, "baseUrl" | "olympiad" | "contactEmail">;
      catalog: Catalog;
      providers: OlympiadDataProviders;
      now?: () => Date;
    },
  ) {
    this.providers = deps.providers;
    this.now = deps.now ?? (() => new Date());
    this.startedAt = this.now();
  }

  /** The full record at `now`. */
  async record(now: Date = this.now()): Promise<OlympiadRecord> {
    const season = seasonOf(this.deps.config, now);
    const [eventsCompleted, lastDataChange] = await Promise.all([
      this.providers.eventsCompleted(season.id),
      this.providers.lastChange(),
    ]);
    return olympiadRecord({
      config: this.deps.config,
      catalog: this.deps.catalog,
      now,
      eventsCompleted,
      lastDataChange,
      startedAt: this.startedAt,
    });
  }

  /** The data version at `now` (page-cache.ts): the cached pages and views are valid while it holds. */
  version(now: Date = this.now()): Promise<string> {
    return this.providers.version(now);
  }

  /** GET /api/olympiad?view=…: the record, or one view of it (`page`: the proposals view's page). */
  async answer(
    view: View | undefined,
    now: Date = this.now(),
    page: KeysetRequest = {},
  ): Promise<OlympiadRecord | OlympiadView> {
    const record = await this.record(now);
    const base = this.deps.config.baseUrl;
    switch (view) {
      case undefined:
        return record;
      case "proposals":
        return dataView(record, view, await this.providers.proposals(page));
      case "records":
        return dataView(record, view, await this.providers.records());
      default:
        return recordView(record, view, base);
    }
  }

  /** GET /olympiad.json */
  async machineMap(now: Date = this.now()): Promise<MachineMap> {
    return machineMap(await this.record(now), this.deps.config.baseUrl);
  }
}
