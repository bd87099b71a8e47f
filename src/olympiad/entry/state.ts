import type { OrderRow } from "../../orders/tables.js";
import { currentSeason, type EntryContext, type EntryView, entryView } from "./context.js";
import { entryStore } from "./store.js";

/** Who is entered: "entered" is computed from the entry's order, which must be `active`. */

export interface EntryState {
  season_id: string;
  registration_open: boolean;
  registration_opens: string | null;
  /** true only while the entry's order is active */
  entered: boolean;
  /** an entry whose order was refunded or revoked */
  withdrawn: boolean;
  entry: (EntryView & { order_status: OrderRow["status"] }) | null;
  intent: { note: string | null; recorded_at: string } | null;
}

/** The participant's entry state for the current season (entered only while the order is active). */
export async function entryState(ctx: EntryContext, participantId: string): Promise<EntryState> {
  const season = currentSeason(ctx);
  const row = await entryStore.forParticipant(ctx.db, participantId, season.id);
  const intent = await entryStore.intent(ctx.db, participantId, season.id);
  return {
    season_id: season.id,
    registration_open: season.registration_open,
    registration_opens: season.registration_opens,
    entered: row?.order_status === "active",
    withdrawn: row !== undefined && row.order_status !== "active",
    entry: row ? { ...entryView(row), order_status: row.order_status } : null,
    intent: intent ? { note: intent.note, recorded_at: intent.created_at } : null,
  };
}

/** Ids of the participants entered in a season (default: the current one), by active order. */
export async function enteredIds(ctx: EntryContext, seasonId?: string): Promise<string[]> {
  return entryStore.enteredIds(ctx.db, seasonId ?? currentSeason(ctx).id);
}

export async function isEntered(ctx: EntryContext, participantId: string, seasonId?: string): Promise<boolean> {
  const row = await entryStore.forParticipant(ctx.db, participantId, seasonId ?? currentSeason(ctx).id);
  return row?.order_status === "active";
}
