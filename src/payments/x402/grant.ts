import type { SettleResponse } from "@x402/core/types";
import type { FastifyBaseLogger } from "fastify";
import type { Kysely } from "kysely";
import type { Catalog } from "../../catalog/service.js";
import type { Config } from "../../config.js";
import { isUniqueViolation, nowIso } from "../../db/database.js";
import type { Database } from "../../db/schema.js";
import { logRef, safeError } from "../../http/logger.js";
import { conflict, Problem, unavailable } from "../../http/problem.js";
import { crashPoint } from "../../ops/crash-points.js";
import type { OnChainPayment } from "../../orders/fulfilment.js";
import { type PricedItem, productItem, quoteItem } from "../../orders/priced-item.js";
import type { OrderService } from "../../orders/service.js";
import type { Purchase, PurchaseOutcome, X402Answers } from "./answers.js";
import { type KindEnv, rowKind } from "./proof-kinds/index.js";
import type { SettleOutcome } from "./settlement.js";
import { proofStore } from "./store.js";
import type { PaymentProofRow } from "./tables.js";

/**
 * The second half of an x402 purchase: a reserved proof is settled (or its outcome read from the
 * chain after a crash), and a settled one is granted through the order core, in one database
 * transaction with the proof's move to `granted`. The first half (decoding, the ledger's replay
 * and conflict answers) is in service.ts.
 */

/** One settlement attempt as observed by metrics (src/ops/service-metrics.ts). */
export interface SettlementEvent {
  rail: string;
  kind: string;
  /** the settler's answer: success, failed, pending (outcome unknown) or unavailable */
  outcome: SettleOutcome["status"];
  /** the failure reason (failed), or the outcome for pending/unavailable */
  reason: string | undefined;
  seconds: number;
  source: "live" | "reconcile" | "retry";
}

export interface X402TestHooks {
  /** Runs after a successful settlement, before the order is written (crash simulation). */
  afterSettle?: (proofKey: string) => Promise<void>;
}

/** What the buyer's request said beside the proof (stored with it). */
interface RequestFacts {
  email: string | null;
  note: string | null;
  agent_id: string | null;
  /** The 402 dialect that carried the proof (absent on rows written before MPP: x402). */
  protocol?: "x402" | "mpp";
}

export interface ProofGrantDeps {
  db: Kysely<Database>;
  config: Config;
  catalog: Catalog;
  orders: OrderService;
  log: FastifyBaseLogger;
  answers: X402Answers;
  env: KindEnv;
  hooks: X402TestHooks;
  settlementObservers: Set<(event: SettlementEvent) => void>;
}

export class ProofGrant {
  private readonly db: Kysely<Database>;
  private readonly config: Config;
  private readonly catalog: Catalog;
  private readonly orders: OrderService;
  private readonly log: FastifyBaseLogger;
  private readonly answers: X402Answers;
  private readonly env: KindEnv;
  private readonly hooks: X402TestHooks;
  private readonly settlementObservers: Set<(event: SettlementEvent) => void>;

  constructor(deps: ProofGrantDeps) {
    this.db = deps.db;
    this.config = deps.config;
    this.catalog = deps.catalog;
    this.orders = deps.orders;
    this.log = deps.log;
    this.answers = deps.answers;
    this.env = deps.env;
    this.hooks = deps.hooks;
    this.settlementObservers = deps.settlementObservers;
  }

  /** The priced item a ledger row pays for: the value stored with it (older rows: rebuilt from its columns). */
  itemOf(row: PaymentProofRow): PricedItem {
    if (row.item) return JSON.parse(row.item) as PricedItem;
    if (row.item_kind === "quote" && row.item_ref) {
      return quoteItem(
        {
          id: row.item_ref,
          amount_units: row.amount_units,
          amount_cents: row.amount_cents,
        },
        row.resource ?? `${this.config.baseUrl}/api/x402-suite`,
      );
    }
    return productItem(this.catalog.resolve(row.sku), row.resource ?? this.answers.resourceUrl());
  }

  /** The order core's reference of a proof's on-chain payment. */
  paymentOf(row: PaymentProofRow, tx: string, payer?: string | null): OnChainPayment {
    return { chain: row.rail === "x402_solana_usdc" ? "solana" : "evm", tx, payer: payer || row.payer };
  }

  async replay(row: PaymentProofRow): Promise<Purchase> {
    if (!row.order_id) throw new Error("x402: granted proof without order");
    const response = row.settle_response ? (JSON.parse(row.settle_response) as SettleResponse) : undefined;
    return this.answers.purchase(row.item_kind, row.order_id, row, response, false);
  }

