import { randomBytes } from "node:crypto";
import { isUniqueViolation } from "../../db/database.js";
import { badRequest, conflict, Problem } from "../../http/problem.js";
import type { OrderRow } from "../../orders/tables.js";
import type { VerifiedCredential } from "../../payments/mpp/service.js";
import type { Challenge, Pending, ProductPurchaseBody, Purchase } from "../../payments/x402/answers.js";
import { assertRegistrationOpen } from "../season.js";
import type { EntryRow, ParticipantRow } from "../tables.js";
import { accessTokenOf, type EnterInput } from "./access-token.js";
import { bindOrderTo, checkProduct, orderUsed } from "./binding.js";
import { currentSeason, type EntryContext, type EntryView, entryItemOf, entryView, stripStatus } from "./context.js";
import { entryGuidance, type GuidanceBody } from "./guidance.js";
import { entryStore } from "./store.js";

/** Entering: a held gao-entry order (by access token or bought in the call) attached to the participant's entry. */

/** A purchase made inside the call: the x402 payment header or an MPP credential, and the buyer's Idempotency-Key. */
export interface EnterPayment {
  header?: string | undefined;
  /** an MPP credential (Payment-Authorization), already checked to be one of our challenges */
  mpp?: VerifiedCredential | undefined;
  idempotencyKey?: string | undefined;
}

export interface EnteredBody {
  action: "enter";
  participant_id: string;
  season_id: string;
  entered: true;
  /** false when this participant had already entered with this order (an idempotent retry) */
  created: boolean;
  entry: EntryView;
  /** the order an x402 purchase inside this call bought (keep its access_url) */
  purchase?: ProductPurchaseBody;
}

export type EnterOutcome =
  /** Entered; `purchase` when this call bought the order (its settlement goes out as the paid answer's headers). */
  | { kind: "entered"; body: EnteredBody; purchase?: Purchase }
  | { kind: "pending"; pending: Pending }
  /** The guidance, with the x402 challenge when x402 is configured (the edge sends its headers). */
  | { kind: "payment_required"; body: GuidanceBody; challenge?: Challenge };

const AGENT_NOTE_ID = /^[A-Za-z0-9._:@-]{1,200}$/;

/**
 * Enters the participant into the current season with a held gao-entry order: by access token
 * (or access URL), or by an x402 purchase made now. Without either: the 402 guidance.
 */
export async function enter(
  ctx: EntryContext,
  participant: ParticipantRow,
  input: EnterInput,
  payment: EnterPayment,
): Promise<EnterOutcome> {
  const season = currentSeason(ctx);
  assertRegistrationOpen(season);
  const token = accessTokenOf(input);
  const paying = payment.header !== undefined || payment.mpp !== undefined;
  if (token !== null && paying) {
    throw badRequest(
      "entry_proof_ambiguous",
      "Send either an access token (or access URL) of a paid order, or an x402 payment header, not both.",
    );
  }
  if (token !== null) {
    const order = await ctx.deps.orders.open(token); // 404 access_not_found, 410 access_revoked | access_refunded
    checkProduct(ctx, order);
    const { entry, created } = await attach(ctx, participant, season.id, order, "access_token");
    return { kind: "entered", body: enteredBody(participant, season.id, entry, created) };
  }
  if (paying) return buyAndEnter(ctx, participant, season.id, payment);
  // No proof: an entered participant is told so (nothing to pay); anyone else gets the 402 guidance.
  const current = await entryStore.forParticipant(ctx.db, participant.id, season.id);
  if (current && current.order_status === "active") {
    return {
      kind: "entered",
      body: enteredBody(participant, season.id, stripStatus(current), false),
    };
  }
  return { kind: "payment_required", ...entryGuidance(ctx) };
}

