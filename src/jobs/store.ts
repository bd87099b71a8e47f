import { sql } from "kysely";
import type { Executor } from "../db/executor.js";
import { type KeysetPage, type KeysetRequest, keysetPage } from "../db/paginate.js";
import type { JobInputPartRow, JobRow, JobSegmentRow, JobState, QuoteRow, QuoteState, SegmentState } from "./tables.js";

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

  /** One keyset page of an identity's jobs (not deleted), newest first; `state`: only those. */
  jobsOfIdentity(
    db: Executor,
    identityId: string,
    page: KeysetRequest & { state?: JobState | undefined },
  ): Promise<KeysetPage<JobRow>> {
    let q = db.selectFrom("jobs").where("identity_id", "=", identityId).where("deleted_at", "is", null);
    if (page.state) q = q.where("state", "=", page.state);
    return keysetPage<JobRow>(
      q,
      [
        ["created_at", "desc"],
        ["id", "desc"],
      ],
      page,
      (row) => [row.created_at, row.id],
    );
  },

  /** Marks a job deleted, only from one of `from` and once; true when this call deleted it. */
  async markJobDeleted(db: Executor, id: string, from: JobState[], at: string): Promise<boolean> {
    const r = await db
      .updateTable("jobs")
      .set({ deleted_at: at, updated_at: at })
      .where("id", "=", id)
      .where("state", "in", from)
      .where("deleted_at", "is", null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  },

  /** Conditional job change: only from one of `from`, never of a deleted job; true when this call changed it. */
  async jobTransition(
    db: Executor,
    id: string,
    from: JobState[],
    set: Partial<Omit<JobRow, "id" | "quote_id" | "token_hash" | "created_at">>,
    /** only while the job's current upload is this one */
    uploadGen?: string,
  ): Promise<boolean> {
    let q = db
      .updateTable("jobs")
      .set({ ...set, updated_at: set.updated_at ?? new Date().toISOString() })
      .where("id", "=", id)
      .where("state", "in", from)
      .where("deleted_at", "is", null);
    if (uploadGen !== undefined) q = q.where("upload_gen", "=", uploadGen);
    const r = await q.executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  },

  segments(db: Executor, jobId: string): Promise<JobSegmentRow[]> {
    return db.selectFrom("job_segments").selectAll().where("job_id", "=", jobId).orderBy("idx").execute();
  },

  /** Deletes every segment row of a job. */
  async deleteSegments(db: Executor, jobId: string): Promise<void> {
    await db.deleteFrom("job_segments").where("job_id", "=", jobId).execute();
  },

  /** `updated_at` = `at` when the job is in one of `states` and not expired; true when it changed. */
  async touchJob(db: Executor, id: string, states: JobState[], at: string): Promise<boolean> {
    const r = await db
      .updateTable("jobs")
      .set({ updated_at: at })
      .where("id", "=", id)
      .where("state", "in", states)
      .where("expired_at", "is", null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  },

  /**
   * Whether a free job of `caller` other than `jobId` holds the caller's turn (free-turns.ts):
   * running, queued with its segments planned, or uploading with segments of its upload queued early.
   */
  async freeTurnHeld(db: Executor, caller: string, jobId: string): Promise<boolean> {
    const other = await db
      .selectFrom("jobs as j")
      .select("j.id")
      .where("j.caller", "=", caller)
      .where("j.paid_by", "=", "free")
      .where("j.id", "!=", jobId)
      .where((eb) =>
        eb.or([
          eb("j.state", "=", "running"),
          eb.and([eb("j.state", "=", "queued"), eb("j.segments_total", ">", 0)]),
          eb.and([
            eb("j.state", "=", "uploading"),
            eb.exists(
              eb
                .selectFrom("job_segments as s")
                .select("s.idx")
                .whereRef("s.job_id", "=", "j.id")
                .whereRef("s.gen", "=", "j.upload_gen"),
            ),
          ]),
        ]),
      )
      .executeTakeFirst();
    return other !== undefined;
  },

  /** The caller's oldest free job queued and not planned yet. */
  oldestUnplannedFree(db: Executor, caller: string): Promise<JobRow | undefined> {
    return db
      .selectFrom("jobs")
      .selectAll()
      .where("caller", "=", caller)
      .where("paid_by", "=", "free")
      .where("state", "=", "queued")
      .where("segments_total", "=", 0)
      .orderBy("created_at")
      .orderBy("id")
      .executeTakeFirst();
  },

  /**
   * Free jobs of `caller` that free admission counts (queued or running, or in one of
   * `inputStates` and active since `cutoff`), counted per state.
   */
  freeJobsByState(
    db: Executor,
    caller: string,
    inputStates: JobState[],
    cutoff: string,
  ): Promise<{ state: JobState; n: number | string | bigint }[]> {
    return db
      .selectFrom("jobs")
      .where("paid_by", "=", "free")
      .where((eb) =>
        eb.or([
          eb("state", "in", ["queued", "running"]),
          eb.and([eb("state", "in", inputStates), eb("updated_at", ">=", cutoff)]),
        ]),
      )
      .where("caller", "=", caller)
      .select(["state", (eb) => eb.fn.countAll<number | string | bigint>().as("n")])
      .groupBy("state")
      .execute();
  },

  /** The quoted bytes of all free jobs queued, or in one of `inputStates` and active since `cutoff` (a sum, maybe null). */
  async freeBytesWaiting(
    db: Executor,
    inputStates: JobState[],
    cutoff: string,
  ): Promise<string | number | bigint | null | undefined> {
    const r = await db
      .selectFrom("jobs")
      .where("paid_by", "=", "free")
      .where((eb) =>
        eb.or([
          eb("state", "in", ["queued", "running"]),
          eb.and([eb("state", "in", inputStates), eb("updated_at", ">=", cutoff)]),
        ]),
      )
      .where("state", "!=", "running")
      .select((eb) => eb.fn.sum<string | number | bigint | null>("bytes_quoted").as("total"))
      .executeTakeFirst();
    return r?.total;
  },

  /** Callers (at most `limit`) with a free job queued and not planned yet. */
  async callersWithUnplannedFree(db: Executor, limit: number): Promise<string[]> {
    const rows = await db
      .selectFrom("jobs")
      .select("caller")
      .distinct()
      .where("paid_by", "=", "free")
      .where("state", "=", "queued")
      .where("segments_total", "=", 0)
      .where("caller", "is not", null)
      .limit(limit)
      .execute();
    return rows.map((r) => r.caller as string);
  },

  /** Jobs in one of `states`. */
  jobsIn(db: Executor, states: JobState[]): Promise<JobRow[]> {
    return db.selectFrom("jobs").selectAll().where("state", "in", states).execute();
  },

  /** Raises the job's attempt count to `attempts` (never lowers it). */
  async raiseJobAttempts(db: Executor, id: string, attempts: number): Promise<void> {
    await db
      .updateTable("jobs")
      .set({ attempts: sql<number>`case when attempts < ${attempts} then ${attempts} else attempts end` })
      .where("id", "=", id)
      .execute();
  },

  /** Sets `segments_total` of a job not planned yet (segments_total = 0). */
  async setSegmentsTotal(db: Executor, id: string, total: number, at: string): Promise<void> {
    await db
      .updateTable("jobs")
      .set({ segments_total: total, updated_at: at })
      .where("id", "=", id)
      .where("segments_total", "=", 0)
      .execute();
  },

  /** Adds one to the job's `segments_done`. */
  async countSegmentDone(db: Executor, id: string, at: string): Promise<void> {
    await db
      .updateTable("jobs")
      .set({ segments_done: sql<number>`segments_done + 1`, updated_at: at })
      .where("id", "=", id)
      .execute();
  },

  async segmentsDone(db: Executor, id: string): Promise<number | undefined> {
    const j = await db.selectFrom("jobs").select("segments_done").where("id", "=", id).executeTakeFirst();
    return j?.segments_done;
  },

  segment(db: Executor, jobId: string, idx: number): Promise<JobSegmentRow | undefined> {
    return db
      .selectFrom("job_segments")
      .selectAll()
      .where("job_id", "=", jobId)
      .where("idx", "=", idx)
      .executeTakeFirst();
  },

  /** Deletes the job's segments of any upload other than `gen`. */
  async deleteSegmentsNotOf(db: Executor, jobId: string, gen: string | null): Promise<void> {
    await db
      .deleteFrom("job_segments")
      .where("job_id", "=", jobId)
      .where((eb) => (gen === null ? eb("gen", "is not", null) : eb.or([eb("gen", "is", null), eb("gen", "!=", gen)])))
      .execute();
  },

  /** Inserts segment rows, skipping any (job_id, idx) already there; how many were inserted. */
  async insertSegments(db: Executor, rows: JobSegmentRow[]): Promise<number> {
    if (rows.length === 0) return 0;
    const r = await db
      .insertInto("job_segments")
      .values(rows)
      .onConflict((oc) => oc.columns(["job_id", "idx"]).doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0);
  },

  /**
   * Conditional segment change: only from one of `from` (or any state but done when `from` is
   * "not done"), and of upload `gen` when given; true when this call changed it.
   */
  async segmentTransition(
    db: Executor,
    jobId: string,
    idx: number,
    from: SegmentState[] | "not done",
    set: Partial<Omit<JobSegmentRow, "job_id" | "idx" | "gen">>,
    gen?: string | null,
  ): Promise<boolean> {
    let q = db.updateTable("job_segments").set(set).where("job_id", "=", jobId).where("idx", "=", idx);
    q = from === "not done" ? q.where("state", "!=", "done") : q.where("state", "in", from);
    if (gen !== undefined) q = q.where((eb) => (gen === null ? eb("gen", "is", null) : eb("gen", "=", gen)));
    const r = await q.executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
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
      /** the request's callback URL (normalized; null: none): a quote with another one is not this request's */
      callback_url?: string | null;
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
    if (q.callback_url !== undefined) {
      const cb = q.callback_url;
      query = cb === null ? query.where("callback_url", "is", null) : query.where("callback_url", "=", cb);
    }
    return query.orderBy("created_at", "desc").limit(1).executeTakeFirst();
  },

  // ------------------------------------------------ input parts (Content-Range uploads, migration 0021)

  /** The parts of upload `gen` of a job (writing and landed), by offset. */
  inputParts(db: Executor, jobId: string, gen: string): Promise<JobInputPartRow[]> {
    return db
      .selectFrom("job_input_parts")
      .selectAll()
      .where("job_id", "=", jobId)
      .where("gen", "=", gen)
      .orderBy("part_offset")
      .execute();
  },

  async insertInputPart(db: Executor, row: JobInputPartRow): Promise<void> {
    await db.insertInto("job_input_parts").values(row).execute();
  },

  /** `writing` → `landed`, only while `writer` holds it; true when this call changed it. */
  async landInputPart(db: Executor, jobId: string, gen: string, offset: number, writer: string, at: string) {
    const r = await db
      .updateTable("job_input_parts")
      .set({ state: "landed", writer: null, lease_until: null, updated_at: at })
      .where("job_id", "=", jobId)
      .where("gen", "=", gen)
      .where("part_offset", "=", offset)
      .where("state", "=", "writing")
      .where("writer", "=", writer)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  },

  /** A writing part's lease renewed (its writer still receives it). */
  async renewInputPart(db: Executor, jobId: string, gen: string, offset: number, writer: string, until: string) {
    await db
      .updateTable("job_input_parts")
      .set({ lease_until: until })
      .where("job_id", "=", jobId)
      .where("gen", "=", gen)
      .where("part_offset", "=", offset)
      .where("state", "=", "writing")
      .where("writer", "=", writer)
      .execute();
  },

  /** A writing part given up by its writer (its body failed). */
  async deleteWritingPart(db: Executor, jobId: string, gen: string, offset: number, writer: string): Promise<void> {
    await db
      .deleteFrom("job_input_parts")
      .where("job_id", "=", jobId)
      .where("gen", "=", gen)
      .where("part_offset", "=", offset)
      .where("state", "=", "writing")
      .where("writer", "=", writer)
      .execute();
  },

  /** Writing parts whose lease ran out before `now` (a dead writer's): dropped. */
  async dropStaleParts(db: Executor, jobId: string, now: string): Promise<void> {
    await db
      .deleteFrom("job_input_parts")
      .where("job_id", "=", jobId)
      .where("state", "=", "writing")
      .where("lease_until", "<", now)
      .execute();
  },

  /** Parts of every upload of a job but `gen` (a new upload began; null: all of them). */
  async deleteInputPartsNotOf(db: Executor, jobId: string, gen: string | null): Promise<void> {
    let q = db.deleteFrom("job_input_parts").where("job_id", "=", jobId);
    if (gen !== null) q = q.where("gen", "!=", gen);
    await q.execute();
  },
};
