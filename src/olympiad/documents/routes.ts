import { z } from "zod";
import { pageQuerySchema } from "../../db/paginate.js";
import { problemSchema } from "../../http/problem.js";
import type { App } from "../../http/types.js";
import { JSON_TYPE, sendCached } from "./page-cache.js";
import { machineMapSchema, olympiadAnswerSchema, VIEWS } from "./schemas.js";
import { type OlympiadDocuments, parseView } from "./service.js";

/**
 * GET /api/olympiad (the record, or `?view=`) and GET /olympiad.json (the machine map).
 * The documents change with the data (proposals, records) and the date (season): each is built
 * once per data version (page-cache.ts) and revalidated: a strong ETag, `Cache-Control: no-cache`,
 * 304 on a match. The proposals view is one page (`limit`, `cursor`).
 */

const tags = ["olympiad"];

const querySchema = pageQuerySchema
  .extend({
    view: z
      .string()
      .max(64)
      .optional()
      .describe(`one of: ${VIEWS.join(", ")}; omitted: the whole record (an unknown view → 400 invalid_view)`),
  })
  .describe("`limit` and `cursor` page the proposals view (other views have no list to page)");

export function olympiadDocumentRoutes(app: App, deps: { documents: OlympiadDocuments }) {
  const { documents } = deps;

  app.get(
    "/api/olympiad",
    {
      schema: {
        summary:
          "The olympiad record (every field of the spec), or one view: discovery, entry, governance, proposals, records",
        description:
          "`?view=proposals` answers one page of proposals, newest first: `limit` (1-100, default 20) and `cursor` (the previous page's `next_cursor`); texts are cut to 280 characters (the whole text: GET /api/olympiad/proposals/{id}). Answers carry an ETag; `If-None-Match` → 304 while nothing changed.",
        tags,
        querystring: querySchema,
        response: { 200: olympiadAnswerSchema, 400: problemSchema },
      },
    },
    async (request, reply) => {
      const view = parseView(request.query.view);
      const page = view === "proposals" ? { limit: request.query.limit, cursor: request.query.cursor } : {};
      const now = documents.now();
      const key = `api:${view ?? ""}:${page.limit ?? ""}:${page.cursor ?? ""}`;
      const cached = await documents.cache.get(key, await documents.version(now), async () => ({
        type: JSON_TYPE,
        body: JSON.stringify(z.encode(olympiadAnswerSchema, await documents.answer(view, now, page))),
      }));
      return sendCached(request, reply, cached);
    },
  );

  app.get(
    "/olympiad.json",
    {
      schema: {
        summary: "Full machine map of the olympiad: the record, charter, 40 events, families, scoring, season calendar",
        tags,
        response: { 200: machineMapSchema },
      },
    },
    async (request, reply) => {
      const now = documents.now();
      const cached = await documents.cache.get("machine-map", await documents.version(now), async () => ({
        type: JSON_TYPE,
        body: JSON.stringify(z.encode(machineMapSchema, await documents.machineMap(now))),
      }));
      return sendCached(request, reply, cached);
    },
  );
}
