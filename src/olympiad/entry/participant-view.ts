import type { ParticipantRow, Who } from "../tables.js";

/** What a participant looks like to callers, and what a registration answers. */

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
