import type { FastifyBaseLogger } from "fastify";
import type { Kysely } from "kysely";
import type { PublicClient } from "viem";
import type { Config } from "../config.js";
import type { Database } from "../db/schema.js";
import { logRef, safeError } from "../http/logger.js";
import { conflict, notFound, Problem } from "../http/problem.js";
import { type CrashPoint, crashPoint } from "../ops/crash-points.js";
import type { OrderService } from "../orders/service.js";
import type { OrderRow } from "../orders/tables.js";
import type { ChainRefunder, OnChain } from "./chain.js";
import { EvmRefunder } from "./evm.js";
import { planRefund } from "./plan.js";
import { RefundReconciler } from "./reconciler.js";
import { RefundRequests } from "./requests.js";
import { refundStore } from "./store.js";
import { SvmRefunder } from "./svm.js";
import type { RefundRow, RefundState } from "./tables.js";
import { type RefundView, refundView } from "./view.js";

/**
 * Refunds, exactly once per order (src/refunds; docs/payments.md "Refunds").
 *
 * On chain: record the intent (`approved`, unique per order) → sign the transfer and store its
 * hash and raw bytes (`signed`) BEFORE broadcasting → broadcast → `sent` → confirm → `done`. Only
 * the stored bytes are ever broadcast; a crash anywhere is reconciled from the row: confirmed on
 * chain → done; absent and still valid → the SAME bytes again; a new transaction is signed only
 * when the stored one provably can never land (EVM nonce used by another transaction, Solana
 * blockhash expired), or it landed and moved nothing (reverted). Without a refund key for the
 * chain, and for manual claims, the refund is `owed` until the operator marks it `paid`.
 * The entitlement is revoked (`refunded`) when the refund is approved (idempotent: one change, one
 * audit entry).
 */

/** The card rail's refund (CardService.refundOrder: Stripe refunds.create, idempotent). */
export interface CardRefunder {
  refundOrder(orderId: string, actor: string, reason: string): Promise<unknown>;
}

export interface RefundDeps {
  db: Kysely<Database>;
  orders: Pick<OrderService, "get" | "revoke" | "audit" | "open">;
  config: Config;
  log: FastifyBaseLogger;
  cardRefunder?: CardRefunder | undefined;
  /** Base RPC client for smart-wallet (ERC-1271/6492) signatures; plain keys verify without. */
  evmClient?: () => PublicClient | undefined;
}

export class RefundService {
  /** The clock (tests set it). */
  clock: () => Date = () => new Date();
  evm: ChainRefunder | undefined;
  svm: ChainRefunder | undefined;
  private readonly inflight = new Map<string, Promise<RefundRow>>();
  private readonly reconciler: RefundReconciler;
  /**
   * The fault tests' crash points (LABPHI_CRASH_AT, src/ops/crash-points.ts: SIGKILL there); the
   * in-process tests replace it with one that throws (the process "dies" at that point).
   */
  crash: (point: CrashPoint) => void = (p) => crashPoint(p);

  /** Buyer requests: challenge, signed request, auto-approve policy (requests.ts). */
  readonly requests: RefundRequests;

  constructor(private readonly deps: RefundDeps) {
    this.requests = new RefundRequests(deps, this);
    this.reconciler = new RefundReconciler(deps.db, deps.log, (id) => this.proceed(id, "system:reconciler"));
  }

  /** Builds the chain wallets from REFUND_EVM_KEY / REFUND_SVM_KEY (and the rails' RPC endpoints). */
  async init(): Promise<void> {
    const { refunds, x402 } = this.deps.config;
    const timeout = x402.rpcTimeoutSeconds * 1000;
    if (refunds.evmKey && x402.baseRpcUrl) {
      this.evm = new EvmRefunder(refunds.evmKey as `0x${string}`, x402.baseChainId, x402.baseRpcUrl, timeout);
    }
    if (refunds.svmKey && x402.solanaRpcUrl) {
      this.svm = await SvmRefunder.fromSecret(refunds.svmKey, x402.solanaRpcUrl, timeout);
    }
  }

  private now(): string {
    return this.clock().toISOString();
  }

  view(r: RefundRow): RefundView {
    return refundView(r);
  }

  async get(id: string): Promise<RefundRow> {
    const row = await refundStore.get(this.deps.db, id);
    if (!row) throw notFound("refund_not_found", `No refund ${id}.`);
    return row;
  }

  list(q: { state?: RefundState | undefined; limit: number; offset: number }): Promise<RefundRow[]> {
    return refundStore.list(this.deps.db, q);
  }

  /** What a refund of this order sends, and how (plan.ts). */
  /** @internal for RefundRequests */
  plan(order: OrderRow, origin: "operator" | "buyer", actor: string, reason: string, state: RefundState) {
    return planRefund(this.deps.db, order, { origin, actor, reason, state, at: this.now() });
  }

  /** The chain wallet of a refund, if configured. */
  private wallet(row: RefundRow): ChainRefunder | undefined {
    return row.method === "evm" ? this.evm : row.method === "solana" ? this.svm : undefined;
  }

