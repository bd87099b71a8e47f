import { createHash, randomBytes } from "node:crypto";
import { address as solanaAddress } from "@solana/kit";
import type { Kysely } from "kysely";
import { getAddress } from "viem";
import { isUniqueViolation } from "../../db/database.js";
import type { Executor } from "../../db/executor.js";
import { countToday, type DailyBudget } from "../../db/ip-daily.js";
import type { Database } from "../../db/schema.js";
import { clientIpHash } from "../../http/client-ip.js";
import { badRequest, conflict, Problem } from "../../http/problem.js";
import { verifyWalletSignature } from "../../payments/wallet-signature.js";
import type { AgentChallengeRow, ParticipantRow, Who } from "../tables.js";

/**
 * Olympiad participants (POST /api/olympiad { action: "register" }) and their bearer token.
 *
 * The token is 32 random bytes (base64url) behind the prefix `gao_`, shown once; only its SHA-256
 * is stored (olympiad_participants.token_hash, unique), so a lookup by hash authenticates and a
 * database dump opens nothing. The token is never logged. Every other action sends it as
 * `Authorization: Bearer <participant_token>`.
 */

export const PARTICIPANT_TOKEN_PREFIX = "gao_";
const TOKEN_RE = /^gao_[A-Za-z0-9_-]{43}$/;

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

export interface RegisterInput {
  who: Who;
  name: string;
  agent_id?: string | undefined;
  operator_name?: string | undefined;
  email?: string | undefined;
  agent_proof?: AgentProofInput | undefined;
}

export interface AgentChallenge {
  action: "agent_challenge";
  agent_id: string;
  nonce: string;
  /** the exact text to sign (EIP-191 personal_sign, or ed25519 over its UTF-8 bytes) */
  message: string;
  expires_at: string;
}

export interface ParticipantView {
  participant_id: string;
  who: Who;
  name: string;
  agent_id: string | null;
  /** proven: a wallet signature bound the id to `agent_address` (unique); self_asserted: a label anyone may carry */
  agent_id_source: "proven" | "self_asserted" | null;
  agent_address: string | null;
  operator_name: string | null;
  /** bound to a join-work identity (public_community standing) */
  identity_bound: boolean;
  /** human (human_for_self) or autonomous (agent_self, human_for_agent): how the ratio rule counts them */
  member_kind: "human" | "autonomous";
  registered_at: string;
}

export interface Registered {
  participant: ParticipantView;
  participant_token: string;
}

