import { z } from "zod";
import { badRequest, problemSchema } from "../../http/problem.js";
import type { App } from "../../http/types.js";
import type { IdentityService } from "../../identity/service.js";
import { PaymentEdge } from "../../payments/mpp/http.js";
import type { Governance } from "../governance/service.js";
import type { ParticipantRow } from "../tables.js";
import type { Teams } from "../teams/service.js";
import {
  actionResultSchema,
  entryGuidanceSchema,
  meSchema,
  OLYMPIAD_ACTIONS,
  olympiadActionSchema,
  registerResultSchema,
  TEAM_OPS,
} from "./action-schemas.js";
import type { OlympiadEntry } from "./entry.js";
import { bearerToken, type Participants, participantView, registrationAnswer } from "./participants.js";

/**
 * POST /api/olympiad: one route, a discriminated union on `action` (register, enter, intent, team,
 * propose, vote). `register` needs nothing; every other action authenticates with
 * `Authorization: Bearer <participant_token>`. GET /api/olympiad/me: the caller's participant,
 * entry state and team. docs/olympiad-teams.md.
 */

/** The x402 202 (settlement outcome not known yet): the body `X402Answers.pending` builds. */
const pendingSchema = z
  .object({ status: z.literal(202), code: z.string(), detail: z.string(), retry_after: z.number().int() })
  .catchall(z.unknown())
  .describe("x402 settlement pending: retry the same request with the SAME proof after Retry-After seconds");

export interface OlympiadActionDeps {
  participants: Participants;
  entry: OlympiadEntry;
  teams: Teams;
  governance: Governance;
  /** verifies the join-work identity of an X-Identity-Token header (public_community standing) */
  identities: Pick<IdentityService, "verify">;
  baseUrl: string;
}

/** The X-Identity-Token header (the Authorization header carries the participant token here). */
function identityHeader(headers: Record<string, string | string[] | undefined>): string | null {
  const raw = headers["x-identity-token"];
  const v = Array.isArray(raw) ? raw[0] : raw;
  return typeof v === "string" && v.trim() !== "" ? v.trim() : null;
}

/** Olympiad actions authenticate with Authorization: Bearer, so MPP uses Payment-Authorization. */
const BEARER = { bearer: true } as const;

