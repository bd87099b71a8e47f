import { type Kysely, PostgresAdapter, sql } from "kysely";
import type { Executor } from "../db/executor.js";
import type { Database } from "../db/schema.js";
import type { JobRow } from "../jobs/tables.js";
import type { JobWebhookRow, WebhookAttemptRow, WebhookDeliveryRow } from "./tables.js";

/** The webhook tables' queries (src/webhooks/tables.ts). Queries only: the rules are in service.ts. */

/** An open subscription whose job has something to tell: the job's fields the events carry. */
export type EndedSubscription = Pick<
  JobRow,
  | "id"
  | "state"
  | "bytes_in"
  | "bytes_out"
  | "output_sha256"
  | "error_code"
  | "error_detail"
  | "finished_at"
  | "updated_at"
  | "expired_at"
  | "deleted_at"
> & { url: string };

const ENDED = ["done", "failed", "cancelled"] as const;

/** Serialises the claims that count an origin's live leases, across instances (PostgreSQL). */
const CLAIM_LOCK_SQL = sql`select pg_advisory_xact_lock(hashtext('labphi:webhook-claim'))`;

/** A LIKE pattern for "starts with `prefix`" (its `\\`, `%` and `_` escaped with `\\`). */
function likePrefix(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export const webhookStore = {
  async insertSubscription(db: Executor, row: JobWebhookRow): Promise<void> {
    await db
      .insertInto("job_webhooks")
      .values(row)
      .onConflict((oc) => oc.column("job_id").doNothing())
      .execute();
  },

  subscription(db: Executor, jobId: string): Promise<JobWebhookRow | undefined> {
    return db.selectFrom("job_webhooks").selectAll().where("job_id", "=", jobId).executeTakeFirst();
  },

  /**
   * Open subscriptions whose job ended without its end event recorded yet, or expired, or was
   * deleted (those get closed by the sweep): in job id order after `after`.
   */
  endedSubscriptions(db: Executor, after: string, limit: number): Promise<EndedSubscription[]> {
    return db
      .selectFrom("job_webhooks as w")
      .innerJoin("jobs as j", "j.id", "w.job_id")
      .select([
        "j.id",
        "j.state",
        "j.bytes_in",
        "j.bytes_out",
        "j.output_sha256",
        "j.error_code",
        "j.error_detail",
        "j.finished_at",
        "j.updated_at",
        "j.expired_at",
        "j.deleted_at",
        "w.url",
      ])
      .where("w.closed_at", "is", null)
      .where("w.job_id", ">", after)
      .where((eb) =>
        eb.or([
          eb("j.expired_at", "is not", null),
          eb("j.deleted_at", "is not", null),
          eb.and([
            eb("j.state", "in", [...ENDED]),
            eb.not(
              eb.exists(
                eb
                  .selectFrom("webhook_deliveries as d")
                  .select("d.id")
                  .whereRef("d.job_id", "=", "j.id")
                  .where(sql<boolean>`d.event = 'job.' || j.state`),
              ),
            ),
          ]),
        ]),
      )
      .orderBy("w.job_id")
      .limit(limit)
      .execute() as Promise<EndedSubscription[]>;
  },

  /** Records an event once (unique per job and event): true when this call recorded it. */
  async insertDelivery(db: Executor, row: WebhookDeliveryRow): Promise<boolean> {
    const r = await db
      .insertInto("webhook_deliveries")
      .values(row)
      .onConflict((oc) => oc.columns(["job_id", "event"]).doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0n) > 0;
  },

  async closeSubscription(db: Executor, jobId: string, at: string): Promise<void> {
    await db
      .updateTable("job_webhooks")
      .set({ closed_at: at })
      .where("job_id", "=", jobId)
      .where("closed_at", "is", null)
      .execute();
  },

  /**
   * Pending deliveries due at `now` and not held by a live lease, soonest first, with their URL and
   * attempts so far; none whose URL starts with one of `skipPrefixes` (origins that already have
   * their share of attempts in flight), and only first attempts when `firstOnly` (retries already
   * have theirs: see PER_ORIGIN and RETRY_SENDERS in service.ts).
   */
  async dueDeliveries(
    db: Executor,
    now: string,
    limit: number,
    skip: { prefixes?: string[]; firstOnly?: boolean } = {},
  ): Promise<{ id: string; url: string; attempts: number }[]> {
    let q = db
      .selectFrom("webhook_deliveries")
      .select(["id", "url", "attempts"])
      .where("state", "=", "pending")
      .where("next_attempt_at", "<=", now)
      .where((eb) => eb.or([eb("lease_until", "is", null), eb("lease_until", "<", now)]));
    for (const prefix of skip.prefixes ?? []) q = q.where(sql<boolean>`url not like ${likePrefix(prefix)} escape '\\'`);
    if (skip.firstOnly) q = q.where("attempts", "=", 0);
    return q.orderBy("next_attempt_at").limit(limit).execute();
  },

  /**
   * Takes a due delivery for `owner` until `leaseUntil` (a conditional update): "taken", or "lost"
   * (another sender has it, or it is no longer due). With `origin`, only while fewer than
   * `origin.max` deliveries whose URL starts with `origin.prefix` hold a live lease, counted over
   * every instance sharing the database ("origin_full" otherwise): on PostgreSQL the count and the
   * update run under one transaction-scoped advisory lock, on SQLite in one write transaction.
   */
  async claim(
    db: Kysely<Database>,
    id: string,
    owner: string,
    now: string,
    leaseUntil: string,
    origin?: { prefix: string; max: number },
  ): Promise<"taken" | "lost" | "origin_full"> {
    return db.transaction().execute(async (trx) => {
      if (origin) {
        if (trx.getExecutor().adapter instanceof PostgresAdapter) await CLAIM_LOCK_SQL.execute(trx);
        const row = await trx
          .selectFrom("webhook_deliveries")
          .select((eb) => eb.fn.countAll<string | number>().as("n"))
          // only a pending delivery holds a lease (an attempt's outcome clears it); by lease_until
          // alone the count reads the live leases' index (0022), not every pending row
          .where("lease_until", ">=", now)
          .where(sql<boolean>`url like ${likePrefix(origin.prefix)} escape '\\'`)
          .executeTakeFirstOrThrow();
        if (Number(row.n) >= origin.max) return "origin_full";
      }
      const r = await trx
        .updateTable("webhook_deliveries")
        .set({ lease_owner: owner, lease_until: leaseUntil, updated_at: now })
        .where("id", "=", id)
        .where("state", "=", "pending")
        .where("next_attempt_at", "<=", now)
        .where((eb) => eb.or([eb("lease_until", "is", null), eb("lease_until", "<", now)]))
        .executeTakeFirst();
      return Number(r.numUpdatedRows) === 1 ? "taken" : "lost";
    });
  },

  delivery(db: Executor, id: string): Promise<WebhookDeliveryRow | undefined> {
    return db.selectFrom("webhook_deliveries").selectAll().where("id", "=", id).executeTakeFirst();
  },

  /**
   * The outcome of attempt `attempt.n` by the lease holder: the delivery's new state and the
   * attempt's row. False (nothing written) when `owner` no longer holds the delivery.
   */
  async recordAttempt(
    db: Executor,
    owner: string,
    attempt: WebhookAttemptRow,
    next: Pick<WebhookDeliveryRow, "state" | "next_attempt_at" | "delivered_at">,
  ): Promise<boolean> {
    const r = await db
      .updateTable("webhook_deliveries")
      .set({
        ...next,
        attempts: attempt.n,
        lease_owner: null,
        lease_until: null,
        updated_at: attempt.at,
      })
      .where("id", "=", attempt.delivery_id)
      .where("lease_owner", "=", owner)
      .where("attempts", "=", attempt.n - 1)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) !== 1) return false;
    await db.insertInto("webhook_attempts").values(attempt).execute();
    return true;
  },

  deliveriesOf(db: Executor, jobId: string): Promise<WebhookDeliveryRow[]> {
    return db
      .selectFrom("webhook_deliveries")
      .selectAll()
      .where("job_id", "=", jobId)
      .orderBy("created_at")
      .orderBy("event")
      .execute();
  },

  attemptsOf(db: Executor, deliveryIds: string[]): Promise<WebhookAttemptRow[]> {
    if (deliveryIds.length === 0) return Promise.resolve([]);
    return db
      .selectFrom("webhook_attempts")
      .selectAll()
      .where("delivery_id", "in", deliveryIds)
      .orderBy("delivery_id")
      .orderBy("n")
      .execute();
  },
};
