import { randomBytes } from "node:crypto";
import { address as solanaAddress } from "@solana/kit";
import { getAddress } from "viem";
import { badRequest, conflict, Problem } from "../../http/problem.js";
import { verifyWalletSignature } from "../../payments/wallet-signature.js";
import type { AgentChallengeRow } from "../tables.js";
import type { ParticipantsContext } from "./participant-context.js";
import { participantStore } from "./participant-store.js";

/**
 * Proving an agent id: the `agent_challenge` action hands out a single-use nonce and the message
 * naming the id; `register` with `agent_proof` (a wallet signature over that message) makes the id
 * proven, unique and bound to the signer.
 */

/**
 * An agent id: the same alphabet the x402 `note: agent:<id>` accepts, so an agent's purchase made
 * inside `enter` records it on the order.
 */
export const AGENT_ID_PATTERN = /^[A-Za-z0-9._:@-]{1,200}$/;

/**
 * A proof that the registrant controls the agent id: a wallet signature over the challenge message
 * of `nonce` (from the `agent_challenge` action), which names the agent id.
 */
export interface AgentProofInput {
  nonce: string;
  chain: "evm" | "solana";
  address: string;
  signature: string;
}

export interface AgentChallenge {
  action: "agent_challenge";
  agent_id: string;
  nonce: string;
  /** the exact text to sign (EIP-191 personal_sign, or ed25519 over its UTF-8 bytes) */
  message: string;
  expires_at: string;
}

const DAY_MS = 86_400_000;

/** The text an agent signs to prove its id (the service's base URL keeps it from serving elsewhere). */
export function agentChallengeMessage(
  baseUrl: string,
  row: Pick<AgentChallengeRow, "agent_id" | "nonce" | "expires_at">,
): string {
  return [
    "Lab Phi olympiad: I control this agent id.",
    `agent_id: ${row.agent_id}`,
    `nonce: ${row.nonce}`,
    `service: ${baseUrl}`,
    `expires: ${row.expires_at}`,
  ].join("\n");
}

/**
 * POST /api/olympiad { action: "agent_challenge", agent_id }: a single-use nonce, stored with its
 * agent id and expiry, and the message to sign with the wallet that proves the id at `register`.
 */
export async function createChallenge(ctx: ParticipantsContext, rawAgentId: string): Promise<AgentChallenge> {
  const agentId = rawAgentId.trim();
  if (!AGENT_ID_PATTERN.test(agentId)) throw invalidAgentId();
  const now = ctx.now();
  await participantStore.sweepChallenges(ctx.db, new Date(now.getTime() - DAY_MS).toISOString());
  const row: AgentChallengeRow = {
    nonce: randomBytes(24).toString("base64url"),
    agent_id: agentId,
    created_at: now.toISOString(),
    expires_at: new Date(now.getTime() + ctx.challengeTtlMs).toISOString(),
    used_at: null,
  };
  await participantStore.insertChallenge(ctx.db, row);
  return {
    action: "agent_challenge",
    agent_id: agentId,
    nonce: row.nonce,
    message: agentChallengeMessage(ctx.baseUrl, row),
    expires_at: row.expires_at,
  };
}

/**
 * Checks an agent-id proof without using it: the challenge exists, is unused, unexpired and for
 * this agent id; the id is not proven yet; the signature over the challenge message is the
 * address's. Returns the canonical signer (`evm:0x…` checksummed, `solana:<base58>`).
 */
export async function checkAgentProof(
  ctx: ParticipantsContext,
  agentId: string,
  proof: AgentProofInput,
): Promise<string> {
  const nowIso = ctx.now().toISOString();
  const found = await participantStore.challenge(ctx.db, proof.nonce);
  if (!found || found.used_at !== null || found.expires_at <= nowIso) throw challengeRefused(found, nowIso);
  if (found.agent_id !== agentId) {
    throw badRequest(
      "agent_challenge_mismatch",
      `This challenge is for the agent id ${found.agent_id}, not ${agentId}: ask for a challenge for the id you register.`,
      { challenge_agent_id: found.agent_id },
    );
  }
  if (await participantStore.byProvenAgentId(ctx.db, agentId)) throw agentTaken(agentId);
  let signer: string;
  try {
    signer =
      proof.chain === "evm"
        ? `evm:${getAddress(proof.address.trim())}`
        : `solana:${solanaAddress(proof.address.trim())}`;
  } catch {
    throw badRequest(
      "invalid_agent_address",
      proof.chain === "evm"
        ? "address must be a 0x-prefixed 20-byte hex EVM address."
        : "address must be a base58 Solana address.",
    );
  }
  const address = signer.slice(signer.indexOf(":") + 1);
  const ok = await verifyWalletSignature(
    proof.chain,
    address,
    agentChallengeMessage(ctx.baseUrl, found),
    proof.signature.trim(),
    {
      code: "agent_signature_invalid",
    },
  );
  if (!ok) {
    throw new Problem(
      403,
      "agent_signature_invalid",
      `The signature is not ${address}'s over this challenge's message (agent id ${agentId}).`,
    );
  }
  return signer;
}

export function agentTaken(agentId: string): Problem {
  return conflict(
    "agent_id_taken",
    `The agent id ${agentId} is already proven by another registration's wallet signature; a proven id is unique. (Register without agent_proof to carry it as a self-asserted label.)`,
    { agent_id: agentId, agent_id_source: "proven" },
  );
}

export function invalidAgentId(): Problem {
  return badRequest(
    "invalid_agent_id",
    "agent_id must be 1-200 characters from A-Z a-z 0-9 . _ : @ - (the alphabet of the x402 note agent:<id>).",
  );
}

/** Why a challenge cannot be used: unknown (400), already used (409), expired (410). */
export function challengeRefused(row: AgentChallengeRow | undefined, nowIso: string): Problem {
  if (!row) {
    return badRequest(
      "agent_challenge_invalid",
      "No agent challenge has this nonce: ask for one with agent_challenge.",
    );
  }
  if (row.used_at !== null) {
    return conflict("agent_challenge_used", "This challenge was already used; a nonce proves one registration once.");
  }
  if (row.expires_at <= nowIso) {
    return new Problem(
      410,
      "agent_challenge_expired",
      `This challenge expired at ${row.expires_at}; ask for a new one.`,
      {
        expired_at: row.expires_at,
      },
    );
  }
  return conflict("agent_challenge_used", "This challenge was already used; a nonce proves one registration once.");
}
