/** The olympiad's tables (migration 0007). Timestamps are ISO 8601 text, as everywhere. */

import type { TaskTables } from "./events/tasks/tables.js";

export type Who = "agent_self" | "human_for_self" | "human_for_agent";

export interface ParticipantRow {
  /** par_… */
  id: string;
  /** SHA-256 of the participant token (hex); the token itself is never stored */
  token_hash: string;
  who: Who;
  name: string;
  /** the agent's id (agent_self, human_for_agent): a label anyone may carry unless proven (migration 0012) */
  agent_id: string | null;
  /** the human who registered an agent (human_for_agent) */
  operator_name: string | null;
  email: string | null;
  created_at: string;
  /** = agent_id when the registration proved it with a wallet signature; unique (0012) */
  proven_agent_id?: string | null;
  /** the signer of that proof: `evm:<checksummed address>` or `solana:<base58 address>` (0012) */
  agent_address?: string | null;
  /** the join-work identity the participant is bound to (public_community standing, 0012) */
  identity_id?: string | null;
}

/** A paid gao-entry order bound to a participant for governance (0012); one order, one participant. */
export interface OrderBindingRow {
  order_id: string;
  participant_id: string;
  season_id: string;
  via: "enter" | "bind_order";
  created_at: string;
}

/** A single-use, expiring nonce for proving an agent id (0012). */
export interface AgentChallengeRow {
  nonce: string;
  agent_id: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

export interface IntentRow {
  participant_id: string;
  season_id: string;
  note: string | null;
  created_at: string;
}

export interface EntryRow {
  /** ent_… */
  id: string;
  participant_id: string;
  season_id: string;
  /** the paid gao-entry order; unique (one order enters one participant once) */
  order_id: string;
  /** how the holder proved the order: access_token | x402 */
  proof: "access_token" | "x402";
  created_at: string;
}

export interface TeamRow {
  /** team_… */
  id: string;
  name: string;
  captain_id: string;
  join_code_hash: string;
  member_count: number;
  locked_at: string | null;
  season_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface TeamMemberRow {
  team_id: string;
  participant_id: string;
  joined_at: string;
}

export type DecisionKind =
  | "new_games"
  | "change_games"
  | "remove_games"
  | "event_weights"
  | "ratio_appeals"
  | "prize_pool_release";

export interface ProposalRow {
  /** prop_… */
  id: string;
  kind: DecisionKind;
  title: string;
  body: string;
  proposer_id: string;
  opens_at: string;
  closes_at: string;
  state: "open" | "closed";
  outcome: "passed" | "failed" | "no_quorum" | null;
  /** JSON of the tally, fixed when the window closes */
  tally: string | null;
  created_at: string;
  /** the proposer's team when proposed (per-team cap on open proposals, 0012) */
  team_id?: string | null;
  /** the join-work identity behind a proposal made on public-community standing (0012) */
  identity_id?: string | null;
}

export interface VoteRow {
  proposal_id: string;
  voter_id: string;
  choice: "yes" | "no" | "abstain";
  /** the constituency the vote counts in (the voter's largest-weight role when cast) */
  constituency: string;
  cast_at: string;
  updated_at: string;
  /** the join-work identity behind a public_community vote; unique per proposal (0012) */
  identity_id?: string | null;
}

export interface RoleRow {
  participant_id: string;
  role: "steward" | "integrity";
  appointed_by: string;
  appointed_at: string;
}

export interface OlympiadTables extends TaskTables {
  olympiad_participants: ParticipantRow;
  olympiad_intents: IntentRow;
  olympiad_entries: EntryRow;
  olympiad_teams: TeamRow;
  olympiad_team_members: TeamMemberRow;
  olympiad_proposals: ProposalRow;
  olympiad_votes: VoteRow;
  olympiad_roles: RoleRow;
  olympiad_order_bindings: OrderBindingRow;
  olympiad_agent_challenges: AgentChallengeRow;
}
