import { createHash, createHmac, randomBytes } from "node:crypto";
import type { Kysely } from "kysely";
import { nowIso } from "../db/database.js";
import type { Executor } from "../db/executor.js";
import type { Database } from "../db/schema.js";
import { Problem } from "../http/problem.js";
import type { Fulfilled, Fulfiller, FulfilmentTable } from "../orders/fulfilment.js";
import { type WebhookView, webhookView } from "../webhooks/service.js";
import { webhookSecret } from "../webhooks/signing.js";
import { webhookStore } from "../webhooks/store.js";
import { callerOfQuote } from "./free-admission.js";
import { jobStore } from "./store.js";
import type { JobRow, QuoteRow } from "./tables.js";
import { suiteUsageId, type UsageLedger } from "./usage.js";

/**
 * Suite jobs: created from a quote (free, or paid through the payment core, inside the grant
 * transaction), authorized by a job token (stored hashed), then fed by an upload, split into
 * segments and run by workers (`scheduler`). This file holds the lifecycle every part shares.
 */

export interface JobView {
  job_id: string;
  state: JobRow["state"];
  product: string;
  data_class: string;
  op: string;
  level: string;
  bytes_quoted: number;
  bytes_in: number;
  bytes_out: number;
  /** 0..1: segments done / total once running; uploaded / quoted while uploading */
  progress: number;
  /** bytes_out / bytes_in once done (compress: the compression ratio) */
  ratio: number | null;
  segments_total: number;
  segments_done: number;
  attempts: number;
  error: { code: string; detail: string | null } | null;
  input_sha256: string | null;
  output_sha256: string | null;
  paid_by: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  /** when the job's data will be deleted (finished_at + JOB_RETENTION_HOURS); null until it ends */
  data_expires_at: string | null;
  links: { self: string; input: string; upload_tus: string; output: string };
  /** the job's callback URL and its deliveries (GET /api/jobs/:id only, `detail`); null: no callback */
  webhook?: WebhookView | null;
}

/** What happens once a job's input is complete (planning segments, queueing them): the runner. */
export interface JobScheduler {
  schedule(job: JobRow): Promise<void>;
  /** Coding while upload `gen` arrives, when possible for this job (runner.ts `early`). */
  early?(job: JobRow, gen: string): EarlyCoding | undefined;
}

/** Told how many bytes of an upload can be read so far; `settled` once what it queued is recorded. */
export interface EarlyCoding {
  written(bytes: number): void;
  /**
   * An upload in parts (Content-Range): the byte ranges [start, end) landed so far (in any order,
   * possibly not contiguous); every segment lying wholly inside them is queued.
   */
  landed?(ranges: readonly { start: number; end: number }[]): void;
  settled(): Promise<void>;
}

export function hashJobToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

export const toNumber = (v: number | string | bigint | null): number => (v === null ? 0 : Number(v));

/** What a job service works with beside its database (all optional: a test builds one bare). */
export interface JobServiceDeps {
  /** Plans a job's segments once its input is complete (the runner). */
  scheduler?: JobScheduler;
  /** The usage ledger (the quote service's): records each job's volume. */
  usage?: Pick<UsageLedger, "record">;
  /** JOB_RETENTION_HOURS: shown as each ended job's `data_expires_at`. */
  retentionHours?: number;
  /** The order core's fulfilment table: a paid quote buys its job through it (registered here). */
  fulfilment?: Pick<FulfilmentTable, "register">;
}

