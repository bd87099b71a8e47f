import { z } from "zod";
import { problemSchema } from "../../../http/problem.js";
import { idText, multiLineText, plainText } from "../../../http/text.js";
import { MAX_FILES } from "./definition.js";
import { METRIC_IDS } from "./metrics.js";

/**
 * Request and response schemas of the scored olympiad events' routes (routes.ts, admin-routes.ts,
 * event-routes.ts, submission-routes.ts); the OpenAPI document is generated from them.
 */

export const eventParams = z.object({ event_id: idText(80).describe("one of the 40 events of /olympiad.json") });
export const fileParams = eventParams.extend({ name: idText(100) });
const isoTime = plainText(40).refine((s) => !Number.isNaN(Date.parse(s)), { message: "must be an ISO 8601 time" });
const FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
const COLUMN = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;

export const taskRequestSchema = z
  .object({
    description: multiLineText(20_000).min(1).describe("the public description (markdown)"),
    metric: z.enum(METRIC_IDS).describe('the metric (docs/olympiad-tasks.md "Metrics")'),
    k: z.number().int().min(1).max(100).optional().describe("MAP@k's k (map_at_k only)"),
    id_column: plainText(64).regex(COLUMN).optional().describe('the id column or key (default "id")'),
    value_column: plainText(64).regex(COLUMN).optional().describe('the value column or key (default "prediction")'),
    key: z
      .object({
        format: z.enum(["csv", "jsonl"]),
        content: z
          .string()
          .min(1)
          .describe("the hidden answer key, as a perfect submission would be; never served before the close"),
      })
      .describe("the hidden answer key"),
    files: z
      .array(
        z.object({
          name: plainText(100).regex(FILE_NAME, { message: "letters, digits, . _ - (up to 100)" }),
          media_type: plainText(100).optional().describe("default text/plain; charset=utf-8"),
          content: z.string().describe("UTF-8 text, served as is with its SHA-256"),
        }),
      )
      .max(MAX_FILES)
      .optional()
      .describe(`public files (at most ${MAX_FILES}, each at most max_file_bytes)`),
    public_pct: z
      .number()
      .int()
      .min(1)
      .max(99)
      .optional()
      .describe("share of the key's rows scored publicly (default 30)"),
    split_seed: z
      .string()
      .regex(/^[0-9a-f]{16,64}$/)
      .optional()
      .describe("the split's seed (hex; default random); published at the close"),
    opens_at: isoTime,
    closes_at: isoTime,
    daily_quota: z
      .number()
      .int()
      .min(1)
      .max(100)
      .optional()
      .describe("accepted submissions per entrant per UTC day (default 5)"),
    max_file_bytes: z.number().int().min(64).optional().describe("default and ceiling: OLYMPIAD_SUBMISSION_MAX_BYTES"),
    max_finals: z
      .number()
      .int()
      .min(1)
      .max(2)
      .optional()
      .describe("final submissions an entrant may select (default 2)"),
  })
  .describe("a scored task for one event");

const metricSchema = z.object({
  id: z.string(),
  name: z.string(),
  better: z.enum(["higher", "lower"]),
  rule: z.string(),
  k: z.number().int().nullable(),
});

const taskViewSchema = z.object({
  state: z.enum(["scheduled", "open", "closed"]),
  description: z.string(),
  season_id: z.string(),
  quarter: z.string(),
  metric: metricSchema,
  submission_format: z.object({
    formats: z.array(z.string()),
    id_column: z.string(),
    value_column: z.string(),
    value_kind: z.string(),
    rows: z.number().int(),
  }),
  files: z.array(
    z.object({
      name: z.string(),
      media_type: z.string(),
      sha256: z.string(),
      bytes: z.number().int(),
      url: z.string(),
    }),
  ),
  key: z.object({
    sha256: z.string().describe("SHA-256 of the key's text, committed on chain olympiad when the task was set"),
    committed_seq: z.number().int().nullable(),
    public_pct: z.number(),
    published: z.boolean(),
    url: z.string().nullable().describe("the key itself, after the close"),
  }),
  opens_at: z.string(),
  closes_at: z.string(),
  daily_quota: z.number().int(),
  max_file_bytes: z.number().int(),
  max_finals: z.number().int(),
  record_seq: z.number().int().nullable(),
  leaderboard: z.string(),
  submissions: z.string(),
});