async function buyAndEnter(
  ctx: EntryContext,
  participant: ParticipantRow,
  seasonId: string,
  payment: EnterPayment,
): Promise<EnterOutcome> {
  const { x402 } = ctx.deps;
  // Already entered with an active order: a new payment is refused before anything is settled;
  // a proof the ledger has seen (the retry of the purchase that entered) is answered from it.
  const current = await entryStore.forParticipant(ctx.db, participant.id, seasonId);
  const seen = payment.mpp
    ? await x402.itemOfParsedProof(payment.mpp.proof)
    : await x402.itemOfProof(payment.header as string);
  if (current && current.order_status === "active" && !seen) {
    throw alreadyEntered(current);
  }
  const item = entryItemOf(ctx);
  const note =
    participant.agent_id !== null && AGENT_NOTE_ID.test(participant.agent_id) ? `agent:${participant.agent_id}` : null;
  const secrets = { idempotencyKey: payment.idempotencyKey };
  const outcome = payment.mpp
    ? await payment.mpp.buy(item, { email: participant.email, note }, secrets)
    : await x402.buy(item, { email: participant.email, note }, payment.header as string, secrets);
  if (outcome.kind === "pending") return { kind: "pending", pending: outcome.pending };
  if (outcome.kind === "challenge") {
    return { kind: "payment_required", ...entryGuidance(ctx, outcome.challenge) };
  }
  const bought = outcome.purchase.body;
  if (!("order_id" in bought)) throw new Error("olympiad: a product purchase answered without an order");
  const order = await ctx.deps.orders.get(bought.order_id);
  if (order.status !== "active") {
    throw new Problem(410, `access_${order.status}`, `The order this payment bought was ${order.status}.`, {
      order_id: order.id,
      status: order.status,
    });
  }
  try {
    const { entry, created } = await attach(ctx, participant, seasonId, order, "x402");
    return {
      kind: "entered",
      body: { ...enteredBody(participant, seasonId, entry, created), purchase: bought },
      purchase: outcome.purchase,
    };
  } catch (err) {
    // Paid but not entered (e.g. a concurrent entry won): the payer still holds the order.
    if (err instanceof Problem) {
      throw new Problem(err.status, err.code, err.detail, { ...err.extra, purchase: bought }, err.headers);
    }
    throw err;
  }
}

/** Attaches an active order to the participant's entry for the season (exactly once per order). */
async function attach(
  ctx: EntryContext,
  participant: ParticipantRow,
  seasonId: string,
  order: OrderRow,
  proof: EntryRow["proof"],
  attempt = 0,
): Promise<{ entry: EntryRow; created: boolean }> {
  const mine = await entryStore.forParticipant(ctx.db, participant.id, seasonId);
  if (mine && mine.order_id === order.id) return { entry: mine, created: false };
  if (mine && mine.order_status === "active") throw alreadyEntered(mine);
  const used = await entryStore.byOrder(ctx.db, order.id);
  if (used) throw orderUsed();
  // an order bound to another participant for governance (bind_order) enters nobody else
  await bindOrderTo(ctx, participant, order, seasonId, "enter");
  const at = ctx.now().toISOString();
  let done: boolean;
  let entry: EntryRow;
  if (mine) {
    // The earlier entry was withdrawn (its order refunded or revoked): it takes this order.
    entry = { ...stripStatus(mine), order_id: order.id, proof, created_at: at };
    try {
      done = await entryStore.replaceOrder(ctx.db, mine.id, mine.order_id, {
        order_id: order.id,
        proof,
        created_at: at,
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw orderUsed();
      throw err;
    }
  } else {
    entry = {
      id: `ent_${randomBytes(12).toString("base64url")}`,
      participant_id: participant.id,
      season_id: seasonId,
      order_id: order.id,
      proof,
      created_at: at,
    };
    done = await entryStore.insertIfAbsent(ctx.db, entry);
  }
  if (!done) {
    // A concurrent call changed the entry or took the order: decide again on what is stored now.
    if (attempt >= 2) throw conflict("entry_conflict", "The entry changed concurrently; try again.");
    return attach(ctx, participant, seasonId, order, proof, attempt + 1);
  }
  await ctx.deps.orders.audit(`participant:${participant.id}`, "olympiad.entered", order.id, {
    participant_id: participant.id,
    season_id: seasonId,
    entry_id: entry.id,
    proof,
    replaced_order: mine?.order_id ?? null,
  });
  return { entry, created: true };
}

function enteredBody(participant: ParticipantRow, seasonId: string, entry: EntryRow, created: boolean): EnteredBody {
  return {
    action: "enter",
    participant_id: participant.id,
    season_id: seasonId,
    entered: true,
    created,
    entry: entryView(entry),
  };
}

function alreadyEntered(e: EntryRow): Problem {
  return conflict(
    "already_entered",
    `You are already entered in season ${e.season_id} with another order; one entry per participant and season.`,
    { season_id: e.season_id, entry_id: e.id },
  );
}