  /** Operator refund (`POST /api/admin/orders/:id/refund`): records, approves and executes it. */
  async refundOrder(orderId: string, actor: string, reason: string): Promise<RefundRow> {
    const order = await this.deps.orders.get(orderId);
    const existing = await refundStore.byOrder(this.deps.db, orderId);
    if (existing?.state === "requested") return this.approve(existing.id, actor);
    if (existing) throw this.exists(existing);
    if (order.status === "refunded") {
      throw conflict("order_already_refunded", `Order ${orderId} is already marked refunded.`, { order_id: orderId });
    }
    const row = await this.plan(order, "operator", actor, reason, "approved");
    if (!(await refundStore.insertIfAbsent(this.deps.db, row))) {
      throw this.exists((await refundStore.byOrder(this.deps.db, orderId)) ?? row);
    }
    await this.deps.orders.audit(actor, "refund.approved", orderId, { refund_id: row.id, reason, method: row.method });
    return this.proceed(row.id, actor);
  }

  /** 409 refund_exists for an order that has its refund already. */
  exists(r: RefundRow): Problem {
    return conflict("refund_exists", `Order ${r.order_id} already has refund ${r.id} (${r.state}).`, {
      refund_id: r.id,
      state: r.state,
    });
  }

  /** Approves a buyer's request (operator, or the auto-approve policy) and executes it. */
  async approve(id: string, actor: string): Promise<RefundRow> {
    const row = await this.get(id);
    if (row.state !== "requested") {
      if (row.state === "approved" || row.state === "signed" || row.state === "sent") return this.proceed(id, actor);
      throw conflict("refund_not_pending", `Refund ${id} is ${row.state}, not awaiting approval.`, {
        state: row.state,
      });
    }
    const at = this.now();
    if (await refundStore.transition(this.deps.db, id, ["requested"], "approved", { approved_at: at }, at)) {
      await this.deps.orders.audit(actor, "refund.approved", row.order_id, { refund_id: id, origin: row.origin });
    }
    return this.proceed(id, actor);
  }

  async reject(id: string, actor: string, reason: string): Promise<RefundRow> {
    const row = await this.get(id);
    const at = this.now();
    if (!(await refundStore.transition(this.deps.db, id, ["requested"], "rejected", { error: reason }, at))) {
      throw conflict("refund_not_pending", `Refund ${id} is ${row.state}, not awaiting approval.`, {
        state: row.state,
      });
    }
    await this.deps.orders.audit(actor, "refund.rejected", row.order_id, { refund_id: id, reason });
    return this.get(id);
  }

  /** An owed refund the operator paid by hand: records its reference (`owed` → `paid`). */
  async markPaid(id: string, actor: string, reference: string): Promise<RefundRow> {
    const row = await this.get(id);
    const at = this.now();
    if (!(await refundStore.transition(this.deps.db, id, ["owed"], "paid", { tx: reference, done_at: at }, at))) {
      throw conflict("refund_not_owed", `Refund ${id} is ${row.state}; only an owed refund can be marked paid.`, {
        state: row.state,
      });
    }
    await this.deps.orders.audit(actor, "refund.paid", row.order_id, { refund_id: id, reference });
    return this.get(id);
  }

  /**
   * Executes an approved refund (one at a time per refund in this process; across processes the
   * conditional updates decide): revokes the entitlement, then owed / card / on chain.
   */
  proceed(id: string, actor: string): Promise<RefundRow> {
    const running = this.inflight.get(id);
    if (running) return running;
    const p = this.execute(id, actor).finally(() => this.inflight.delete(id));
    this.inflight.set(id, p);
    return p;
  }

