import { createHash, randomBytes } from "node:crypto";
import { Problem } from "../../http/problem.js";
import type { ParticipantRow } from "../tables.js";
import type { ParticipantsContext } from "./participant-context.js";
import { participantStore } from "./participant-store.js";

/**
 * The participant's bearer token: 32 random bytes (base64url) behind the prefix `gao_`, shown once;
 * only its SHA-256 is stored (olympiad_participants.token_hash, unique), so a lookup by hash
 * authenticates and a database dump opens nothing.
 */

export const PARTICIPANT_TOKEN_PREFIX = "gao_";
const TOKEN_RE = /^gao_[A-Za-z0-9_-]{43}$/;

/** A new token (shown once to the registrant). */
export function newParticipantToken(): string {
  return `${PARTICIPANT_TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
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

/**
 * The participant of a bearer token: 401 `participant_token_required` without one, 401
 * `participant_token_invalid` for a malformed or unknown one.
 */
export async function authenticate(ctx: ParticipantsContext, token: string | null): Promise<ParticipantRow> {
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
    ? await participantStore.byTokenHash(ctx.db, participantTokenHash(token))
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
