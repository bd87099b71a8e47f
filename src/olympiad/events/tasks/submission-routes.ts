import type { FastifyRequest } from "fastify";
import { problemSchema } from "../../../http/problem.js";
import type { App } from "../../../http/types.js";
import { bearerToken, type Participants } from "../../entry/participants.js";
import {
  eventParams,
  finalsSchema,
  finalsSelectedSchema,
  mySubmissionsSchema,
  participantErrors,
  submitSchema,
  submittedSchema,
} from "./schemas.js";
import type { OlympiadTasks } from "./service.js";

/**
 * An entered participant's routes of a scored event (`Authorization: Bearer <participant_token>`):
 * submit a prediction file, list the entrant's submissions, select its finals.
 */
export function submissionRoutes(app: App, deps: { tasks: OlympiadTasks; participants: Participants }) {
  const { tasks, participants } = deps;
  const me = (request: FastifyRequest) => participants.authenticate(bearerToken(request.headers));

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
        body: finalsSchema,
        response: { 200: finalsSelectedSchema, ...participantErrors },
      },
    },
    async (request) => tasks.selectFinals(await me(request), request.params.event_id, request.body.submission_ids),
  );
}
