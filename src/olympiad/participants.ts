import { createHash, randomBytes } from "node:crypto";
import type { Kysely } from "kysely";
import { isUniqueViolation } from "../db/database.js";
import type { Database } from "../db/schema.js";
import { badRequest, conflict, Problem } from "../http/problem.js";
import type { Executor } from "../orders/store.js";
import type { ParticipantRow, Who } from "./tables.js";

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

export interface RegisterInput {
  who: Who;
  name: string;
  agent_id?: string | undefined;
  operator_name?: string | undefined;
  email?: string | undefined;
}

export interface ParticipantView {
  participant_id: string;
  who: Who;
  name: string;
  agent_id: string | null;
  operator_name: string | null;
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

  byAgentId(db: Executor, agentId: string): Promise<ParticipantRow | undefined> {
    return db.selectFrom("olympiad_participants").selectAll().where("agent_id", "=", agentId).executeTakeFirst();
  },
};

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
    operator_name: row.operator_name,
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

export class Participants {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Creates a participant and its token (shown once). 400 for a body that does not fit `who`, 409 for a taken agent id. */
  async register(input: RegisterInput): Promise<Registered> {
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
    if (agentId !== null && !AGENT_ID_PATTERN.test(agentId)) {
      throw badRequest(
        "invalid_agent_id",
        "agent_id must be 1-200 characters from A-Z a-z 0-9 . _ : @ - (the alphabet of the x402 note agent:<id>).",
      );
    }
    if (email !== null && !EMAIL_RE.test(email)) throw badRequest("invalid_email", "The e-mail address is not valid.");

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
    };
    try {
      await participantStore.insert(this.db, row);
    } catch (err) {
      if (isUniqueViolation(err) && agentId !== null && (await participantStore.byAgentId(this.db, agentId))) {
        throw agentTaken(agentId);
      }
      throw err;
    }
    return { participant: participantView(row), participant_token: token };
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
  return conflict("agent_id_taken", `The agent ${agentId} is already registered; each agent registers once.`, {
    agent_id: agentId,
  });
}
