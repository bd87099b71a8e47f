import type { FastifyRequest } from "fastify";
import { operatorActor } from "../../../admin/routes.js";
import type { AdminGuard } from "../../../http/admin-auth.js";
import { problemSchema } from "../../../http/problem.js";
import type { App } from "../../../http/types.js";
import {
  eventErrors,
  eventParams,
  eventViewSchema,
  rescoredSchema,
  rescoreSchema,
  taskRequestSchema,
} from "./schemas.js";
import type { OlympiadTasks } from "./service.js";

/** The operator's routes of a scored event (admin token, audited): set its task, re-score it. */
export function taskAdminRoutes(app: App, deps: { tasks: OlympiadTasks; requireAdmin: AdminGuard }) {
  const { tasks } = deps;
  const admin = { preValidation: (request: FastifyRequest) => deps.requireAdmin(request) };

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
          ...eventErrors,
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
        body: rescoreSchema,
        response: {
          201: rescoredSchema,
          ...eventErrors,
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
}