  /** Runs the settlement of a reserved (or reclaimed) proof and grants on success. */
  async settleAndGrant(
    row: PaymentProofRow,
    item: PricedItem,
    source: "live" | "reconcile" | "retry",
  ): Promise<PurchaseOutcome> {
    const claimed = await proofStore.transition(this.db, row.proof_key, ["reserved"], "settling");
    if (!claimed) {
      return {
        kind: "pending",
        pending: this.answers.pending("payment_in_progress", "This payment is being settled.", "settling"),
      };
    }
    await proofStore.bumpAttempts(this.db, row.proof_key);
    crashPoint("before_settle");
    const started = performance.now();
    const outcome = await this.runSettlement(row);
    const event: SettlementEvent = {
      rail: row.rail,
      kind: row.kind,
      outcome: outcome.status,
      reason: outcome.status === "failed" ? outcome.reason : outcome.status === "success" ? undefined : outcome.status,
      seconds: (performance.now() - started) / 1000,
      source,
    };
    for (const observe of this.settlementObservers) observe(event);
    return this.applyOutcome(row, item, outcome, source);
  }

  private async runSettlement(row: PaymentProofRow): Promise<SettleOutcome> {
    return rowKind(row.kind).settle(row, this.env);
  }

  private async applyOutcome(
    row: PaymentProofRow,
    item: PricedItem,
    outcome: SettleOutcome,
    source: "live" | "reconcile" | "retry",
  ): Promise<PurchaseOutcome> {
    let o = outcome;
    // A "failed" EIP-3009 settlement whose nonce is nevertheless used on chain was paid: recover it.
    if (o.status === "failed" && rowKind(row.kind).recheckFailures) {
      const recovered = await rowKind(row.kind)
        .onChain(row, this.env)
        .catch(() => undefined);
      if (recovered?.status === "success") o = recovered;
    }
    await proofStore.recordAttempt(this.db, {
      proof_key: row.proof_key,
      source,
      outcome: o.status,
      transaction: "transaction" in o ? (o.transaction ?? null) : null,
      reason: o.status === "failed" ? o.reason : null,
      detail: o.status === "success" ? null : o.detail,
    });
    switch (o.status) {
      case "success": {
        if (this.hooks.afterSettle) await this.hooks.afterSettle(row.proof_key);
        crashPoint("after_settle");
        const purchase = await this.finalize(row, item, o.transaction, o.payer, o.response);
        crashPoint("after_grant");
        return { kind: "granted", purchase };
      }
      case "failed":
        await proofStore.transition(this.db, row.proof_key, ["settling"], "failed", {
          error_reason: o.reason,
          error_detail: o.detail,
          ...(o.transaction ? { expected_tx: o.transaction } : {}),
        });
        for (const tx of new Set([row.expected_tx, o.transaction])) {
          if (tx) await this.orders.releasePayment(row.proof_key, this.paymentOf(row, tx));
        }
        throw this.answers.refusal(item, { reason: o.reason, detail: o.detail });
      case "pending":
        await proofStore.transition(this.db, row.proof_key, ["settling"], "pending_unknown", {
          error_reason: "settlement_pending",
          error_detail: o.detail,
          ...(o.transaction ? { expected_tx: o.transaction } : {}),
        });
        // The settlement transaction is public from now on: hold it for this proof.
        if (o.transaction) await this.orders.holdPayment(row.proof_key, row.rail, this.paymentOf(row, o.transaction));
        this.log.warn(
          { proof: logRef(row.proof_key), detail: safeError(new Error(o.detail)).message },
          "x402 settlement outcome unknown; kept for reconciliation",
        );
        return {
          kind: "pending",
          pending: this.answers.pending(
            "payment_settlement_pending",
            "The payment was submitted but its settlement is not confirmed yet.",
            "pending_unknown",
          ),
        };
      case "unavailable":
        await proofStore.transition(this.db, row.proof_key, ["settling"], "failed", {
          error_reason: "settlement_unavailable",
          error_detail: o.detail,
        });
        throw unavailable(
          "settlement_unavailable",
          `Settlement is unavailable: ${o.detail}. Nothing was charged; retry later with the same proof.`,
          {
            retry_after: 30,
          },
        );
    }
  }

