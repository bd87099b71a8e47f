import type { ParticipantRow } from "../tables.js";
import { currentSeason, type EntryContext } from "./context.js";
import { entryStore } from "./store.js";

export interface IntentBody {
  action: "intent";
  participant_id: string;
  season_id: string;
  note: string | null;
  recorded_at: string;
  /** false when an intent for this season was already recorded (the first one is kept) */
  created: boolean;
  registration_open: boolean;
  registration_opens: string | null;
}

/** Records an intent to enter the current season; idempotent (the first note is kept). */
export async function recordIntent(
  ctx: EntryContext,
  participant: ParticipantRow,
  note: string | undefined,
): Promise<IntentBody> {
  const season = currentSeason(ctx);
  const created = await entryStore.insertIntent(ctx.db, {
    participant_id: participant.id,
    season_id: season.id,
    note: note?.trim() || null,
    created_at: ctx.now().toISOString(),
  });
  const row = await entryStore.intent(ctx.db, participant.id, season.id);
  if (!row) throw new Error("olympiad: intent vanished");
  return {
    action: "intent",
    participant_id: participant.id,
    season_id: season.id,
    note: row.note,
    recorded_at: row.created_at,
    created,
    registration_open: season.registration_open,
    registration_opens: season.registration_opens,
  };
}
