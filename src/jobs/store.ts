import type { Executor } from "../db/executor.js";
import type { JobRow, JobSegmentRow, JobState, QuoteRow, QuoteState } from "./tables.js";

/** Data access for quotes, jobs and segments. Queries only; the rules live in the services. */
export const jobStore = {
  async insertQuote(db: Executor, row: QuoteRow): Promise<void> {
    await db.insertInto("quotes").values(row).execute();
  },

  quote(db: Executor, id: string): Promise<QuoteRow | undefined> {
    return db.selectFrom("quotes").selectAll().where("id", "=", id).executeTakeFirst();
  },

  /** Conditional quote transition; true when this call changed it. */
  async quoteTransition(
    db: Executor,
    id: string,
    from: QuoteState[],
    to: QuoteState,
    set: Partial<Pick<QuoteRow, "job_id">> = {},
  ): Promise<boolean> {
    const r = await db
      .updateTable("quotes")
      .set({ ...set, state: to })
      .where("id", "=", id)
      .where("state", "in", from)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  },

  async insertJob(db: Executor, row: JobRow): Promise<void> {
    await db.insertInto("jobs").values(row).execute();
  },

  job(db: Executor, id: string): Promise<JobRow | undefined> {
    return db.selectFrom("jobs").selectAll().where("id", "=", id).executeTakeFirst();
  },

  jobByQuote(db: Executor, quoteId: string): Promise<JobRow | undefined> {
    return db.selectFrom("jobs").selectAll().where("quote_id", "=", quoteId).executeTakeFirst();
  },

  /** Conditional job change: only from one of `from`; true when this call changed it. */
  async jobTransition(
    db: Executor,
    id: string,
    from: JobState[],
    set: Partial<Omit<JobRow, "id" | "quote_id" | "token_hash" | "created_at">>,
  ): Promise<boolean> {
    const r = await db
      .updateTable("jobs")
      .set({ ...set, updated_at: set.updated_at ?? new Date().toISOString() })
      .where("id", "=", id)
      .where("state", "in", from)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  },

  segments(db: Executor, jobId: string): Promise<JobSegmentRow[]> {
    return db.selectFrom("job_segments").selectAll().where("job_id", "=", jobId).orderBy("idx").execute();
  },

  /** The newest open, unexpired quote of exactly this request and identity (a paid retry of the same body). */
  latestOpenQuote(
    db: Executor,
    q: {
      product: string;
      data_class: string;
      op: string;
      level: string;
      bytes: number;
      identity_id: string | null;
      now: string;
    },
  ): Promise<QuoteRow | undefined> {
    let query = db
      .selectFrom("quotes")
      .selectAll()
      .where("state", "=", "open")
      .where("expires_at", ">", q.now)
      .where("product", "=", q.product)
      .where("data_class", "=", q.data_class)
      .where("op", "=", q.op)
      .where("level", "=", q.level)
      .where("bytes", "=", q.bytes);
    query =
      q.identity_id === null ? query.where("identity_id", "is", null) : query.where("identity_id", "=", q.identity_id);
    return query.orderBy("created_at", "desc").limit(1).executeTakeFirst();
  },
};
