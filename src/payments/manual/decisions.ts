import { nowIso } from "../../db/database.js";
import { Problem } from "../../http/problem.js";
import type { OnChainPayment } from "../../orders/fulfilment.js";
import { productItem } from "../../orders/priced-item.js";
import type { OrderView } from "../../orders/service.js";
import { type ClaimContext, getClaim } from "./context.js";
import { claimStore } from "./store.js";
import type { ClaimRow } from "./tables.js";
import { type ClaimView, claimView } from "./views.js";

export interface Approval {
  claim: ClaimView;
  order: OrderView;
  access_url: string;
  /** false when the claim had been approved before (idempotent replay). */
  created: boolean;
}

/** The on-chain payment a claim names (the order core's reference), if it is a crypto transfer. */
function paymentOf(claim: ClaimRow): OnChainPayment | undefined {
  if (!claim.tx_ref) return undefined;
  const chain =
    claim.rail === "crypto_manual_evm"
      ? "evm"
      : claim.rail === "crypto_manual_solana"
        ? "solana"
        : claim.rail === "crypto_manual_btc"
          ? "btc"
          : undefined;
  if (!chain) return undefined;
  return { chain, tx: claim.tx_ref, payer: claim.sender_proven ? claim.sender : null };
}

/**
 * Approves a submitted claim: one order (proof key `claim:<id>`), granted in the transaction that
 * moves the claim, which also closes the other open claims of the same transfer. Approving twice
 * answers the same order; a claim decided otherwise answers 409 `claim_not_pending`.
 */
export async function approveClaim(
  ctx: ClaimContext,
  id: string,
  actor: string,
  note?: string | null,
): Promise<Approval> {
  const { db, orders, catalog, config } = ctx;
  const at = nowIso();
  const outcome = await db.transaction().execute(async (trx) => {
    const claim = await claimStore.byId(trx, id);
    if (!claim) throw new Problem(404, "claim_not_found", `No claim ${id}.`);
    if (claim.state !== "submitted") return { raced: true as const };
    const won = await claimStore.transition(trx, id, "submitted", {
      state: "approved",
      decided_by: actor,
      decided_at: at,
      reason: note ?? null,
      updated_at: at,
    });
    if (!won) return { raced: true as const };
    // The claimed product, priced by the catalog; the claim states what was actually paid.
    const item = productItem(catalog.resolve(claim.sku), `${config.baseUrl}/api/claims`);
    const granted = await orders.grant(
      item,
      {
        proofKey: `claim:${id}`,
        rail: claim.rail,
        amountCents: claim.amount_cents,
        transactionRef: claim.tx_ref,
        email: claim.email,
        meta: { claim_id: id, company: claim.company, terms: claim.terms, approved_by: actor, sender: claim.sender },
        // One on-chain payment, one order, across every rail (the order core refuses a second one).
        onChain: paymentOf(claim),
      },
      trx,
    );
    await trx.updateTable("claims").set({ order_id: granted.id }).where("id", "=", id).execute();
    const closed =
      claim.tx_key && claim.rail !== "wire_invoice_ach"
        ? await claimStore.closeSiblings(
            trx,
            claim.tx_key,
            id,
            `Another claim of this transfer (${id}) was approved.`,
            at,
          )
        : [];
    await orders.audit(actor, "claim.approved", id, { order_id: granted.id, note: note ?? null, closed }, trx);
    return { raced: false as const, orderId: granted.id };
  });
  const claim = await getClaim(ctx, id);
  if (outcome.raced && (claim.state !== "approved" || !claim.order_id)) {
    throw new Problem(
      409,
      "claim_not_pending",
      `Claim ${id} is ${claim.state}; only submitted claims can be approved.`,
      {
        state: claim.state,
      },
    );
  }
  const order = await orders.get(claim.order_id as string);
  return {
    claim: claimView(claim),
    order: orders.view(order),
    access_url: orders.accessUrl(order.id),
    created: !outcome.raced,
  };
}

/** Rejects a submitted claim (idempotent for an already rejected one). */
export async function rejectClaim(ctx: ClaimContext, id: string, actor: string, reason: string): Promise<ClaimView> {
  const at = nowIso();
  await ctx.db.transaction().execute(async (trx) => {
    const claim = await claimStore.byId(trx, id);
    if (!claim) throw new Problem(404, "claim_not_found", `No claim ${id}.`);
    if (claim.state === "rejected") return;
    const won = await claimStore.transition(trx, id, "submitted", {
      state: "rejected",
      decided_by: actor,
      decided_at: at,
      reason,
      updated_at: at,
    });
    if (won) await ctx.orders.audit(actor, "claim.rejected", id, { reason }, trx);
  });
  const claim = await getClaim(ctx, id);
  if (claim.state !== "rejected") {
    throw new Problem(
      409,
      "claim_not_pending",
      `Claim ${id} is ${claim.state}; only submitted claims can be rejected.`,
      {
        state: claim.state,
      },
    );
  }
  return claimView(claim);
}

/** Revokes an approved claim and its order's entitlement (idempotent for an already revoked one). */
export async function revokeClaim(ctx: ClaimContext, id: string, actor: string, reason: string): Promise<ClaimView> {
  const claim = await getClaim(ctx, id);
  if (claim.state === "revoked") return claimView(claim);
  if (claim.state !== "approved" || !claim.order_id) {
    throw new Problem(
      409,
      "claim_not_approved",
      `Claim ${id} is ${claim.state}; only approved claims can be revoked.`,
      {
        state: claim.state,
      },
    );
  }
  await ctx.orders.revoke(claim.order_id, actor, reason);
  const at = nowIso();
  const won = await claimStore.transition(ctx.db, id, "approved", {
    state: "revoked",
    decided_by: actor,
    decided_at: at,
    reason,
    updated_at: at,
  });
  if (won) await ctx.orders.audit(actor, "claim.revoked", id, { reason, order_id: claim.order_id });
  return claimView(await getClaim(ctx, id));
}