  private async execute(id: string, actor: string): Promise<RefundRow> {
    let row = await this.get(id);
    if (!["approved", "signed", "sent"].includes(row.state)) return row;
    const revoke = () => this.deps.orders.revoke(row.order_id, actor, `refund ${row.id}: ${row.reason}`, "refunded");
    if (row.method === "card" && this.deps.cardRefunder) {
      if (row.state !== "approved") return row;
      // Stripe first (the card rail refuses an order already marked refunded), idempotent per order;
      // the card rail revokes the order itself, the revoke after it is idempotent.
      const result = (await this.deps.cardRefunder.refundOrder(row.order_id, actor, row.reason)) as
        | { id?: unknown; refund_id?: unknown }
        | undefined;
      const ref =
        typeof result?.refund_id === "string" ? result.refund_id : typeof result?.id === "string" ? result.id : null;
      await revoke();
      await this.finish(row, ref);
      return this.get(id);
    }
    await revoke();
    const wallet = this.wallet(row);
    if (!wallet) {
      const at = this.now();
      if (await refundStore.transition(this.deps.db, id, ["approved"], "owed", {}, at)) {
        await this.deps.orders.audit(actor, "refund.owed", row.order_id, { refund_id: id, method: row.method });
      }
      return this.get(id);
    }
    // On chain: at most three rounds (sign, or drop a dead transaction and sign again).
    for (let round = 0; round < 3; round++) {
      row = await this.get(id);
      if (row.state === "approved") {
        const minNonce =
          row.method === "evm" ? ((await refundStore.highestPendingNonce(this.deps.db)) ?? -1) + 1 : undefined;
        let signed: Awaited<ReturnType<ChainRefunder["sign"]>>;
        try {
          signed = await wallet.sign(row.payer ?? "", row.asset ?? "", BigInt(row.amount_units ?? "0"), minNonce);
        } catch (err) {
          await refundStore.bumpAttempts(
            this.deps.db,
            id,
            `sign: ${String((err as Error).message).slice(0, 300)}`,
            this.now(),
          );
          throw new Problem(
            502,
            "refund_send_failed",
            "The refund transaction could not be prepared; it will be retried.",
            {
              refund_id: id,
            },
          );
        }
        // Stored BEFORE broadcasting; a racing signer that loses discards its bytes unsent.
        await refundStore.storeSigned(this.deps.db, id, signed, this.now());
        continue;
      }
      if (row.state !== "signed" && row.state !== "sent") return row;
      const tx = row.tx ?? "";
      let seen: OnChain;
      try {
        seen = await this.onChain(wallet, row);
      } catch (err) {
        // the chain cannot be read now: nothing is decided, the reconciler asks again
        await refundStore.bumpAttempts(
          this.deps.db,
          id,
          `status: ${String((err as Error).message).slice(0, 300)}`,
          this.now(),
        );
        this.deps.log.warn({ err: safeError(err), refund: logRef(id) }, "refund status unknown; will retry");
        return this.get(id);
      }
      if (seen === "confirmed") {
        await this.finish(row, tx);
        return this.get(id);
      }
      if (seen === "reverted") {
        await refundStore.revertedToOwed(this.deps.db, id, tx, `transaction ${tx} reverted`, this.now());
        return this.get(id);
      }
      if (seen === "dead") {
        await refundStore.dropSigned(this.deps.db, id, tx, `transaction ${tx} ${seen}`, this.now());
        continue;
      }
      // pending: (re)broadcast exactly the stored bytes
      this.crash("refund_before_broadcast");
      try {
        await wallet.broadcast(row.raw_tx ?? "");
      } catch (err) {
        await refundStore.bumpAttempts(
          this.deps.db,
          id,
          `broadcast: ${String((err as Error).message).slice(0, 300)}`,
          this.now(),
        );
        this.deps.log.warn({ err: safeError(err), refund: logRef(id) }, "refund broadcast failed; will retry");
        return this.get(id);
      }
      this.crash("refund_after_broadcast");
      await refundStore.transition(this.deps.db, id, ["signed"], "sent", {}, this.now());
      const outcome = await this.waitFor(wallet, row);
      if (outcome === "confirmed") {
        await this.finish(row, tx);
        return this.get(id);
      }
      if (outcome === "pending") return this.get(id);
      if (outcome === "reverted") {
        await refundStore.revertedToOwed(this.deps.db, id, tx, `transaction ${tx} reverted`, this.now());
        return this.get(id);
      }
      await refundStore.dropSigned(this.deps.db, id, tx, `transaction ${tx} ${outcome}`, this.now());
    }
    return this.get(id);
  }

  private onChain(wallet: ChainRefunder, row: RefundRow): Promise<OnChain> {
    return wallet.status(row.tx ?? "", row.method === "evm" ? row.evm_nonce : row.valid_until);
  }

  /** Polls the chain for the stored transaction, up to the settlement timeout. */
  private async waitFor(wallet: ChainRefunder, row: RefundRow): Promise<OnChain> {
    const deadline = Date.now() + this.deps.config.x402.settleTimeoutSeconds * 1000;
    let delay = 100;
    for (;;) {
      const seen = await this.onChain(wallet, row).catch(() => "pending" as const);
      if (seen !== "pending" || Date.now() + delay > deadline) return seen;
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 1000);
    }
  }

  private async finish(row: RefundRow, tx: string | null): Promise<void> {
    const at = this.now();
    if (
      await refundStore.transition(
        this.deps.db,
        row.id,
        ["approved", "signed", "sent"],
        "done",
        { done_at: at, tx: tx ?? row.tx, error: null },
        at,
      )
    ) {
      await this.deps.orders.audit("system:refunds", "refund.done", row.order_id, {
        refund_id: row.id,
        method: row.method,
        transaction: tx,
        amount_units: row.amount_units,
      });
    }
  }

  /** Reconciles every refund whose money may be moving (reconciler.ts). */
  reconcile(): Promise<{ examined: number; done: number }> {
    return this.reconciler.reconcile();
  }

  /** Start-up reconciliation, then a pass every `everyMs` (0 = none). */
  start(everyMs = 30_000): Promise<void> {
    return this.reconciler.start(everyMs);
  }

  async stop(): Promise<void> {
    await this.reconciler.stop();
    await Promise.allSettled([...this.inflight.values()]);
  }
}
