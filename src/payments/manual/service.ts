import type { Kysely } from "kysely";
import type { Catalog } from "../../catalog/service.js";
import type { Config } from "../../config.js";
import type { Database } from "../../db/schema.js";
import type { OrderService } from "../../orders/service.js";
import { type ChainCheck, checkClaimOnChain } from "./chain-check.js";
import { type ClaimContext, getClaim } from "./context.js";
import { type Approval, approveClaim, rejectClaim, revokeClaim } from "./decisions.js";
import { claimStore } from "./store.js";
import { type ClaimInput, submitClaim } from "./submission.js";
import type { ClaimRow } from "./tables.js";
import { type ClaimReceipt, type ClaimView, claimView, operatorView, publicStatus } from "./views.js";

export { type ChainCheck, CLAIM_TX_MAX_AGE_SECONDS } from "./chain-check.js";
export type { Approval } from "./decisions.js";
export type { ManualRailId } from "./rails.js";
export type { ClaimInput } from "./submission.js";
export type { ClaimReceipt, ClaimView } from "./views.js";

/**
 * Manual rails: a payer claims a crypto transfer (by transaction reference) or asks for a
 * wire/ACH invoice; an operator approves (→ `OrderService.grant`, proof key `claim:<id>`),
 * rejects or revokes. Every transition is conditional and audited. One facade over four parts:
 * - submission (submission.ts: rail, e-mail and transaction format, wire invoice details, the
 *   sending wallet from the chain or the claimant and its signature);
 * - the on-chain check an operator runs before approving (chain-check.ts: USDC on Base);
 * - the operator's decisions (decisions.ts: approve → one order, reject, revoke);
 * - what the claimant, the buyer's status page and the operator see (views.ts).
 */
export class ClaimService {
  private readonly ctx: ClaimContext;

  constructor(db: Kysely<Database>, orders: OrderService, catalog: Catalog, config: Config) {
    this.ctx = { db, orders, catalog, config };
  }

  /** Records a claim (submitted) and answers the claimant's receipt: where to pay, what comes next. */
  submit(input: ClaimInput): Promise<ClaimReceipt> {
    return submitClaim(this.ctx, input);
  }

  view(row: ClaimRow): ClaimView {
    return claimView(row);
  }

  /** The operator's view of one claim: with the other claims naming the same transfer. */
  operatorView(id: string): Promise<ClaimView> {
    return operatorView(this.ctx, id);
  }

  /** One claim, or 404 `claim_not_found`. */
  get(id: string): Promise<ClaimRow> {
    return getClaim(this.ctx, id);
  }

  /** The buyer's view (by claim id): state, and the access URL once approved. */
  publicStatus(id: string) {
    return publicStatus(this.ctx, id);
  }

  /** Checks a claim's transaction on chain (USDC on Base), for the operator before approving. */
  async chainCheck(id: string): Promise<ChainCheck> {
    return checkClaimOnChain(this.ctx, await this.get(id));
  }

  /** Approves a submitted claim: one order (proof key `claim:<id>`). Approving twice answers the same order. */
  approve(id: string, actor: string, note?: string | null): Promise<Approval> {
    return approveClaim(this.ctx, id, actor, note);
  }

  /** Rejects a submitted claim (idempotent for an already rejected one). */
  reject(id: string, actor: string, reason: string): Promise<ClaimView> {
    return rejectClaim(this.ctx, id, actor, reason);
  }

  /** Revokes an approved claim and its order's entitlement. */
  revoke(id: string, actor: string, reason: string): Promise<ClaimView> {
    return revokeClaim(this.ctx, id, actor, reason);
  }

  list(q: { limit: number; offset: number; state?: string; rail?: string; search?: string }) {
    return claimStore.list(this.ctx.db, q);
  }
}