export function olympiadActionRoutes(app: App, deps: OlympiadActionDeps) {
  const { participants, entry, teams, governance, identities, baseUrl } = deps;
  // Both 402 dialects at the edge (src/payments/mpp/http.ts): x402 unchanged, MPP challenges beside it.
  const edge = new PaymentEdge(app.services.mpp, app.services.x402);
  /** The identity of the X-Identity-Token header, verified (401 for a bad one), or null without one. */
  const identityOf = async (headers: Record<string, string | string[] | undefined>) => {
    const token = identityHeader(headers);
    return token === null ? null : identities.verify(token);
  };
  /** Binds the header's identity, if any, to the participant (before propose and vote). */
  const withIdentity = async (
    participant: ParticipantRow,
    headers: Record<string, string | string[] | undefined>,
  ): Promise<ParticipantRow> => {
    const identity = await identityOf(headers);
    return identity ? participants.bindIdentity(participant, identity.id) : participant;
  };

  app.post(
    "/api/olympiad",
    {
      schema: {
        summary:
          "Olympiad actions: register, agent_challenge, enter, bind_order, bind_identity, intent, team, propose, vote",
        description: [
          `The body's \`action\` selects its schema (${OLYMPIAD_ACTIONS.join(", ")}); an unknown action is a 400 naming the valid ones.`,
          "`register` (no credential) answers 201 with `participant_id` and `participant_token` (shown once, stored hashed); at most OLYMPIAD_REGISTRATIONS_PER_IP_PER_DAY (default 10) per client IP per UTC day, then 429 `registration_daily_limit`. `agent_challenge` (no credential) answers a single-use nonce and the message whose wallet signature, sent as `agent_proof` in `register`, proves the agent id (proven ids are unique; an unproven `agent_id` is a self-asserted label). Every other action needs `Authorization: Bearer <participant_token>` (401 `participant_token_required` / `participant_token_invalid`).",
          "Governance standing (docs/olympiad-governance.md): `propose` and `vote` need an active paid gao-entry order bound to the participant (`enter`, or `bind_order` with its access token, which works before open registration), an operator's appointment, or a join-work identity for the public community: send `X-Identity-Token: <token from POST /api/join-work>` (with `register`, `bind_identity`, `propose` or `vote`; the first binding is permanent). Without standing: 403 `governance_standing_required`.",
          "`enter` needs a paid gao-entry order that you prove you hold: its `access_token` (or `access_url`), or an x402 payment for gao-entry in PAYMENT-SIGNATURE or X-PAYMENT (with an Idempotency-Key) made in this call. Without proof: 402 with the x402 challenge (when configured) and the card checkout link. 202 + Retry-After while an x402 settlement is pending. Before open registration: 409 `registration_not_open` with the date.",
          `\`team\` ops: ${TEAM_OPS.join(", ")}; every op answers the team view with \`eligible\` and \`reasons\` (ratio rule: human and autonomous share each 30-70 %, roster at most 50).`,
        ].join("\n\n"),
        tags: ["olympiad"],
        security: [{}, { participantBearer: [] }, { participantBearer: [], x402Payment: [] }] as {
          [label: string]: string[];
        }[],
        body: olympiadActionSchema,
        response: {
          200: actionResultSchema,
          201: registerResultSchema,
          202: pendingSchema,
          400: problemSchema,
          401: problemSchema,
          402: entryGuidanceSchema,
          403: problemSchema,
          404: problemSchema,
          409: problemSchema,
          410: problemSchema,
          503: problemSchema,
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      reply.header("Cache-Control", "private, no-store");
      if (body.action === "agent_challenge") {
        return reply.code(200).send(await participants.challenge(body.agent_id));
      }
      if (body.action === "register") {
        const { action: _action, ...input } = body;
        const identity = await identityOf(request.headers);
        return reply.code(201).send({
          ...registrationAnswer(await participants.register(input, identity?.id ?? null, { ip: request.ip }), baseUrl),
          next: [
            "Keep participant_token: it is shown once. Send it as Authorization: Bearer <participant_token>.",
            'Record an intent: { "action": "intent" }. Enter (paid gao-entry): { "action": "enter", "access_token": "…" } or with an x402 payment header.',
            'Teams: { "action": "team", "op": "create", "name": "…" } or { "action": "team", "op": "join", "join_code": "…" }.',
          ],
        });
      }
      const participant = await participants.authenticate(bearerToken(request.headers));
      switch (body.action) {
        case "intent":
          return reply.code(200).send(await entry.intent(participant, body.note));
        case "enter": {
          // Authorization carries the participant token here: an MPP credential comes in Payment-Authorization.
          const idem = request.headers["idempotency-key"];
          const item = () => entry.entryItem();
          const presented = await edge.guard(request, item, async () => edge.read(request, BEARER), BEARER);
          const outcome = await edge.guard(
            request,
            item,
            () =>
              entry.enter(
                participant,
                { access_token: body.access_token, access_url: body.access_url },
                {
                  header: presented.dialect === "x402" ? presented.header : undefined,
                  mpp: presented.dialect === "mpp" ? presented.credential : undefined,
                  idempotencyKey: Array.isArray(idem) ? idem[0] : idem,
                },
              ),
            BEARER,
          );
          if (outcome.kind === "pending") return edge.send202(reply, outcome.pending);
          if (outcome.kind === "payment_required") {
            const { body: guidance, challenge } = outcome;
            return edge.send402(
              reply,
              request,
              entry.entryItem(),
              { body: guidance, paymentRequired: challenge?.paymentRequired },
              BEARER,
            );
          }
          const headers = outcome.purchase
            ? edge.grantedHeaders(presented, outcome.purchase, outcome.body.purchase?.transaction ?? "")
            : { "Cache-Control": "private, no-store" };
          return reply.code(200).headers(headers).send(outcome.body);
        }
        case "bind_order":
          return reply
            .code(200)
            .send(await entry.bindOrder(participant, { access_token: body.access_token, access_url: body.access_url }));
        case "bind_identity": {
          const identity = await identityOf(request.headers);
          if (!identity) {
            throw badRequest(
              "identity_token_required",
              "bind_identity needs X-Identity-Token: <token> from POST /api/join-work.",
            );
          }
          await participants.bindIdentity(participant, identity.id);
          return reply
            .code(200)
            .send({ action: "bind_identity", participant_id: participant.id, identity_id: identity.id });
        }
        case "team": {
          const { action: _action, ...op } = body;
          return reply.code(200).send(await teams.act(participant, op));
        }
        case "propose":
          return reply.code(200).send(await governance.propose(await withIdentity(participant, request.headers), body));
        case "vote":
          return reply.code(200).send(await governance.vote(await withIdentity(participant, request.headers), body));
      }
    },
  );

  app.get(
    "/api/olympiad/me",
    {
      schema: {
        summary: "The caller's olympiad participant, entry state (entered only while the order is active) and team",
        description: "Needs `Authorization: Bearer <participant_token>` (from register).",
        tags: ["olympiad"],
        security: [{ participantBearer: [] }],
        response: { 200: meSchema, 401: problemSchema },
      },
    },
    async (request, reply) => {
      const participant = await participants.authenticate(bearerToken(request.headers));
      reply.header("Cache-Control", "private, no-store");
      return {
        participant: participantView(participant),
        entry: await entry.state(participant.id),
        team: await teams.viewOf(participant.id),
      };
    },
  );
}
