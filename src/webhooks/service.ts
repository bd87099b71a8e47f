import { randomBytes } from "node:crypto";
import os from "node:os";
import type { Kysely } from "kysely";
import type { Executor } from "../db/executor.js";
import type { Database } from "../db/schema.js";
import { sendWebhook } from "./sender.js";
import { messageId, webhookHeaders, webhookSecret } from "./signing.js";
import { type EndedSubscription, webhookStore } from "./store.js";
import type { DeliveryState, WebhookDeliveryRow, WebhookEvent } from "./tables.js";
import { checkCallbackUrl, type Resolver, type TargetPolicy } from "./targets.js";

/**
 * Signed job webhooks (issue #23 item 1; docs/suite.md "Webhooks").
 *
 * An **outbox** that needs no hook in the code that changes a job's state (the runner, cancel,
 * the retention sweep): a job with a callback URL has a subscription row, written in the
 * transaction that creates the job. `sweep()` reads the open subscriptions whose job ended
 * (done, failed, cancelled) without that event recorded, or expired, or was deleted, and records
 * each event once as a delivery row (unique per job and event, insert-or-nothing): the state
 * change is in the database before the sweep sees it, so a crash at any point loses no event, and
 * several instances sweeping at once record it once. `deliverDue()` claims due deliveries with a
 * lease (a conditional UPDATE, on SQLite and PostgreSQL, for one or many instances), POSTs them
 * signed per Standard Webhooks (the same `webhook-id` on every attempt, a fresh timestamp and
 * signature each time), records every attempt, and schedules the next with exponential backoff and
 * jitter until WEBHOOK_RETRY_HOURS after the event was recorded (a last attempt at that deadline):
 * at least once, across restarts. 2xx: delivered. 410 Gone: the receiver asks to stop, failed at
 * once. Anything else (3xx, 4xx, 5xx, no answer, a target that now resolves to a refused
 * address): retried.
 */

export interface WebhookOptions {
  db: Kysely<Database>;
  /** the key job secrets derive from (the job-token key) */
  serverKey: string;
  /** the job's links, as the job view shows them */
  links: (jobId: string) => Record<string, string>;
  /** WEBHOOK_ALLOW_PRIVATE */
  allowPrivate: boolean;
  /** WEBHOOK_RETRY_HOURS */
  retryHours: number;
  /** WEBHOOK_TIMEOUT_SECONDS */
  timeoutSeconds: number;
  /** the host resolver (tests inject one) */
  resolve?: Resolver;
  /** the clock (ms; tests control it) */
  now?: () => number;
  /** jitter source in [0, 1) */
  random?: () => number;
  /** first retry delay and the most between two attempts (defaults 5 s and 2 h) */
  backoff?: { baseMs: number; capMs: number };
  log?: (line: string) => void;
}

export interface WebhookDeliveryView {
  event: WebhookEvent;
  webhook_id: string;
  state: DeliveryState;
  created_at: string;
  attempts: { at: string; status: number | null; error: string | null; duration_ms: number }[];
  next_attempt_at: string | null;
}

export interface WebhookView {
  url: string;
  deliveries: WebhookDeliveryView[];
}

/** events of an ended state */
const END_EVENT: Record<string, WebhookEvent> = {
  done: "job.done",
  failed: "job.failed",
  cancelled: "job.cancelled",
};
/** subscriptions handled per query */
const BATCH = 100;
/** attempts in flight at once in one process */
export const SENDERS = 16;
/**
 * attempts in flight at once to one origin (scheme, host and port), over every instance that
 * shares the database (live leases, counted when a delivery is claimed): a receiver that is slow
 * or never answers (WEBHOOK_TIMEOUT_SECONDS per attempt) holds at most this many senders in all,
 * and the others keep delivering to every other receiver
 */
export const PER_ORIGIN = 4;
/**
 * attempts in flight at once that are retries (the delivery's earlier attempts failed), in one
 * process: receivers that failed (several silent ones, each within PER_ORIGIN) hold at most this
 * many of the SENDERS, and first attempts always have the others
 */