export class JobService {
  /** Replaceable in tests (a scheduler that records instead of planning). */
  scheduler: JobScheduler | undefined;
  private readonly usage: Pick<UsageLedger, "record"> | undefined;
  private readonly retentionHours: number | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly baseUrl: string,
    /** Derives job tokens (like access tokens: HMAC of the job id), so a buyer's replay can be answered again. */
    private readonly tokenSecret: string,
    deps: JobServiceDeps = {},
  ) {
    this.scheduler = deps.scheduler;
    this.usage = deps.usage;
    this.retentionHours = deps.retentionHours;
    deps.fulfilment?.register(this.quoteFulfiller());
  }

  /** A paid quote buys one job (idempotent per quote); its answer is the job id, token and links. */
  quoteFulfiller(): Fulfiller {
    const found = (job: JobRow): Fulfilled => ({ kind: "quote", id: job.id, created: false });
    return {
      kind: "quote",
      reference: "job_id",
      fulfil: async (item, payment, trx) => {
        const { jobId, created } = await this.fulfilQuote(item.ref, { by: payment.rail, ref: payment.proofKey }, trx);
        return { kind: "quote", id: jobId, created };
      },
      find: async (item, _payment, db) => {
        const job = await jobStore.jobByQuote(db, item.ref);
        return job ? found(job) : undefined;
      },
      view: async (id) => {
        const job = await jobStore.job(this.db, id);
        if (!job) throw new Problem(404, "job_not_found", `No job ${id}.`);
        const quote = await jobStore.quote(this.db, job.quote_id);
        const links = this.links(id);
        const secret = await this.webhookSecretOf(id);
        return {
          job_id: id,
          job_token: this.tokenFor(id),
          quote_id: job.quote_id,
          status_url: links.self,
          upload_url: links.input,
          upload_tus: links.upload_tus,
          output_url: links.output,
          amount_units: quote?.amount_units ?? "0",
          ...(secret ? { webhook_secret: secret } : {}),
        };
      },
    };
  }

  /** The job token: HMAC(secret, job id). Only its SHA-256 is stored. */
  tokenFor(jobId: string): string {
    return `jt_${createHmac("sha256", this.tokenSecret).update(`job:v1:${jobId}`).digest("base64url")}`;
  }

  /**
   * The webhook secret of a job with a callback URL (whsec_…: HMAC of the job id under the same
   * key, src/webhooks/signing.ts), returned with the job where its token is; undefined without one.
   */
  async webhookSecretOf(jobId: string, db: Executor = this.db): Promise<string | undefined> {
    const sub = await webhookStore.subscription(db, jobId);
    return sub ? webhookSecret(this.tokenSecret, jobId) : undefined;
  }

  /** The job's view with its webhook deliveries (GET /api/jobs/:id). */
  async detail(job: JobRow): Promise<JobView> {
    return { ...this.view(job), webhook: await webhookView(this.db, job.id) };
  }

  /** The order core's quote fulfiller: the job a paid quote buys (created once). */
  async fulfilQuote(
    quoteId: string,
    paid: { by: string; ref: string },
    db: Executor,
  ): Promise<{ jobId: string; created: boolean }> {
    const quote = await jobStore.quote(db, quoteId);
    if (!quote) throw new Problem(404, "quote_not_found", `No quote ${quoteId}.`);
    const { job, created } = await this.createFromQuote(quote, paid, db);
    return { jobId: job.id, created };
  }

  /**
   * Creates the job of a quote (once: a quote buys one job). Runs inside the caller's transaction
   * when given (the payment core's grant). Returns the job and its token (shown once, stored hashed).
   */
  async createFromQuote(
    quote: QuoteRow,
    paid: { by: string; ref: string | null },
    db: Executor = this.db,
  ): Promise<{ job: JobRow; token: string; created: boolean }> {
    const existing = await jobStore.jobByQuote(db, quote.id);
    if (existing) return { job: existing, token: this.tokenFor(existing.id), created: false };
    const id = `job_${randomBytes(12).toString("base64url")}`;
    const token = this.tokenFor(id);
    const at = nowIso();
    const job: JobRow = {
      id,
      quote_id: quote.id,
      token_hash: hashJobToken(token),
      state: "awaiting_input",
      product: quote.product,
      data_class: quote.data_class,
      op: quote.op,
      level: quote.level,
      bytes_quoted: quote.bytes,
      bytes_in: 0,
      bytes_out: 0,
      input_sha256: null,
      output_sha256: null,
      segments_total: 0,
      segments_done: 0,
      attempts: 0,
      error_code: null,
      error_detail: null,
      paid_by: paid.by,
      payment_ref: paid.ref,
      identity_id: quote.identity_id,
      email: quote.email,
      created_at: at,
      updated_at: at,
      started_at: null,
      finished_at: null,
      upload_gen: null,
      // who a free job counts against (src/jobs/free-admission.ts): the identity, else the client IP
      caller: callerOfQuote(quote),
      expired_at: null,
      purged_at: null,
    };
    await jobStore.insertJob(db, job);
    // its callback URL (checked when the quote was made): events are recorded from its state (src/webhooks)
    if (quote.callback_url) {
      await webhookStore.insertSubscription(db, {
        job_id: id,
        url: quote.callback_url,
        created_at: at,
        closed_at: null,
      });
    }
    const won = await jobStore.quoteTransition(db, quote.id, ["open", "paid"], "used", { job_id: job.id });
    if (!won) throw new Problem(409, "quote_already_used", `Quote ${quote.id} has already bought a job.`);
    return { job, token, created: true };
  }

  /** Records a job's input in the usage ledger (idempotent per job): the monthly free cap reads it. */
  async recordUsage(jobId: string, bytes: number, db: Executor = this.db): Promise<void> {
    if (!this.usage) return;
    const job = await jobStore.job(db, jobId);
    if (!job) return;
    await this.usage.record(
      {
        id: suiteUsageId(jobId),
        identityId: job.identity_id,
        meter: "suite_bytes",
        valueBytes: bytes,
        jobId,
        quoteId: job.quote_id,
      },
      db,
    );
  }

  async get(id: string): Promise<JobRow> {
    const job = await jobStore.job(this.db, id);
    if (!job) throw new Problem(404, "job_not_found", `No job ${id}.`);
    return job;
  }

  /** The job, when `token` is its job token (Authorization: Bearer <job_token>): 401 otherwise. */
  async authorize(id: string, authorization: string | undefined): Promise<JobRow> {
    const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? "")?.[1];
    if (!token) {
      throw new Problem(
        401,
        "job_token_required",
        "Send the job token: Authorization: Bearer <job_token>.",
        {},
        {
          "WWW-Authenticate": 'Bearer realm="jobs"',
        },
      );
    }
    const job = await jobStore.job(this.db, id);
    // Same answer for an unknown job and a wrong token: a job id alone reveals nothing.
    if (!job || job.token_hash !== hashJobToken(token)) {
      throw new Problem(
        401,
        "job_token_invalid",
        "This job token does not open this job.",
        {},
        {
          "WWW-Authenticate": 'Bearer realm="jobs", error="invalid_token"',
        },
      );
    }
    return job;
  }

  links(id: string): JobView["links"] {
    const base = `${this.baseUrl}/api/jobs/${id}`;
    return {
      self: base,
      input: `${base}/input`,
      upload_tus: `${this.baseUrl}/api/jobs/uploads`,
      output: `${base}/output`,
    };
  }

  view(job: JobRow): JobView {
    const quoted = toNumber(job.bytes_quoted);
    const bytesIn = toNumber(job.bytes_in);
    const bytesOut = toNumber(job.bytes_out);
    const progress =
      job.state === "done"
        ? 1
        : job.segments_total > 0
          ? job.segments_done / job.segments_total
          : quoted > 0
            ? Math.min(1, bytesIn / quoted) * 0.01
            : 0;
    return {
      job_id: job.id,
      state: job.state,
      product: job.product,
      data_class: job.data_class,
      op: job.op,
      level: job.level,
      bytes_quoted: quoted,
      bytes_in: bytesIn,
      bytes_out: bytesOut,
      progress: Math.round(progress * 1000) / 1000,
      ratio: job.state === "done" && bytesIn > 0 ? Math.round((bytesOut / bytesIn) * 10000) / 10000 : null,
      segments_total: job.segments_total,
      segments_done: job.segments_done,
      attempts: job.attempts,
      error: job.error_code ? { code: job.error_code, detail: job.error_detail } : null,
      input_sha256: job.input_sha256,
      output_sha256: job.output_sha256,
      paid_by: job.paid_by,
      created_at: job.created_at,
      started_at: job.started_at,
      finished_at: job.finished_at,
      data_expires_at:
        job.finished_at && this.retentionHours !== undefined
          ? new Date(Date.parse(job.finished_at) + this.retentionHours * 3600_000).toISOString()
          : null,
      links: this.links(job.id),
    };
  }
}
