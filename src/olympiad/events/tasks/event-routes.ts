import { z } from "zod";
import { problemSchema } from "../../../http/problem.js";
import type { App } from "../../../http/types.js";
import {
  eventErrors,
  eventIndexSchema,
  eventParams,
  eventViewSchema,
  fileParams,
  keySchema,
  leaderboardSchema,
} from "./schemas.js";
import type { OlympiadTasks } from "./service.js";

/** The public reads of scored events: the index, one event, its files, its key (after the close), its leaderboard. */
export function eventRoutes(app: App, deps: { tasks: OlympiadTasks }) {
  const { tasks } = deps;

  app.get(
    "/api/olympiad/events",
    {
      schema: {
        summary: "The 40 olympiad events, each with its scored task's state, metric and window (null: no task)",
        tags: ["olympiad"],
        response: { 200: eventIndexSchema },
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
        response: { 200: eventViewSchema, ...eventErrors },
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
        response: { 200: z.string(), ...eventErrors },
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
        response: { 200: keySchema, ...eventErrors, 403: problemSchema },
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
        response: { 200: leaderboardSchema, ...eventErrors },
      },
    },
    async (request) => tasks.leaderboard(request.params.event_id),
  );
}