export const RETRY_SENDERS = 8;
/** a round of sends claims nothing new after this long (ms) */
const ROUND_MS = 30_000;
const HOUR_MS = 3_600_000;

export const DEFAULT_BACKOFF = { baseMs: 5_000, capMs: 2 * HOUR_MS };

/** a claimed delivery and the shares it holds until released */
interface Claimed {
  id: string;
  origin: string;
  retry: boolean;
}

export class WebhookService {
  /** Replaceable in tests: the clock and the resolver used at creation and at delivery. */
  now: () => number;
  resolve: Resolver | undefined;
  random: () => number;
  backoff: { baseMs: number; capMs: number };
  private readonly db: Kysely<Database>;
  private readonly owner = `${os.hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
  private readonly log: (line: string) => void;
  private running: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** attempts in flight (or being claimed) per origin, in this process */
  private readonly inFlight = new Map<string, number>();
  /** of those, retries */
  private retriesInFlight = 0;

  constructor(private readonly opts: WebhookOptions) {
    this.db = opts.db;
    this.now = opts.now ?? Date.now;
    this.resolve = opts.resolve;
    this.random = opts.random ?? Math.random;
    this.backoff = opts.backoff ?? DEFAULT_BACKOFF;
    this.log = opts.log ?? (() => {});
  }

  private policy(): TargetPolicy {
    return {
      allowPrivate: this.opts.allowPrivate,
      ...(this.resolve ? { resolve: this.resolve } : {}),
      resolveTimeoutMs: Math.min(5_000, this.opts.timeoutSeconds * 1000),
    };
  }

  /** A suite request's callback URL, checked (https, public addresses): its normalized form, or 400 callback_url_refused. */
  check(url: string): Promise<string> {
    return checkCallbackUrl(url, this.policy());
  }

  /** The job's webhook secret (whsec_…), derived from the server key. */
  secretFor(jobId: string): string {
    return webhookSecret(this.opts.serverKey, jobId);
  }

  /** Subscribes a job being created (inside its transaction) to its events. */
  async subscribe(db: Executor, jobId: string, url: string, at: string): Promise<void> {
    await webhookStore.insertSubscription(db, { job_id: jobId, url, created_at: at, closed_at: null });
  }

  private iso(ms: number): string {
    return new Date(ms).toISOString();
  }

  /** Records the events jobs have to tell (once each); returns how many were recorded by this call. */
  async sweep(): Promise<number> {
    let recorded = 0;
    let after = "";
    for (;;) {
      const rows = await webhookStore.endedSubscriptions(this.db, after, BATCH);
      for (const row of rows) {
        after = row.id;
        recorded += await this.record(row);
      }
      if (rows.length < BATCH) return recorded;
    }
  }

  private async record(job: EndedSubscription): Promise<number> {
    const events: { event: WebhookEvent; at: string }[] = [];
    const end = END_EVENT[job.state];
    if (end) events.push({ event: end, at: job.finished_at ?? job.updated_at });
    if (job.expired_at && !job.deleted_at) events.push({ event: "job.expired", at: job.expired_at });
    let recorded = 0;
    const now = this.now();
    for (const { event, at } of events) {
      const payload = JSON.stringify({
        type: event,
        timestamp: at,
        data: {
          job_id: job.id,
          state: job.state,
          bytes_in: Number(job.bytes_in),
          bytes_out: Number(job.bytes_out),
          output_sha256: job.output_sha256,
          error: job.error_code ? { code: job.error_code, detail: job.error_detail } : null,
          finished_at: job.finished_at,
          expired_at: job.expired_at,
          links: this.opts.links(job.id),
        },
      });
      const row: WebhookDeliveryRow = {
        id: messageId(),
        job_id: job.id,
        event,
        url: job.url,
        payload,
        state: "pending",
        attempts: 0,
        created_at: this.iso(now),
        deadline_at: this.iso(now + this.opts.retryHours * HOUR_MS),
        next_attempt_at: this.iso(now),
        lease_until: null,
        lease_owner: null,
        delivered_at: null,
        updated_at: this.iso(now),
      };
      if (await webhookStore.insertDelivery(this.db, row)) recorded++;
    }
    // Nothing more can happen to an expired or deleted job: its subscription is closed.
    if (job.expired_at || job.deleted_at) await webhookStore.closeSubscription(this.db, job.id, this.iso(now));
    return recorded;
  }

  /**
   * Sends what is due: `SENDERS` attempts at once, each sender claiming the next due delivery as
   * soon as its attempt ends (a slow or silent target holds one sender for at most
   * WEBHOOK_TIMEOUT_SECONDS, not a whole batch). Returns how many attempts were recorded.
   */
  async deliverDue(): Promise<number> {
    let made = 0;
    // A round takes what is due when it starts (a retry it schedules waits for the next round) and
    // claims nothing after ROUND_MS, so new events are swept between rounds even under a backlog.
    const due = this.now();
    const started = performance.now();
    const sender = async () => {
      while (!this.stopped && performance.now() - started < ROUND_MS) {
        const claimed = await this.claimNext(due);
        if (claimed === undefined) return;
        try {
          if (await this.attempt(claimed.id)) made++;
        } finally {
          this.release(claimed);
        }
      }
    };
    await Promise.all(Array.from({ length: SENDERS }, sender));
    return made;
  }

  /**
   * Claims one due delivery (a conditional update: one sender, on any instance, gets it), of an
   * origin with fewer than PER_ORIGIN attempts in flight here and on every other instance (live
   * leases in the database), and a first attempt when
   * RETRY_SENDERS retries are in flight; its share is taken until `release`. Deliveries left out
   * are left to a later claim or round.
   */
  private async claimNext(due: number): Promise<Claimed | undefined> {
    const now = Math.max(due, this.now());
    const leaseUntil = this.iso(now + this.opts.timeoutSeconds * 1000 + 30_000);
    // Rows left out meanwhile (their origin or the retries filled up) are skipped and the query is
    // made again without them, so that deliveries to other receivers, due later, are still found (a
    // few rounds at most: each excludes one more full origin, or the retries).
    /** origins whose PER_ORIGIN attempts are in flight on other instances too */
    const full = new Set<string>();
    for (let round = 0; round < 8; round++) {
      const prefixes = [...this.inFlight]
        .filter(([, n]) => n >= PER_ORIGIN)
        .map(([origin]) => origin)
        .concat([...full])
        .map((origin) => `${origin}/`);
      const firstOnly = this.retriesInFlight >= RETRY_SENDERS;
      const rows = await webhookStore.dueDeliveries(this.db, this.iso(due), SENDERS, { prefixes, firstOnly });
      let skipped = false;
      for (const { id, url, attempts } of rows) {
        const c: Claimed = { id, origin: originOf(url), retry: attempts > 0 };
        if (
          full.has(c.origin) ||
          (this.inFlight.get(c.origin) ?? 0) >= PER_ORIGIN ||
          (c.retry && this.retriesInFlight >= RETRY_SENDERS)
        ) {
          skipped = true;
          continue;
        }
        // counted before the claim's await, so senders claiming at once cannot pass the limits together
        this.inFlight.set(c.origin, (this.inFlight.get(c.origin) ?? 0) + 1);
        if (c.retry) this.retriesInFlight++;
        // the claim also counts the origin's live leases on every instance (the database's)
        const got = await webhookStore.claim(this.db, id, this.owner, this.iso(now), leaseUntil, {
          prefix: `${c.origin}/`,
          max: PER_ORIGIN,
        });
        if (got === "taken") return c;
        this.release(c);
        if (got === "origin_full") {
          full.add(c.origin);
          skipped = true;
        }
      }
      if (!skipped) return undefined;
    }
    return undefined;
  }

  private release(c: Claimed): void {
    const n = (this.inFlight.get(c.origin) ?? 1) - 1;
    if (n > 0) this.inFlight.set(c.origin, n);
    else this.inFlight.delete(c.origin);
    if (c.retry) this.retriesInFlight--;
  }

  /** One attempt of a claimed delivery. */
  private async attempt(id: string): Promise<boolean> {
    const d = await webhookStore.delivery(this.db, id);
    if (d?.state !== "pending" || d.lease_owner !== this.owner) return false;
    const startedAt = this.now();
    const timestamp = Math.floor(startedAt / 1000);
    const headers = webhookHeaders(this.secretFor(d.job_id), d.id, timestamp, d.payload);
    const result = await sendWebhook(d.url, headers, d.payload, {
      ...this.policy(),
      timeoutMs: this.opts.timeoutSeconds * 1000,
    });
    const at = this.now();
    const n = d.attempts + 1;
    const ok = result.status !== null && result.status >= 200 && result.status < 300;
    const gone = result.status === 410;
    let state: DeliveryState = "pending";
    let next: string | null = null;
    if (ok) state = "delivered";
    else if (gone) state = "failed";
    else {
      const deadline = Date.parse(d.deadline_at);
      if (at >= deadline) state = "failed";
      else next = this.iso(Math.min(deadline, at + this.delayMs(n)));
    }
    const won = await this.db.transaction().execute((trx) =>
      webhookStore.recordAttempt(
        trx,
        this.owner,
        {
          delivery_id: d.id,
          n,
          at: this.iso(startedAt),
          status: result.status,
          error: result.error,
          duration_ms: Math.round(result.durationMs),
        },
        { state, next_attempt_at: next, delivered_at: ok ? this.iso(at) : null },
      ),
    );
    if (!ok) {
      // the job id and the outcome only: never the URL's path or query, never the secret
      this.log(
        `webhook ${d.id} (${d.event} of ${d.job_id}) attempt ${n}: ${result.status ?? result.error?.split(":")[0]}` +
          (state === "failed" ? "; given up" : ""),
      );
    }
    return won;
  }

  /** Delay before attempt n + 1: exponential from `baseMs`, at most `capMs`, with equal jitter. */
  delayMs(n: number): number {
    const full = Math.min(this.backoff.capMs, this.backoff.baseMs * 2 ** Math.min(n - 1, 40));
    return Math.round(full / 2 + (this.random() * full) / 2);
  }

  /** One round: record new events, deliver what is due (one round at a time in this process). */
  tick(): Promise<void> {
    if (this.running) return this.running;
    const run = (async () => {
      await this.sweep();
      await this.deliverDue();
    })().finally(() => {
      this.running = undefined;
    });
    this.running = run;
    return run;
  }

  /** Rounds every `intervalMs` until `stop()`; the timer does not hold the process. */
  start(intervalMs: number): void {
    if (this.timer || this.stopped || intervalMs <= 0) return;
    const tick = () => {
      this.timer = setTimeout(() => {
        this.tick()
          .catch((err) => this.log(`webhook round failed: ${err instanceof Error ? err.message : String(err)}`))
          .finally(() => {
            if (!this.stopped) tick();
          });
      }, intervalMs);
      this.timer.unref();
    };
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => {});
  }

  /** What GET /api/jobs/:id shows of the job's webhook (null: the job has no callback URL). */
  async view(jobId: string, db: Executor = this.db): Promise<WebhookView | null> {
    return webhookView(db, jobId);
  }
}

/** The `webhook` part of a job's view: its URL and every delivery with its attempts (null: none). */
export async function webhookView(db: Executor, jobId: string): Promise<WebhookView | null> {
  const sub = await webhookStore.subscription(db, jobId);
  if (!sub) return null;
  const deliveries = await webhookStore.deliveriesOf(db, jobId);
  const attempts = await webhookStore.attemptsOf(
    db,
    deliveries.map((d) => d.id),
  );
  return {
    url: sub.url,
    deliveries: deliveries.map((d) => ({
      event: d.event,
      webhook_id: d.id,
      state: d.state,
      created_at: d.created_at,
      attempts: attempts
        .filter((a) => a.delivery_id === d.id)
        .map((a) => ({ at: a.at, status: a.status, error: a.error, duration_ms: a.duration_ms })),
      next_attempt_at: d.state === "pending" ? d.next_attempt_at : null,
    })),
  };
}

/** "scheme://host[:port]" of a stored callback URL (stored normalized: `URL#href`) */
export function originOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return url;
  }
}
