import type { Kysely } from "kysely";
import type { Database } from "../../src/db/schema.js";

/** Inserts agent_self participants with the given ids (no tokens: for records and standings tests). */
export async function seedParticipants(db: Kysely<Database>, ids: string[]): Promise<void> {
  await db
    .insertInto("olympiad_participants")
    .values(
      ids.map((id) => ({
        id,
        token_hash: `hash-${id}`,
        who: "agent_self" as const,
        name: id,
        agent_id: `agent-${id}`,
        operator_name: null,
        email: null,
        created_at: "2026-01-02T00:00:00.000Z",
      })),
    )
    .execute();
}
