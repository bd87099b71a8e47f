import { conflict } from "../../http/problem.js";
import type { ParticipantRow } from "../tables.js";
import type { ParticipantsContext } from "./participant-context.js";
import { participantStore } from "./participant-store.js";

/**
 * Binds a join-work identity to the participant (public_community standing). Once bound, the
 * binding stays: the same identity again is a no-op, another one is 409 `participant_identity_bound`.
 */
export async function bindIdentity(
  ctx: ParticipantsContext,
  participant: ParticipantRow,
  identityId: string,
): Promise<ParticipantRow> {
  if (participant.identity_id === identityId) return participant;
  if (!(await participantStore.bindIdentity(ctx.db, participant.id, identityId))) {
    const now = await participantStore.byId(ctx.db, participant.id);
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
