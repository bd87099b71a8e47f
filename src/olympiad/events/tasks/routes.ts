import type { FastifyRequest } from "fastify";
import { z } from "zod";
import { operatorActor } from "../../../admin/routes.js";
import type { AdminGuard } from "../../../http/admin-auth.js";
import { problemSchema } from "../../../http/problem.js";
import { idText, multiLineText, plainText } from "../../../http/text.js";
import type { App } from "../../../http/types.js";
import { bearerToken, type Participants } from "../../entry/participants.js";
import { METRIC_IDS } from "./metrics.js";
import type { OlympiadTasks } from "./service.js";

/**
 * Scored olympiad events over HTTP (docs/olympiad-tasks.md): operators set a task
 * (`PUT /api/admin/olympiad/events/:event_id/task`, admin token, audited) and re-score after a
 * metric fix; anyone reads the event, its public files, its public leaderboard and, after the
 * close, its key; entered participants submit, list their submissions and select finals
 * (`Authorization: Bearer <participant_token>`).
 */

const eventParams = z.object({ event_id: idText(80).describe("one of the 40 events of /olympiad.json") });
const fileParams = eventParams.extend({ name: idText(100) });
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
      .max(10)
      .optional()
      .describe("public files (at most 10, each at most max_file_bytes)"),
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

const eventViewSchema = z.object({
  event: z.record(z.string(), z.unknown()).describe("the event as in /olympiad.json"),
  task: taskViewSchema.nullable(),
});

const submitSchema = z.object({
  format: z.enum(["csv", "jsonl"]).describe("CSV with a header row, or JSON lines"),
  content: z.string().describe("the prediction file's text (UTF-8)"),
});

