import { createHash } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { problemSchema } from "../http/problem.js";
import type { App } from "../http/types.js";
import { machineMapSchema, olympiadAnswerSchema, VIEWS } from "./document-schemas.js";
import { type OlympiadDocuments, parseView } from "./documents.js";

/**
 * GET /api/olympiad (the record, or `?view=`) and GET /olympiad.json (the machine map).
 * The documents change with the data (proposals, records) and the date (season), so they are
 * built per request and revalidated: a strong ETag, `Cache-Control: no-cache`, 304 on a match.
 */

const tags = ["olympiad"];

const querySchema = z.object({
  view: z
    .string()
    .max(64)
    .optional()
    .describe(`one of: ${VIEWS.join(", ")}; omitted: the whole record (an unknown view → 400 invalid_view)`),
});

async function revalidated(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
  if (reply.statusCode !== 200 || typeof payload !== "string") return payload;
  const etag = `"${createHash("sha256").update(payload).digest("base64url").slice(0, 32)}"`;
  reply.header("ETag", etag);
  reply.header("Cache-Control", "no-cache");
  const given = request.headers["if-none-match"];
  if (given?.split(",").some((t) => t.trim().replace(/^W\//, "") === etag || t.trim() === "*")) {
    reply.code(304);
    reply.removeHeader("content-type");
    reply.removeHeader("content-length");
    return "";
  }
  return payload;
}

export function olympiadDocumentRoutes(app: App, deps: { documents: OlympiadDocuments }) {
  const { documents } = deps;

  app.get(
    "/api/olympiad",
    {
      schema: {
        summary:
          "The olympiad record (every field of the spec), or one view: discovery, entry, governance, proposals, records",
        tags,
        querystring: querySchema,
        response: { 200: olympiadAnswerSchema, 400: problemSchema },
      },
      onSend: revalidated,
    },
    async (request) => documents.answer(parseView(request.query.view)),
  );

  app.get(
    "/olympiad.json",
    {
      schema: {
        summary: "Full machine map of the olympiad: the record, charter, 40 events, families, scoring, season calendar",
        tags,
        response: { 200: machineMapSchema },
      },
      onSend: revalidated,
    },
    async () => documents.machineMap(),
  );
}
