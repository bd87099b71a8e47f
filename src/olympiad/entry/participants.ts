import type { Kysely } from "kysely";
import type { Database } from "../../db/schema.js";
import type { ParticipantRow } from "../tables.js";
import { type AgentChallenge, createChallenge } from "./agent-challenge.js";
import type { ParticipantsContext, ParticipantsOptions } from "./participant-context.js";
import { bindIdentity } from "./participant-identity.js";
import { participantStore } from "./participant-store.js";
import { authenticate } from "./participant-token.js";
import type { Registered } from "./participant-view.js";
import { type RegisterInput, register } from "./registering.js";

/**
 * Olympiad participants (POST /api/olympiad { action: "register" }) and their bearer token.
 *
 * The token is 32 random bytes (base64url) behind the prefix `gao_`, shown once; only its SHA-256
 * is stored (olympiad_participants.token_hash, unique), so a lookup by hash authenticates and a
 * database dump opens nothing. The token is never logged. Every other action sends it as
 * `Authorization: Bearer <participant_token>`.
 *
 * `Participants` is the capability's one service; its parts are in this folder: registering.ts
 * (register, the per-IP budget), agent-challenge.ts (proving an agent id), participant-token.ts
 * (the token and authentication), participant-identity.ts (binding a join-work identity),
 * participant-view.ts (what callers see), participant-store.ts (the SQL) and
 * participant-context.ts (what they share).
 */

export {
  AGENT_ID_PATTERN,
  type AgentChallenge,
  type AgentProofInput,
  agentChallengeMessage,
} from "./agent-challenge.js";
export type { ParticipantsOptions } from "./participant-context.js";
export { participantStore } from "./participant-store.js";
export { bearerToken, PARTICIPANT_TOKEN_PREFIX, participantTokenHash } from "./participant-token.js";
export { type ParticipantView, participantView, type Registered, registrationAnswer } from "./participant-view.js";
export type { RegisterInput } from "./registering.js";

export class Participants {
  private readonly now: () => Date;
  private readonly baseUrl: string;
  private readonly challengeTtlMs: number;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: ParticipantsOptions = {},
  ) {
    this.now = options.now ?? (() => new Date());
    this.baseUrl = options.baseUrl ?? "";
    this.challengeTtlMs = (options.challengeTtlSeconds ?? 300) * 1000;
  }

  /** What the parts share, read from this service at each call (a copy with another `now` keeps its clock). */
  private ctx(): ParticipantsContext {
    return {
      db: this.db,
      options: this.options,
      baseUrl: this.baseUrl,
      challengeTtlMs: this.challengeTtlMs,
      now: () => this.now(),
    };
  }

  /**
   * POST /api/olympiad { action: "agent_challenge", agent_id }: a single-use nonce, stored with its
   * agent id and expiry, and the message to sign with the wallet that proves the id at `register`.
   */
  async challenge(rawAgentId: string): Promise<AgentChallenge> {
    return createChallenge(this.ctx(), rawAgentId);
  }

  /**
   * Creates a participant and its token (shown once). 400 for a body that does not fit `who`. An
   * agent id without `agent_proof` is a self-asserted label (never unique, never refused for being
   * taken); with a valid proof it is proven, unique and bound to the signer (409 `agent_id_taken`
   * when another registration proved it first). `identityId`: a join-work identity to bind.
   * `client.ip` (the route passes `request.ip`, MCP the caller's address) counts against the daily
   * budget of registrations; without it (callers inside the service, stdio) nothing is counted.
   */
  async register(
    input: RegisterInput,
    identityId?: string | null,
    client: { ip?: string | null } = {},
  ): Promise<Registered> {
    return register(this.ctx(), input, identityId, client);
  }

  /**
   * Binds a join-work identity to the participant (public_community standing). Once bound, the
   * binding stays: the same identity again is a no-op, another one is 409 `participant_identity_bound`.
   */
  async bindIdentity(participant: ParticipantRow, identityId: string): Promise<ParticipantRow> {
    return bindIdentity(this.ctx(), participant, identityId);
  }

  /**
   * The participant of a bearer token: 401 `participant_token_required` without one, 401
   * `participant_token_invalid` for a malformed or unknown one.
   */
  async authenticate(token: string | null): Promise<ParticipantRow> {
    return authenticate(this.ctx(), token);
  }

  async byId(id: string): Promise<ParticipantRow | undefined> {
    return participantStore.byId(this.db, id);
  }
}
