import { z } from "zod";
import { nextCursorSchema, pageQuerySchema } from "../db/paginate.js";
import { Problem, problemSchema } from "../http/problem.js";
import { idText } from "../http/text.js";
import type { App } from "../http/types.js";
import { type IdentityService, presentedToken } from "../identity/service.js";
import type { JobManager } from "./manage.js";
import { jobViewSchema } from "./schemas.js";
import type { JobService } from "./service.js";
import type { JobState } from "./tables.js";

/**
 * Listing, cancelling and deleting suite jobs (issue #23 item 2; docs/suite.md "Listing and deleting
 * jobs", "Cancelling a job"): `GET /api/jobs` with a join-work identity token,
 * `POST /api/jobs/:id/cancel` and `DELETE /api/jobs/:id` with the job token. The rules are in manage.ts.
 */

const JOB_STATES = [
  "awaiting_input",
  "uploading",
  "queued",
  "running",
  "done",
  "failed",
  "cancelled",
] as const satisfies readonly JobState[];

const listQuerySchema = pageQuerySchema.extend({
  state: z.enum(JOB_STATES).optional().describe("only the jobs in this state"),
});

export function jobListingRoutes(
  app: App,
  deps: { jobs: JobService; manager: JobManager; identities: IdentityService },
) {
  const { jobs, manager, identities } = deps;

  app.get(
    "/api/jobs",
    {
      schema: {
        summary: "The caller's suite jobs, newest first (join-work identity token)",
        description:
          "Needs `Authorization: Bearer <identity token>` (or `X-Identity-Token`) from POST /api/join-work: the jobs bought with that identity (quoted with it), newest first, each as GET /api/jobs/{id} shows it (the job token is never listed: it was shown once, at purchase). `limit` (1-100, default 20), `cursor` (the previous page's `next_cursor`), `state` (one state). Deleted jobs are not listed. Without a valid token: 401.",
        tags: ["jobs"],
        security: [{ identityBearer: [] }],
        querystring: listQuerySchema,
        response: {
          200: z.object({
            items: z.array(jobViewSchema),
            limit: z.number().int(),
            next_cursor: nextCursorSchema,
          }),
          400: problemSchema,
          401: problemSchema,
        },
      },
    },
    async (request, reply) => {
      const token = presentedToken(request.headers);
      if (token === null) {
        throw new Problem(
          401,
          "identity_token_required",
          "Send your join-work identity token: Authorization: Bearer <token> (POST /api/join-work issues one).",
          {},
          { "WWW-Authenticate": 'Bearer realm="identity"' },
        );
      }
      const identity = await identities.verify(token);
      const { limit, cursor, state } = request.query;
      reply.header("Cache-Control", "private, no-store");
      return manager.list(identity.id, { limit, cursor, state });
    },
  );

  app.post(
    "/api/jobs/:id/cancel",
    {
      schema: {
        summary: "Cancel a suite job: it ends `cancelled`, its segments stop, its unused free volume returns",
        description:
          "Needs `Authorization: Bearer <job_token>`. Allowed while the job waits for or receives its input, is queued or runs. The job ends `cancelled` at once (error code `cancelled`); its waiting segments leave the queue and a running segment stops at its next unit (within about a second, 5 s at most, on any worker); an upload in progress stops taking bytes (409 job_cancelled). The free volume the job did not code returns to its caller (the identity's month, or the IP's day); cancel is not a refund: a paid job's payment stays. Cancelling a cancelled job answers the same 200 again. A job that is done or failed: 409 job_ended; deleted or expired: 410. Its data stays until it expires or is deleted (DELETE /api/jobs/{id}).",
        tags: ["jobs"],
        security: [{ jobBearer: [] }],
        params: z.object({ id: idText(80).describe("job id (job_…)") }),
        response: {
          200: jobViewSchema,
          401: problemSchema,
          409: problemSchema,
          410: problemSchema,
        },
      },
    },
    async (request, reply) => {
      const job = await jobs.authorize(request.params.id, request.headers.authorization);
      const cancelled = await manager.cancel(job);
      reply.header("Cache-Control", "no-store");
      return jobs.view(cancelled);
    },
  );

  app.delete(
    "/api/jobs/:id",
    {
      schema: {
        summary: "Delete a suite job: its input and output are removed (204); then 410 job_deleted",
        description:
          "Needs `Authorization: Bearer <job_token>`. Allowed while the job waits for its input or once it has ended (done, failed, cancelled); a job receiving its input, queued or running answers 409 job_running (cancel it or wait for its end). Its input and output are deleted from the object store (local disk or S3) and every route of the job answers 410 job_deleted afterwards (deleting again too).",
        tags: ["jobs"],
        security: [{ jobBearer: [] }],
        params: z.object({ id: idText(80).describe("job id (job_…)") }),
        response: {
          204: z.null().describe("deleted"),
          401: problemSchema,
          409: problemSchema,
          410: problemSchema,
        },
      },
    },
    async (request, reply) => {
      const job = await jobs.authorize(request.params.id, request.headers.authorization);
      await manager.delete(job);
      return reply.code(204).send(null);
    },
  );
}