export const eventViewSchema = z.object({
  event: z.record(z.string(), z.unknown()).describe("the event as in /olympiad.json"),
  task: taskViewSchema.nullable(),
});

export const submitSchema = z.object({
  format: z.enum(["csv", "jsonl"]).describe("CSV with a header row, or JSON lines"),
  content: z.string().describe("the prediction file's text (UTF-8)"),
});

export const submittedSchema = z.object({
  submission_id: z.string(),
  event_id: z.string(),
  entrant: z.string(),
  entrant_kind: z.enum(["participant", "team"]),
  sha256: z.string(),
  bytes: z.number().int(),
  rows: z.number().int(),
  status: z.string(),
  submitted_at: z.string(),
  quota: z.object({ used: z.number().int(), daily_quota: z.number().int(), resets_at: z.string() }),
  submissions_url: z.string(),
});

export const mySubmissionsSchema = z.object({
  event_id: z.string(),
  entrant: z.string(),
  entrant_kind: z.enum(["participant", "team"]),
  state: z.string(),
  max_finals: z.number().int(),
  submissions: z.array(
    z.object({
      submission_id: z.string(),
      submitted_by: z.string(),
      sha256: z.string(),
      bytes: z.number().int(),
      rows: z.number().int(),
      status: z.string(),
      public_score: z.string().nullable(),
      private_score: z.string().nullable().describe("null until the close"),
      error: z.string().nullable(),
      final: z.boolean(),
      submitted_at: z.string(),
      scored_at: z.string().nullable(),
    }),
  ),
});

export const leaderboardSchema = z.object({
  event_id: z.string(),
  state: z.string(),
  metric: z.object({ id: z.string(), better: z.string() }),
  closes_at: z.string(),
  public: z.array(
    z.object({
      rank: z.number().int(),
      entrant: z.string(),
      entrant_kind: z.string(),
      public_score: z.string(),
      submitted_at: z.string(),
      scored_submissions: z.number().int(),
    }),
  ),
  final: z
    .object({
      seq: z.number().int(),
      hash: z.string(),
      results: z.array(
        z.object({
          entrant: z.string().optional(),
          rank: z.number().int().nullable(),
          private_score: z.string().nullable(),
          public_score: z.string().nullable(),
          submission_sha256: z.string().nullable(),
        }),
      ),
    })
    .nullable()
    .describe("after the close: the result set appended to chain olympiad"),
});

export const keySchema = z.object({
  event_id: z.string(),
  format: z.string(),
  id_column: z.string(),
  value_column: z.string(),
  metric: z.string(),
  k: z.number().int().nullable(),
  sha256: z.string(),
  committed_seq: z.number().int().nullable(),
  split_seed: z.string(),
  public_bp: z.number().int(),
  split_rule: z.string(),
  content: z.string(),
  record_seq: z.number().int().nullable(),
});

/** The errors every route of an event may answer. */
export const eventErrors = { 400: problemSchema, 404: problemSchema };

/** The errors of a participant's route (bearer token, entry, task state). */
export const participantErrors = { ...eventErrors, 401: problemSchema, 403: problemSchema, 409: problemSchema };

export const rescoreSchema = z.object({ reason: plainText(1000).min(1).describe("published with the correction") });

export const rescoredSchema = z.object({
  event_id: z.string(),
  seq: z.number().int(),
  hash: z.string(),
  supersedes: z.number().int(),
  rescored: z.number().int(),
});

export const eventIndexSchema = z.object({
  events: z.array(
    z.object({
      event_id: z.string(),
      name: z.string(),
      family: z.string(),
      entrants: z.string(),
      url: z.string(),
      task: z
        .object({
          state: z.enum(["scheduled", "open", "closed"]),
          metric: z.string(),
          opens_at: z.string(),
          closes_at: z.string(),
          record_seq: z.number().int().nullable(),
          leaderboard: z.string(),
        })
        .nullable(),
    }),
  ),
});

export const finalsSchema = z.object({ submission_ids: z.array(idText(80)).max(10) });

export const finalsSelectedSchema = z.object({
  event_id: z.string(),
  entrant: z.string(),
  finals: z.array(z.string()),
  max_finals: z.number().int(),
});
