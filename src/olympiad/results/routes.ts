import type { FastifyRequest } from "fastify";
import type { Kysely } from "kysely";
import { z } from "zod";
import { operatorActor } from "../../admin/routes.js";
import { auditStore } from "../../admin/store.js";
import type { Database } from "../../db/schema.js";
import type { AdminGuard } from "../../http/admin-auth.js";
import { problemSchema } from "../../http/problem.js";
import { idText, plainText } from "../../http/text.js";
import type { App } from "../../http/types.js";
import { JSON_TYPE, olympiadVersion, PageCache, sendCached } from "../documents/page-cache.js";
import type { OlympiadRecords } from "./service.js";

/**
 * Olympiad records over HTTP (docs/olympiad-records.md): operators record result sets
 * (`POST /api/admin/olympiad/results`, admin token); anyone reads `/standings.json` and
 * `/olympiad-records.json`; operators verify the audit log's chain (`GET /api/admin/audit/verify`).
 */

const hex64 = z.string().regex(/^[0-9a-fA-F]{64}$/, { message: "must be 64 hex digits" });
const entrantId = idText(80);

export const recordRequestSchema = z
  .object({
    event_id: idText(80).describe("one of the 40 events of /olympiad.json"),
    quarter: z
      .enum(["Q1", "Q2", "Q3", "Q4", "tryouts"])
      .describe("Q1–Q3 count official points (from open registration); tryouts are kept for seeding; Q4 has none"),
    season_id: idText(20).optional().describe("defaults to the configured season"),
    held_on: z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2}$/)
      .optional()
      .describe("YYYY-MM-DD the event was held"),
    results: z
      .array(
        z.object({
          participant_id: entrantId.optional().describe("individual events: a registered participant (par_…)"),
          team_id: entrantId.optional().describe("team events: a team (team_…)"),
          rank: z
            .number()
            .int()
            .min(1)
            .nullable()
            .optional()
            .describe("optional: checked against the rank the score gives (equal scores share a rank)"),
          score: z
            .union([z.number().int(), plainText(50)])
            .nullable()
            .describe("the measured value: an integer or a decimal string; null = no valid result (no rank)"),
          note: plainText(300).optional(),
        }),
      )
      .min(1)
      .max(500)
      .describe("every entrant of the event, favourable or not"),
    evidence: z.object({
      url: plainText(2000)
        .regex(/^https?:\/\/\S+$/, { message: "must be an http(s) URL" })
        .describe("where the result can be checked"),
      sha256: hex64.optional().describe("SHA-256 of the evidence file"),
      note: plainText(1000).optional(),
    }),
    supersedes: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("a correction: the seq of the result set it replaces (a new entry; nothing is edited)"),
    reason: plainText(1000).min(1).optional().describe("required with supersedes; published"),
  })
  .describe("a result set of one event, with its evidence");

const publishedEntrySchema = z.object({
  seq: z.number().int(),
  at: z.string(),
  kind: z.string(),
  body: z.record(z.string(), z.unknown()).describe("the entry's JSON; hashed as canonical JSON"),
  prev_hash: z.string(),
  hash: z.string(),
});

const headSchema = z.object({ seq: z.number().int(), hash: z.string() });

const standingRowSchema = z.object({
  rank: z.number().int(),
  entrant: z.string(),
  entrant_kind: z.enum(["participant", "team"]),
  points: z.number().int(),
  golds: z.number().int(),
  silvers: z.number().int(),
  bronzes: z.number().int(),
  events: z.number().int(),
  reached_seq: z.number().int(),
  medal: z.enum(["gold", "silver", "bronze"]).nullable(),
});

const rulesSchema = z.object({
  points_table: z.array(z.number().int()),
  points: z.string(),
  official_quarters: z.array(z.string()),
  seeding_quarter: z.string(),
  top_n: z.number().int(),
  medals: z.array(z.string()),
  tiebreak: z.array(z.string()),
  hash: z.string(),
  canonical_json: z.string(),
});

export const standingsDocumentSchema = z.object({
  version: z.string().describe("standings version (1.2.2)"),
  season: z.string(),
  generated_at: z.string(),
  chain: z.string(),
  head: headSchema,
  rules: rulesSchema,
  standings: z.array(standingRowSchema).describe("top 50; ranks 1–3 carry the medals"),
  seeding: z.array(standingRowSchema).describe("tryouts: seeding points, no official points"),
  ranked_total: z.number().int(),
  records_json: z.string(),
  verify: z.string(),
  entries: z.array(publishedEntrySchema).describe("every entry of the chain, from seq 1"),
});

const countsSchema = z.object({
  entries: z.number().int(),
  result_sets: z.number().int(),
  corrections: z.number().int(),
  live_sets: z.number().int(),
  official_sets: z.number().int(),
  tryout_sets: z.number().int(),
});