export const participantStore = {
  async insert(db: Executor, row: ParticipantRow): Promise<void> {
    await db.insertInto("olympiad_participants").values(row).execute();
  },

  byId(db: Executor, id: string): Promise<ParticipantRow | undefined> {
    return db.selectFrom("olympiad_participants").selectAll().where("id", "=", id).executeTakeFirst();
  },

  byTokenHash(db: Executor, hash: string): Promise<ParticipantRow | undefined> {
    return db.selectFrom("olympiad_participants").selectAll().where("token_hash", "=", hash).executeTakeFirst();
  },

  /** The participant that proved this agent id, if any (self-asserted labels are not unique). */
  byProvenAgentId(db: Executor, agentId: string): Promise<ParticipantRow | undefined> {
    return db.selectFrom("olympiad_participants").selectAll().where("proven_agent_id", "=", agentId).executeTakeFirst();
  },

  /** Binds a join-work identity once: true when bound now, false when the participant already had one. */
  async bindIdentity(db: Executor, participantId: string, identityId: string): Promise<boolean> {
    const r = await db
      .updateTable("olympiad_participants")
      .set({ identity_id: identityId })
      .where("id", "=", participantId)
      .where("identity_id", "is", null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  },

  async insertChallenge(db: Executor, row: AgentChallengeRow): Promise<void> {
    await db.insertInto("olympiad_agent_challenges").values(row).execute();
  },

  challenge(db: Executor, nonce: string): Promise<AgentChallengeRow | undefined> {
    return db.selectFrom("olympiad_agent_challenges").selectAll().where("nonce", "=", nonce).executeTakeFirst();
  },

  /** Uses a challenge once, only while unused and unexpired: true for the one caller that used it. */
  async useChallenge(db: Executor, nonce: string, nowIso: string): Promise<boolean> {
    const r = await db
      .updateTable("olympiad_agent_challenges")
      .set({ used_at: nowIso })
      .where("nonce", "=", nonce)
      .where("used_at", "is", null)
      .where("expires_at", ">", nowIso)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  },

  /** Deletes challenges that expired more than a day ago (kept a day so a late replay still reads "used"/"expired"). */
  async sweepChallenges(db: Executor, beforeIso: string): Promise<void> {
    await db.deleteFrom("olympiad_agent_challenges").where("expires_at", "<", beforeIso).execute();
  },
};

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

export function participantTokenHash(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** The token of `Authorization: Bearer <token>`, or null when no bearer credential is sent. */
export function bearerToken(headers: Record<string, string | string[] | undefined>): string | null {
  const raw = headers.authorization;
  const auth = Array.isArray(raw) ? raw[0] : raw;
  if (typeof auth !== "string") return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(auth.trim());
  return m ? (m[1] as string) : null;
}

export function participantView(row: ParticipantRow): ParticipantView {
  return {
    participant_id: row.id,
    who: row.who,
    name: row.name,
    agent_id: row.agent_id,
    agent_id_source: row.agent_id === null ? null : row.proven_agent_id ? "proven" : "self_asserted",
    agent_address: row.proven_agent_id ? (row.agent_address ?? null) : null,
    operator_name: row.operator_name,
    identity_bound: row.identity_id != null,
    member_kind: row.who === "human_for_self" ? "human" : "autonomous",
    registered_at: row.created_at,
  };
}

/** What a registration answers (HTTP 201 and the MCP tool alike): the token once, and where to go next. */
export function registrationAnswer(registered: Registered, baseUrl: string) {
  return {
    action: "register" as const,
    participant_id: registered.participant.participant_id,
    participant_token: registered.participant_token,
    token_type: "Bearer" as const,
    participant: registered.participant,
    links: {
      actions: `${baseUrl}/api/olympiad`,
      me: `${baseUrl}/api/olympiad/me`,
      entry: `${baseUrl}/api/olympiad?view=entry`,
      checkout: `${baseUrl}/pay?sku=gao-entry`,
    },
  };
}

const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export interface ParticipantsOptions {
  now?: () => Date;
  /** the service's base URL, named in the agent-id challenge message */
  baseUrl?: string;
  /** how long an agent-id challenge may be used (OLYMPIAD_AGENT_CHALLENGE_TTL_SECONDS, default 300) */
  challengeTtlSeconds?: number;
  /** registrations per client IP per UTC day (OLYMPIAD_REGISTRATIONS_PER_IP_PER_DAY); 0 or absent: no limit */
  registrationsPerIpPerDay?: number;
  /** the key of the client-IP hash (src/http/client-ip.ts) */
  ipKey?: string;
}

const DAY_MS = 86_400_000;

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

  /**
   * POST /api/olympiad { action: "agent_challenge", agent_id }: a single-use nonce, stored with its
   * agent id and expiry, and the message to sign with the wallet that proves the id at `register`.
   */
  async challenge(rawAgentId: string): Promise<AgentChallenge> {
    const agentId = rawAgentId.trim();
    if (!AGENT_ID_PATTERN.test(agentId)) throw invalidAgentId();
    const now = this.now();
    await participantStore.sweepChallenges(this.db, new Date(now.getTime() - DAY_MS).toISOString());
    const row: AgentChallengeRow = {
      nonce: randomBytes(24).toString("base64url"),
      agent_id: agentId,
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + this.challengeTtlMs).toISOString(),
      used_at: null,
    };
    await participantStore.insertChallenge(this.db, row);
    return {
      action: "agent_challenge",
      agent_id: agentId,
      nonce: row.nonce,
      message: agentChallengeMessage(this.baseUrl, row),
      expires_at: row.expires_at,
    };
  }

  /**
   * Creates a participant and its token (shown once). 400 for a body that does not fit `who`. An
   * agent id without `agent_proof` is a self-asserted label (never unique, never refused for being
   * taken); with a valid proof it is proven, unique and bound to the signer (409 `agent_id_taken`
   * when another registration proved it first). `identityId`: a join-work identity to bind.
   */
  /**
   * The daily budget of registrations per client IP: a registration is free and gives no standing,
   * but it is a row; OLYMPIAD_REGISTRATIONS_PER_IP_PER_DAY bounds what one address can write.
   */
  private registrationBudget(): DailyBudget {
    return {
      scope: "olympiad-register",
      limit: this.options.registrationsPerIpPerDay ?? 0,
      code: "registration_daily_limit",
      message: (limit) =>
        `At most ${limit} olympiad registrations are accepted per IP per day (UTC); try again after midnight UTC, or use a participant token you have.`,
    };
  }

  /**
   * `client.ip` (the route passes `request.ip`, MCP the caller's address) counts against the daily
   * budget of registrations; without it (callers inside the service, stdio) nothing is counted.
   */
  async register(
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
    const signer = proof && agentId !== null ? await this.checkProof(agentId, proof) : null;

    const token = `${PARTICIPANT_TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
    const row: ParticipantRow = {
      id: `par_${randomBytes(12).toString("base64url")}`,
      token_hash: participantTokenHash(token),
      who: input.who,
      name,
      agent_id: agentId,
      operator_name: operator,
      email,
      created_at: this.now().toISOString(),
      proven_agent_id: signer ? agentId : null,
      agent_address: signer,
      identity_id: identityId ?? null,
    };
    try {
      await this.db.transaction().execute(async (trx) => {
        // the nonce is used once: of two registrations with one proof, one gets past this
        if (proof && !(await participantStore.useChallenge(trx, proof.nonce, row.created_at))) {
          throw challengeRefused(await participantStore.challenge(trx, proof.nonce), row.created_at);
        }
        const ip = client.ip?.trim();
        if (ip && this.options.ipKey) {
          await countToday(trx, this.registrationBudget(), clientIpHash(this.options.ipKey, ip), this.now());
        }
        await participantStore.insert(trx, row);
      });
    } catch (err) {
      if (
        isUniqueViolation(err) &&
        signer &&
        agentId !== null &&
        (await participantStore.byProvenAgentId(this.db, agentId))
      ) {
        throw agentTaken(agentId);
      }
      throw err;
    }
    return { participant: participantView(row), participant_token: token };
  }

  /**
   * Checks an agent-id proof without using it: the challenge exists, is unused, unexpired and for
   * this agent id; the id is not proven yet; the signature over the challenge message is the
   * address's. Returns the canonical signer (`evm:0x…` checksummed, `solana:<base58>`).
   */
  private async checkProof(agentId: string, proof: AgentProofInput): Promise<string> {
    const nowIso = this.now().toISOString();
    const found = await participantStore.challenge(this.db, proof.nonce);
    if (!found || found.used_at !== null || found.expires_at <= nowIso) throw challengeRefused(found, nowIso);
    if (found.agent_id !== agentId) {
      throw badRequest(
        "agent_challenge_mismatch",
        `This challenge is for the agent id ${found.agent_id}, not ${agentId}: ask for a challenge for the id you register.`,
        { challenge_agent_id: found.agent_id },
      );
    }
    if (await participantStore.byProvenAgentId(this.db, agentId)) throw agentTaken(agentId);
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
      agentChallengeMessage(this.baseUrl, found),
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

  /**
   * Binds a join-work identity to the participant (public_community standing). Once bound, the
   * binding stays: the same identity again is a no-op, another one is 409 `participant_identity_bound`.
   */
  async bindIdentity(participant: ParticipantRow, identityId: string): Promise<ParticipantRow> {
    if (participant.identity_id === identityId) return participant;
    if (!(await participantStore.bindIdentity(this.db, participant.id, identityId))) {
      const now = await participantStore.byId(this.db, participant.id);
      if (now?.identity_id !== identityId) {
        throw conflict(
          "participant_identity_bound",
          "This participant is already bound to another join-work identity; a binding is permanent.",
        );
      }
      return now;
    }
    return { ...participant, identity_id: identityId };
  }

  /**
   * The participant of a bearer token: 401 `participant_token_required` without one, 401
   * `participant_token_invalid` for a malformed or unknown one.
   */
  async authenticate(token: string | null): Promise<ParticipantRow> {
    if (token === null || token === "") {
      throw new Problem(
        401,
        "participant_token_required",
        "This action needs the participant token from register: send Authorization: Bearer <participant_token>.",
        {},
        { "WWW-Authenticate": 'Bearer realm="olympiad"' },
      );
    }
    const row = TOKEN_RE.test(token)
      ? await participantStore.byTokenHash(this.db, participantTokenHash(token))
      : undefined;
    if (!row) {
      throw new Problem(
        401,
        "participant_token_invalid",
        "The participant token is not one this service issued.",
        {},
        { "WWW-Authenticate": 'Bearer realm="olympiad", error="invalid_token"' },
      );
    }
    return row;
  }

  async byId(id: string): Promise<ParticipantRow | undefined> {
    return participantStore.byId(this.db, id);
  }
}

function agentTaken(agentId: string): Problem {
  return conflict(
    "agent_id_taken",
    `The agent id ${agentId} is already proven by another registration's wallet signature; a proven id is unique. (Register without agent_proof to carry it as a self-asserted label.)`,
    { agent_id: agentId, agent_id_source: "proven" },
  );
}

function invalidAgentId(): Problem {
  return badRequest(
    "invalid_agent_id",
    "agent_id must be 1-200 characters from A-Z a-z 0-9 . _ : @ - (the alphabet of the x402 note agent:<id>).",
  );
}

/** Why a challenge cannot be used: unknown (400), already used (409), expired (410). */
function challengeRefused(row: AgentChallengeRow | undefined, nowIso: string): Problem {
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
