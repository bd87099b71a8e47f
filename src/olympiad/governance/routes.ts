import type { FastifyRequest } from "fastify";
import { z } from "zod";
import { operatorActor } from "../../admin/routes.js";
import type { AdminGuard } from "../../http/admin-auth.js";
import { problemSchema } from "../../http/problem.js";
import { idText } from "../../http/text.js";
import type { App } from "../../http/types.js";
import { JSON_TYPE, olympiadVersion, PageCache, sendCached } from "../documents/page-cache.js";
import { proposalSchema, roleActionSchema, roleResultSchema, rolesListSchema } from "./schemas.js";
import type { Governance } from "./service.js";

/**
 * Governance routes besides POST /api/olympiad (O2's): one proposal with its tally (public), and
 * the operator's appointments of lab stewards and integrity auditors (ADMIN_TOKEN, audited).
 */
export function governanceRoutes(app: App, deps: { governance: Governance; requireAdmin: AdminGuard }) {
  const { governance } = deps;
  const cache = new PageCache();
  const admin = { preValidation: (request: FastifyRequest) => deps.requireAdmin(request) };
  const guarded = { 400: problemSchema, 401: problemSchema, 503: problemSchema };

  app.get(
    "/api/olympiad/proposals/:id",
    {
      schema: {
        summary:
          "One olympiad proposal with its whole text and its tally (live while open, fixed once the window has closed)",
        description:
          "Lists cut a proposal's text to 280 characters; this answer has the whole of it. It carries an ETag: `If-None-Match` → 304 while nothing changed.",
        tags: ["olympiad"],
        params: z.object({ id: idText(100) }),
        response: { 200: proposalSchema, 400: problemSchema, 404: problemSchema },
      },
    },
    async (request, reply) => {
      // The whole proposal (lists cut its text), built once per data version, with its ETag (304 on a match).
      const now = governance.now();
      const version = await olympiadVersion(governance.db, now);
      const cached = await cache.get(`proposal:${request.params.id}`, version, async () => ({
        type: JSON_TYPE,
        body: JSON.stringify(z.encode(proposalSchema, await governance.proposal(request.params.id))),
      }));
      return sendCached(request, reply, cached);
    },
  );

  app.get(
    "/api/admin/olympiad/roles",
    {
      ...admin,
      schema: {
        summary: "List the olympiad's lab stewards and integrity auditors (operator)",
        tags: ["olympiad"],
        security: [{ adminBearer: [] }],
        querystring: z.object({ participant_id: idText(100).optional() }),
        response: { 200: rolesListSchema, ...guarded },
      },
    },
    async (request) => ({ roles: await governance.roles(request.query.participant_id) }),
  );

  app.post(
    "/api/admin/olympiad/roles",
    {
      ...admin,
      schema: {
        summary: "Appoint or remove a lab steward or integrity auditor (operator; audited)",
        description:
          "A role counts for votes cast after the change; votes already cast keep the constituency they were cast in.",
        tags: ["olympiad"],
        security: [{ adminBearer: [] }],
        body: roleActionSchema,
        response: { 200: roleResultSchema, 404: problemSchema, 415: problemSchema, ...guarded },
      },
    },
    async (request) => {
      const { participant_id, role, op } = request.body;
      const result = await governance.changeRole(operatorActor(request), { participant_id, role, op });
      return { participant_id, role, op, ...result };
    },
  );
}
