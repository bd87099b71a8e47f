import type { Kysely } from "kysely";
import type { Database } from "../../db/schema.js";

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

/** What every part of participants shares: the database, the options and the clock. */
export interface ParticipantsContext {
  readonly db: Kysely<Database>;
  readonly options: ParticipantsOptions;
  /** the service's base URL ("" when not given) */
  readonly baseUrl: string;
  readonly challengeTtlMs: number;
  /** the service's clock (read at each call, through `Participants`) */
  now(): Date;
}