  /**
   * Marks the proof settled with its (unique) transaction, grants the order and marks the
   * proof granted — one database transaction, so a crash leaves either nothing or all of it.
   */
  private async finalize(
    row: PaymentProofRow,
    item: PricedItem,
    tx: string,
    payer: string,
    response: SettleResponse,
  ): Promise<Purchase> {
    const request = JSON.parse(row.request) as RequestFacts;
    const at = nowIso();
    try {
      const result = await this.db.transaction().execute(async (trx) => {
        const current = await proofStore.get(trx, row.proof_key);
        if (current && current.state === "granted" && current.order_id) return { replay: current };
        const other = await proofStore.bySettlementTx(trx, tx);
        if (other && other.proof_key !== row.proof_key) return { duplicate: other };
        const settled = await proofStore.transition(
          trx,
          row.proof_key,
          ["settling", "pending_unknown", "reserved", "settled"],
          "settled",
          {
            settlement_tx: tx,
            settled_at: at,
            payer: payer || row.payer,
            settle_response: JSON.stringify(response),
            error_reason: null,
            error_detail: null,
            updated_at: at,
          },
        );
        if (!settled) throw new Error(`x402: proof ${row.proof_key} left the settling state`);
        // One grant for every item: the order core runs the fulfiller of the item's kind (an order
        // for a product, the job for a quote) under the one-payment-one-fulfilment rule.
        const fulfilled = await this.orders.grant(
          item,
          {
            proofKey: row.proof_key,
            rail: row.rail,
            amountCents: row.amount_cents,
            currency: "usd",
            transactionRef: tx,
            email: request.email,
            agentId: request.agent_id,
            onChain: this.paymentOf(row, tx, payer),
            meta: {
              network: row.network,
              payer: payer || row.payer,
              amount_units: row.amount_units,
              proof_kind: row.kind,
              note: request.note,
              protocol: request.protocol ?? "x402",
            },
          },
          trx,
        );
        await proofStore.transition(trx, row.proof_key, ["settled"], "granted", {
          order_id: fulfilled.id,
          updated_at: at,
        });
        return { fulfilled };
      });
      if ("replay" in result && result.replay) return this.replay(result.replay);
      if ("duplicate" in result && result.duplicate) return this.duplicateTx(row, tx);
      if (!("fulfilled" in result) || !result.fulfilled) throw new Error("x402: grant returned nothing");
      const { fulfilled } = result;
      if (fulfilled.created) {
        this.log.info(
          { kind: fulfilled.kind, id: fulfilled.id, proof: logRef(row.proof_key), rail: row.rail, transaction: tx },
          "x402 purchase fulfilled",
        );
      }
      const fresh = (await proofStore.get(this.db, row.proof_key)) ?? row;
      return this.answers.purchase(fulfilled.kind, fulfilled.id, fresh, response, fulfilled.created);
    } catch (err) {
      if (err instanceof Problem && err.code === "tx_already_used") {
        // Another rail (an approved claim) or another proof already holds this on-chain payment.
        await proofStore.transition(
          this.db,
          row.proof_key,
          ["settling", "pending_unknown", "reserved", "settled"],
          "failed",
          { error_reason: "tx_already_used", error_detail: `Transaction ${tx} already paid for another order.` },
        );
        throw err;
      }
      if (isUniqueViolation(err)) {
        const other = await proofStore.bySettlementTx(this.db, tx);
        if (other && other.proof_key !== row.proof_key) return this.duplicateTx(row, tx);
        const current = await proofStore.get(this.db, row.proof_key);
        if (current?.state === "granted") return this.replay(current);
      }
      throw err;
    }
  }

  private async duplicateTx(row: PaymentProofRow, tx: string): Promise<never> {
    await proofStore.transition(
      this.db,
      row.proof_key,
      ["settling", "pending_unknown", "reserved", "settled"],
      "failed",
      {
        error_reason: "settlement_transaction_already_used",
        error_detail: `Transaction ${tx} already paid for another order.`,
      },
    );
    throw conflict(
      "settlement_transaction_already_used",
      `Transaction ${tx} has already paid for another order; a transaction buys one order only.`,
    );
  }

  /** Decides one unfinished proof from chain state (or by re-settling the same payload). */
  async reconcileRow(row: PaymentProofRow, source: "reconcile" | "retry"): Promise<void> {
    const claimed = await proofStore.transition(this.db, row.proof_key, [row.state], "settling");
    if (!claimed) return;
    const item = this.itemOf(row);
    let outcome: SettleOutcome | undefined;
    try {
      const kind = rowKind(row.kind);
      outcome = await kind.onChain(row, this.env);
      if (!outcome && kind.mayResettle(this.env)) outcome = await this.runSettlement(row);
    } catch (err) {
      outcome = { status: "pending", detail: `reconciliation error: ${(err as Error).message.split("\n")[0]}` };
    }
    outcome ??= { status: "pending", detail: "settlement is unavailable; will retry" };
    if (outcome.status === "unavailable") outcome = { status: "pending", detail: outcome.detail };
    try {
      await this.applyOutcome(row, item, outcome, source);
    } catch (err) {
      if (!(err instanceof Problem)) throw err;
    }
  }
}
