import { badRequest, conflict, type Problem } from "../../http/problem.js";
import type { OrderRow } from "../../orders/tables.js";
import type { OrderBindingRow, ParticipantRow } from "../tables.js";
import { accessTokenOf, type EnterInput } from "./access-token.js";
import { currentSeason, ENTRY_SKU, type EntryContext, entryProduct } from "./context.js";
import { entryStore } from "./store.js";

/** One order, one participant: binding a held gao-entry order (bind_order, and every entry). */

export interface BindOrderBody {
  action: "bind_order";
  participant_id: string;
  order_id: string;
  season_id: string;
  /** false when this order was already bound to this participant (a retry, or the order entered them) */
  created: boolean;
  /** the order is active: the participant has paid standing in governance while it stays active */
  paid: true;
}

/**
 * POST /api/olympiad { action: "bind_order" }: binds a paid gao-entry order, proven by its access
 * token (or access URL), to the participant for governance, without entering. Works before open
 * registration (and after). One order is bound to one participant, whether by `enter` or by this:
 * another participant's order is 409 `entry_order_used`. A later `enter` with the same order by the
 * same participant enters them.
 */
export async function bindOrder(
  ctx: EntryContext,
  participant: ParticipantRow,
  input: EnterInput,
): Promise<BindOrderBody> {
  const token = accessTokenOf(input);
  if (token === null) {
    throw badRequest(
      "order_proof_required",
      "bind_order needs the access_token (or access_url) of a paid gao-entry order you hold.",
    );
  }
  const order = await ctx.deps.orders.open(token); // 404 access_not_found, 410 access_revoked | access_refunded
  checkProduct(ctx, order);
  const season = currentSeason(ctx);
  const entered = await entryStore.byOrder(ctx.db, order.id);
  if (entered && entered.participant_id !== participant.id) throw orderUsed();
  const created = await bindOrderTo(ctx, participant, order, season.id, "bind_order");
  if (created) {
    await ctx.deps.orders.audit(`participant:${participant.id}`, "olympiad.order_bound", order.id, {
      participant_id: participant.id,
      season_id: season.id,
    });
  }
  return {
    action: "bind_order",
    participant_id: participant.id,
    order_id: order.id,
    season_id: season.id,
    created,
    paid: true,
  };
}

/** Claims the order for the participant (one order, one participant): true when bound now, 409 if another holds it. */
export async function bindOrderTo(
  ctx: EntryContext,
  participant: ParticipantRow,
  order: OrderRow,
  seasonId: string,
  via: OrderBindingRow["via"],
): Promise<boolean> {
  const created = await entryStore.bindIfAbsent(ctx.db, {
    order_id: order.id,
    participant_id: participant.id,
    season_id: seasonId,
    via,
    created_at: ctx.now().toISOString(),
  });
  if (created) return true;
  const holder = await entryStore.binding(ctx.db, order.id);
  if (holder && holder.participant_id !== participant.id) throw orderUsed();
  return false;
}

export function checkProduct(ctx: EntryContext, order: OrderRow): void {
  if (order.sku !== entryProduct(ctx).sku) {
    throw badRequest(
      "entry_wrong_product",
      `This access token belongs to a ${order.sku} order; entry needs a paid ${ENTRY_SKU} order.`,
      { sku: order.sku },
    );
  }
}

export function orderUsed(): Problem {
  return conflict(
    "entry_order_used",
    "This order already entered a participant; one order enters one participant once. Buy another gao-entry.",
  );
}