const submittedSchema = z.object({
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

const mySubmissionsSchema = z.object({
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

const leaderboardSchema = z.object({
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

const keySchema = z.object({
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

export function taskRoutes(
  app: App,
  deps: { tasks: OlympiadTasks; participants: Participants; requireAdmin: AdminGuard },
) {
  const { tasks, participants } = deps;
  const admin = { preValidation: (request: FastifyRequest) => deps.requireAdmin(request) };
  const me = (request: FastifyRequest) => participants.authenticate(bearerToken(request.headers));
  const errors = { 400: problemSchema, 404: problemSchema };
  const participantErrors = { ...errors, 401: problemSchema, 403: problemSchema, 409: problemSchema };

  app.put(
    "/api/admin/olympiad/events/:event_id/task",
    {
      ...admin,
      schema: {
        summary: "Attach a scored task to an event (until it opens); commits the key's SHA-256 on chain olympiad",
        tags: ["olympiad"],
        security: [{ adminBearer: [] }],
        params: eventParams,
        body: taskRequestSchema,
        response: {
          200: eventViewSchema,
          201: eventViewSchema,
          ...errors,
          401: problemSchema,
          409: problemSchema,
          413: problemSchema,
          503: problemSchema,
        },
      },
    },
    async (request, reply) => {
      const { created } = await tasks.setTask(request.params.event_id, request.body, operatorActor(request));
      reply.code(created ? 201 : 200);
      return tasks.publicView(request.params.event_id);
    },
  );

  app.post(
    "/api/admin/olympiad/events/:event_id/rescore",
    {
      ...admin,
      schema: {
        summary: "Re-score every submission (after a metric fix) and append a correction of the event's result set",
        tags: ["olympiad"],
        security: [{ adminBearer: [] }],
        params: eventParams,
        body: z.object({ reason: plainText(1000).min(1).describe("published with the correction") }),
        response: {
          201: z.object({
            event_id: z.string(),
            seq: z.number().int(),
            hash: z.string(),
            supersedes: z.number().int(),
            rescored: z.number().int(),
          }),
          ...errors,
          401: problemSchema,
          409: problemSchema,
          503: problemSchema,
        },
      },
    },
    async (request, reply) => {
      reply.code(201);
      return tasks.rescore(request.params.event_id, request.body.reason, operatorActor(request));
    },
  );

  app.get(
    "/api/olympiad/events",
    {
      schema: {
        summary: "The 40 olympiad events, each with its scored task's state, metric and window (null: no task)",
        tags: ["olympiad"],
        response: {
          200: z.object({
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
          }),
        },
      },
    },
    async () => tasks.index(),
  );

  app.get(
    "/api/olympiad/events/:event_id",
    {
      schema: {
        summary:
          "An olympiad event and its scored task (description, metric, files, key hash; never the key before the close)",
        tags: ["olympiad"],
        params: eventParams,
        response: { 200: eventViewSchema, ...errors },
      },
    },
    async (request) => tasks.publicView(request.params.event_id),
  );

  app.get(
    "/api/olympiad/events/:event_id/files/:name",
    {
      schema: {
        summary: "A public file of an event's task (X-Content-SHA256: its SHA-256)",
        tags: ["olympiad"],
        params: fileParams,
        response: { 200: z.string(), ...errors },
      },
    },
    async (request, reply) => {
      const f = await tasks.file(request.params.event_id, request.params.name);
      reply
        .header("content-type", f.media_type)
        .header("x-content-sha256", f.sha256)
        .header("cache-control", "public, max-age=60");
      return f.content;
    },
  );

  app.get(
    "/api/olympiad/events/:event_id/key",
    {
      schema: {
        summary: "The event's answer key, split seed and split rule: published at the close (403 before)",
        tags: ["olympiad"],
        params: eventParams,
        response: { 200: keySchema, ...errors, 403: problemSchema },
      },
    },
    async (request) => tasks.keyDocument(request.params.event_id),
  );

  app.get(
    "/api/olympiad/events/:event_id/leaderboard",
    {
      schema: {
        summary:
          "The event's public leaderboard (best public score per entrant; ties: earliest), and the final ranks after the close",
        tags: ["olympiad"],
        params: eventParams,
        response: { 200: leaderboardSchema, ...errors },
      },
    },
    async (request) => tasks.leaderboard(request.params.event_id),
  );

  app.post(
    "/api/olympiad/events/:event_id/submissions",
    {
      schema: {
        summary:
          "Submit a prediction file (CSV or JSON lines): validated at once, stored with its SHA-256, scored in seconds",
        description:
          "Needs `Authorization: Bearer <participant_token>` and an active entry (team events: a member of a locked team). 400 `submission_invalid` names the row and column; 413 `submission_too_large`; 409 `task_not_open` / `task_closed`; 429 `submission_quota_exceeded` (per entrant per UTC day).",
        tags: ["olympiad"],
        security: [{ participantBearer: [] }],
        params: eventParams,
        body: submitSchema,
        response: { 202: submittedSchema, ...participantErrors, 413: problemSchema, 429: problemSchema },
      },
    },
    async (request, reply) => {
      const participant = await me(request);
      const out = await tasks.submit(participant, request.params.event_id, request.body);
      reply.code(202);
      return out;
    },
  );

  app.get(
    "/api/olympiad/events/:event_id/submissions",
    {
      schema: {
        summary: "Your entrant's submissions to an event, with public scores (private scores after the close)",
        tags: ["olympiad"],
        security: [{ participantBearer: [] }],
        params: eventParams,
        response: { 200: mySubmissionsSchema, ...participantErrors },
      },
    },
    async (request) => tasks.mySubmissions(await me(request), request.params.event_id),
  );

  app.post(
    "/api/olympiad/events/:event_id/finals",
    {
      schema: {
        summary:
          "Select your entrant's final submissions (at most max_finals; an empty list clears them) before the close",
        tags: ["olympiad"],
        security: [{ participantBearer: [] }],
        params: eventParams,
        body: z.object({ submission_ids: z.array(idText(80)).max(10) }),
        response: {
          200: z.object({
            event_id: z.string(),
            entrant: z.string(),
            finals: z.array(z.string()),
            max_finals: z.number().int(),
          }),
          ...participantErrors,
        },
      },
    },
    async (request) => tasks.selectFinals(await me(request), request.params.event_id, request.body.submission_ids),
  );
}