const recordsDocumentSchema = z.object({
  version: z.string(),
  generated_at: z.string(),
  chain: z.string(),
  head: headSchema,
  counts: countsSchema,
  standings_json: z.string(),
  sets: z.array(
    z.object({
      seq: z.number().int(),
      kind: z.enum(["result", "correction"]),
      at: z.string(),
      season_id: z.string(),
      quarter: z.string(),
      event_id: z.string(),
      event_name: z.string().nullable(),
      family: z.string(),
      entrants: z.enum(["individual", "team"]),
      weight: z.number().int(),
      held_on: z.string().nullable(),
      counts_official_points: z.boolean(),
      superseded_by: z.number().int().nullable(),
      supersedes: z.number().int().nullable(),
      reason: z.string().nullable(),
      evidence: z.object({ url: z.string(), sha256: z.string().optional(), note: z.string().optional() }),
      results: z.array(
        z.object({
          entrant: z.string(),
          entrant_kind: z.enum(["participant", "team"]),
          rank: z.number().int().nullable(),
          score: z.string().nullable(),
          points: z.number().int(),
          note: z.string().nullable(),
        }),
      ),
    }),
  ),
  entries: z.array(publishedEntrySchema),
});

const recordedSchema = publishedEntrySchema.extend({
  chain: z.string(),
  standings_json: z.string(),
  records_json: z.string(),
});

const auditVerifySchema = z.object({
  ok: z.boolean(),
  entries: z.number().int(),
  rows: z.number().int(),
  head: headSchema,
  broken: z.object({ seq: z.number().int(), reason: z.string() }).nullable(),
  mismatches: z.array(z.object({ id: z.string(), seq: z.number().int().nullable(), reason: z.string() })),
});

export function recordsRoutes(
  app: App,
  deps: { records: OlympiadRecords; db: Kysely<Database>; requireAdmin: AdminGuard },
) {
  const { records } = deps;
  // The two proof documents are whole by design (a verifier recomputes everything from them) and
  // grow only by operators' entries; they are built once per data version, with their ETag.
  const cache = new PageCache();
  // Authentication before body validation: a request without the token gets 401, not a 400 about its body.
  const admin = { preValidation: (request: FastifyRequest) => deps.requireAdmin(request) };
  const guarded = { 400: problemSchema, 401: problemSchema, 503: problemSchema };

  app.post(
    "/api/admin/olympiad/results",
    {
      ...admin,
      schema: {
        summary: "Record an event's result set with evidence (or a correction) on the olympiad hash chain",
        tags: ["olympiad"],
        security: [{ adminBearer: [] }],
        body: recordRequestSchema,
        response: { 201: recordedSchema, ...guarded, 404: problemSchema, 409: problemSchema },
      },
    },
    async (request, reply) => {
      const entry = await records.record(request.body, operatorActor(request));
      reply.code(201);
      return {
        chain: entry.chain,
        seq: entry.seq,
        at: entry.at,
        kind: entry.kind,
        body: entry.body as Record<string, unknown>,
        prev_hash: entry.prev_hash,
        hash: entry.hash,
        standings_json: records.urls.standings,
        records_json: records.urls.records,
      };
    },
  );

  app.get(
    "/standings.json",
    {
      schema: {
        summary: "Public standings with proof: top 50 and medals, seeding, the head hash and every chain entry",
        description:
          "Whole by design (`labphi verify-standings` recomputes the standings from it); only operators add entries. Carries an ETag: `If-None-Match` → 304 while nothing changed.",
        tags: ["olympiad"],
        response: { 200: standingsDocumentSchema },
      },
    },
    async (request, reply) => {
      const cached = await cache.get("standings.json", await olympiadVersion(deps.db, records.now()), async () => {
        const doc = await records.standingsDocument();
        const value = { ...doc, entries: doc.entries.map(asObjectBody) };
        return { type: JSON_TYPE, body: JSON.stringify(z.encode(standingsDocumentSchema, value)) };
      });
      return sendCached(request, reply, cached, "public, max-age=30");
    },
  );

  app.get(
    "/olympiad-records.json",
    {
      schema: {
        summary: "Every recorded olympiad result set (superseded ones too) with evidence, and every chain entry",
        description:
          "Whole by design (the published proof); only operators add entries. Carries an ETag: `If-None-Match` → 304 while nothing changed.",
        tags: ["olympiad"],
        response: { 200: recordsDocumentSchema },
      },
    },
    async (request, reply) => {
      const cached = await cache.get("records.json", await olympiadVersion(deps.db, records.now()), async () => {
        const doc = await records.recordsDocument();
        const value = { ...doc, entries: doc.entries.map(asObjectBody) };
        return { type: JSON_TYPE, body: JSON.stringify(z.encode(recordsDocumentSchema, value)) };
      });
      return sendCached(request, reply, cached, "public, max-age=30");
    },
  );

  app.get(
    "/api/admin/audit/verify",
    {
      ...admin,
      schema: {
        summary: "Verify the audit log against its hash chain: links, hashes, and every row on the chain unchanged",
        tags: ["admin"],
        security: [{ adminBearer: [] }],
        response: { 200: auditVerifySchema, ...guarded },
      },
    },
    async () => auditStore.verifyChain(deps.db),
  );
}

/** Entry bodies on the olympiad chain are objects (the schema says so). */
function asObjectBody<E extends { body: unknown }>(e: E): E & { body: Record<string, unknown> } {
  return e as E & { body: Record<string, unknown> };
}
