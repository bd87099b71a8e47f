import type { Kysely } from "kysely";
import type { Database } from "../../db/schema.js";
import type { PricedItem } from "../../orders/priced-item.js";
import type { Challenge } from "../../payments/x402/answers.js";
import type { ParticipantRow } from "../tables.js";
import type { EnterInput } from "./access-token.js";
import { type BindOrderBody, bindOrder } from "./binding.js";
import { type EntryContext, type EntryDeps, entryItemOf } from "./context.js";
import { type EnterOutcome, type EnterPayment, enter } from "./entering.js";
import { entryGuidance, type GuidanceBody } from "./guidance.js";
import { type IntentBody, recordIntent } from "./intent.js";
import { type EntryState, enteredIds, entryState, isEntered } from "./state.js";

/**
 * Intents and paid entries (POST /api/olympiad { action: "intent" | "enter" }).
 *
 * An entry is a paid `gao-entry` order that the caller proves it holds, attached to one participant
 * for one season: by the order's access token (the tail of its access URL), or by an x402 purchase
 * made inside the authenticated `enter` call. An order id alone is never proof. One order enters one
 * participant once (olympiad_entries.order_id is unique).
 *
 * "Entered" is never stored as a flag: it is computed by joining the order, whose status must be
 * `active`. A refunded or revoked order therefore withdraws the entry everywhere at once; the
 * participant may then enter again with another order (the entry row takes the new order).
 *
 * `OlympiadEntry` is the capability's one service; its parts are in this folder: intent.ts,
 * entering.ts (enter: by access token or a purchase in the call), binding.ts (bind_order; one order,
 * one participant), guidance.ts (the 402 without proof), state.ts (who is entered), access-token.ts
 * (the proof in the body), store.ts (the SQL) and context.ts (what they share).
 */

export { ACCESS_TOKEN_PATTERN, accessTokenOf, type EnterInput } from "./access-token.js";
export type { BindOrderBody } from "./binding.js";
export { ENTRY_SKU, type EntryView } from "./context.js";
export type { EnteredBody, EnterOutcome, EnterPayment } from "./entering.js";
export type { EntryGuidance, GuidanceBody } from "./guidance.js";
export type { IntentBody } from "./intent.js";
export type { EntryState } from "./state.js";
export { type EntryWithOrder, entryStore } from "./store.js";

export class OlympiadEntry {
  private readonly ctx: EntryContext;

  constructor(
    db: Kysely<Database>,
    deps: EntryDeps,
    private readonly now: () => Date = () => new Date(),
  ) {
    // the parts read the clock through the service, at each call
    this.ctx = { db, deps, now: () => this.now() };
  }

  /** What an entry purchase pays for (the 402's challenges of both dialects are built from it). */
  entryItem(): PricedItem {
    return entryItemOf(this.ctx);
  }

  /** Records an intent to enter the current season; idempotent (the first note is kept). */
  async intent(participant: ParticipantRow, note: string | undefined): Promise<IntentBody> {
    return recordIntent(this.ctx, participant, note);
  }

  /**
   * Enters the participant into the current season with a held gao-entry order: by access token
   * (or access URL), or by an x402 purchase made now. Without either: the 402 guidance.
   */
  async enter(participant: ParticipantRow, input: EnterInput, payment: EnterPayment = {}): Promise<EnterOutcome> {
    return enter(this.ctx, participant, input, payment);
  }

  /**
   * POST /api/olympiad { action: "bind_order" }: binds a paid gao-entry order, proven by its access
   * token (or access URL), to the participant for governance, without entering. Works before open
   * registration (and after). One order is bound to one participant, whether by `enter` or by this:
   * another participant's order is 409 `entry_order_used`. A later `enter` with the same order by the
   * same participant enters them.
   */
  async bindOrder(participant: ParticipantRow, input: EnterInput): Promise<BindOrderBody> {
    return bindOrder(this.ctx, participant, input);
  }

  /** The 402 answer without proof: x402 challenge (if configured), card checkout, other ways, recovery. */
  guidance(challenge?: Challenge): { body: GuidanceBody; challenge?: Challenge } {
    return entryGuidance(this.ctx, challenge);
  }

  /** The participant's entry state for the current season (entered only while the order is active). */
  async state(participantId: string): Promise<EntryState> {
    return entryState(this.ctx, participantId);
  }

  /** Ids of the participants entered in a season (default: the current one), by active order. */
  async enteredIds(seasonId?: string): Promise<string[]> {
    return enteredIds(this.ctx, seasonId);
  }

  async isEntered(participantId: string, seasonId?: string): Promise<boolean> {
    return isEntered(this.ctx, participantId, seasonId);
  }
}
