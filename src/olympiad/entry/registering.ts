import { randomBytes } from "node:crypto";
import { isUniqueViolation } from "../../db/database.js";
import { countToday, type DailyBudget } from "../../db/ip-daily.js";
import { clientIpHash } from "../../http/client-ip.js";
import { badRequest } from "../../http/problem.js";
import type { ParticipantRow, Who } from "../tables.js";
import {
  AGENT_ID_PATTERN,
  type AgentProofInput,
  agentTaken,
  challengeRefused,
  checkAgentProof,
  invalidAgentId,
} from "./agent-challenge.js";
import type { ParticipantsContext } from "./participant-context.js";
import { participantStore } from "./participant-store.js";
import { newParticipantToken, participantTokenHash } from "./participant-token.js";
import { participantView, type Registered } from "./participant-view.js";

/** Registering (POST /api/olympiad { action: "register" }): a participant row and its token, shown once. */

export interface RegisterInput {
  who: Who;
  name: string;
  agent_id?: string | undefined;
  operator_name?: string | undefined;
  email?: string | undefined;
  agent_proof?: AgentProofInput | undefined;
}

const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * The daily budget of registrations per client IP: a registration is free and gives no standing,
 * but it is a row; OLYMPIAD_REGISTRATIONS_PER_IP_PER_DAY bounds what one address can write.
 */
function registrationBudget(ctx: ParticipantsContext): DailyBudget {
  return {
    scope: "olympiad-register",
    limit: ctx.options.registrationsPerIpPerDay ?? 0,
    code: "registration_daily_limit",
    message: (limit) =>
      `At most ${limit} olympiad registrations are accepted per IP per day (UTC); try again after midnight UTC, or use a participant token you have.`,
  };
}

/**
 * Creates a participant and its token (shown once). 400 for a body that does not fit `who`. An
 * agent id without `agent_proof` is a self-asserted label (never unique, never refused for being
 * taken); with a valid proof it is proven, unique and bound to the signer (409 `agent_id_taken`
 * when another registration proved it first). `identityId`: a join-work identity to bind.
 * `client.ip` (the route passes `request.ip`, MCP the caller's address) counts against the daily
 * budget of registrations; without it (callers inside the service, stdio) nothing is counted.
 */
export async function register(
  ctx: ParticipantsContext,
  input: RegisterInput,
  identityId?: string | null,
  client: { ip?: string | null } = {},
): Promise<Registered> {
  const name = input.name.trim();
  if (name.length === 0) throw badRequest("name_required", "A name is required (1-80 characters).");
  const agentId = input.agent_id?.trim() || null;
  const operator = input.operator_name?.trim() || null;
  const email = input.email?.trim() || null;
  if (input.who === "human_for_self") {
    if (agentId !== null) {
      throw badRequest(
        "agent_id_not_allowed",
        'A human registering for themself has no agent_id; use who "human_for_agent" to register an agent.',
      );
    }
    if (operator !== null) {
      throw badRequest(
        "operator_name_not_allowed",
        "operator_name names the human who registers an agent; it does not apply to human_for_self.",
      );
    }
  } else if (agentId === null) {
    throw badRequest(
      "agent_id_required",
      input.who === "agent_self"
        ? "An agent registering itself must give its agent_id."
        : "A human registering an agent must give the agent's agent_id.",
    );
  }
  if (input.who === "human_for_agent" && operator === null) {
    throw badRequest("operator_name_required", "A human registering an agent must give their operator_name.");
  }
  if (agentId !== null && !AGENT_ID_PATTERN.test(agentId)) throw invalidAgentId();
  if (email !== null && !EMAIL_RE.test(email)) throw badRequest("invalid_email", "The e-mail address is not valid.");
  const proof = input.agent_proof;
  if (proof !== undefined && agentId === null) {
    throw badRequest("agent_proof_not_allowed", "agent_proof proves an agent_id; this registration has none.");
  }
  const signer = proof && agentId !== null ? await checkAgentProof(ctx, agentId, proof) : null;

  const token = newParticipantToken();
  const row: ParticipantRow = {
    id: `par_${randomBytes(12).toString("base64url")}`,
    token_hash: participantTokenHash(token),
    who: input.who,
    name,
    agent_id: agentId,
    operator_name: operator,
    email,
    created_at: ctx.now().toISOString(),
    proven_agent_id: signer ? agentId : null,
    agent_address: signer,
    identity_id: identityId ?? null,
  };
  try {
    await ctx.db.transaction().execute(async (trx) => {
      // the nonce is used once: of two registrations with one proof, one gets past this
      if (proof && !(await participantStore.useChallenge(trx, proof.nonce, row.created_at))) {
        throw challengeRefused(await participantStore.challenge(trx, proof.nonce), row.created_at);
      }
      const ip = client.ip?.trim();
      if (ip && ctx.options.ipKey) {
        await countToday(trx, registrationBudget(ctx), clientIpHash(ctx.options.ipKey, ip), ctx.now());
      }
      await participantStore.insert(trx, row);
    });
  } catch (err) {
    if (
      isUniqueViolation(err) &&
      signer &&
      agentId !== null &&
      (await participantStore.byProvenAgentId(ctx.db, agentId))
    ) {
      throw agentTaken(agentId);
    }
    throw err;
  }
  return { participant: participantView(row), participant_token: token };
}
