import { createHash } from "node:crypto";
import type { SettleResponse } from "@x402/core/types";
import type { FastifyBaseLogger } from "fastify";
import type { Kysely } from "kysely";
import type { Catalog, Product } from "../../catalog/service.js";
import type { Config } from "../../config.js";
import { isUniqueViolation, nowIso } from "../../db/database.js";
import type { Database } from "../../db/schema.js";
import { logRef, safeError } from "../../http/logger.js";
import { badRequest, conflict, Problem, unavailable } from "../../http/problem.js";
import { crashPoint } from "../../ops/crash-points.js";
import type { OnChainPayment } from "../../orders/fulfilment.js";
import { type PricedItem, productItem, quoteItem } from "../../orders/priced-item.js";
import type { OrderService } from "../../orders/service.js";
import {
  type Challenge,
  identifierReused,
  notConfigured,
  type Purchase,
  type PurchaseOutcome,
  X402Answers,
} from "./answers.js";
import { type BuyerKey, buyerKey } from "./buyer.js";
import { type ParsedProof, parsePaymentHeader } from "./proof.js";
import { type KindEnv, kindOf, type Prepared, rowKind } from "./proof-kinds/index.js";
import type { X402Rail } from "./rails.js";
import { Reconciler } from "./reconciler.js";
import { configuredRails, type V2Requirements, v2Requirements } from "./requirements.js";
import { Settlement, type SettleOutcome } from "./settlement.js";
import { proofStore } from "./store.js";
import type { PaymentProofRow, ProofState } from "./tables.js";

/**
 * Agent purchases over x402: challenge, proof checks, settlement, exactly-once grant,
 * pending outcomes and reconciliation. Orders are created only through OrderService.grant,
 * inside the same transaction that marks the proof settled and granted.
 */

export interface PurchaseRequest {
  sku?: string | null | undefined;
  email?: string | null | undefined;
  note?: string | null | undefined;
}

/** Secrets that travel beside the proof (never on chain): they say who the buyer is. */
export interface BuyerSecrets {
  /** The `Idempotency-Key` header (the payment-identifier extension travels inside the proof). */
  idempotencyKey?: string | undefined;
}

const AGENT_NOTE = /^agent:([A-Za-z0-9._:@-]{1,200})$/;

interface Ctx {
  item: PricedItem;
  rail: X402Rail & { payTo: string };
  requirements: V2Requirements;
  request: { email: string | null; note: string | null; agent_id: string | null };
}

export interface X402TestHooks {
  /** Runs after a successful settlement, before the order is written (crash simulation). */
  afterSettle?: (proofKey: string) => Promise<void>;
}

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

export class X402Service {
  readonly settlement: Settlement;
  /** Called after every settlement attempt (metrics); must not throw. */
  readonly settlementObservers = new Set<(event: SettlementEvent) => void>();
  readonly answers: X402Answers;
  private readonly env: KindEnv;
  readonly hooks: X402TestHooks = {};
  private readonly reconciler: Reconciler;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly config: Config,
    private readonly catalog: Catalog,
    private readonly orders: OrderService,
    private readonly log: FastifyBaseLogger,
  ) {
    this.settlement = new Settlement(config);
    this.answers = new X402Answers(config, catalog, this.settlement, orders);
    this.env = { db, config, settlement: this.settlement, answers: this.answers };
    this.reconciler = new Reconciler(db, log, this.settlement.settleTimeoutMs, (row) =>
      this.reconcileRow(row, "reconcile"),
    );
  }

  /** Start-up reconciliation, then a periodic pass every `everyMs` (0 = none). */
  start(everyMs = 30_000): Promise<void> {
    return this.reconciler.start(everyMs);
  }

  stop(): Promise<void> {
    return this.reconciler.stop();
  }

  /** Reconciles proofs whose outcome is not final (crash, timeout). */
  reconcile(opts: { startup?: boolean } = {}): Promise<{ examined: number; granted: number; failed: number }> {
    return this.reconciler.reconcile(opts);
  }

  /** The 402 challenge for one product, or catalog-wide without one. */
  challenge(product: Product | undefined, error?: { code: string; detail: string }): Challenge {
    return this.answers.challenge(product, error);
  }

  /** The 402 challenge for one priced item (a product, or a suite quote). */
  challengeFor(item: PricedItem, error?: { code: string; detail: string }): Challenge {
    return this.answers.challengeFor(item, error);
  }

  /** Chain-id check (throws StartupError on a mismatch), facilitator set-up. */
  async init(): Promise<void> {
    await this.settlement.init();
  }

  configured(): boolean {
    return configuredRails(this.config).length > 0;
  }

  async purchase(
    input: PurchaseRequest,
    header: string | undefined,
    secrets: BuyerSecrets = {},
  ): Promise<PurchaseOutcome> {
    if (header === undefined) {
      const product = input.sku ? this.catalog.resolve(input.sku) : undefined;
      return { kind: "challenge", challenge: this.answers.challenge(product) };
    }
    if (!input.sku) throw badRequest("sku_required", 'The body must name the product: { "sku": "<sku or alias>" }.');
    const product = this.catalog.resolve(input.sku);
    return this.buy(productItem(product, this.answers.resourceUrl()), input, header, secrets);
  }

  /**
   * Pays for one priced item (a product, or a suite quote) with a proof: the same exactly-once,
   * payer-bound handling for every item; the fulfilment (order or job) runs in the grant transaction.
   */
  async buy(
    item: PricedItem,
    input: { email?: string | null | undefined; note?: string | null | undefined },
    header: string,
    secrets: BuyerSecrets = {},
  ): Promise<PurchaseOutcome> {
    // Decoding is local: a malformed proof gets its 400 whatever is configured.
    const proof = parsePaymentHeader(header, this.config.x402.baseChainId);
    return this.buyProof(item, input, proof, secrets);
  }

  /**
   * Pays for one priced item with an already decoded proof, whichever dialect carried it (an x402
   * payment header, an MPP credential): one ledger, one proof key per on-chain payment, so one
   * transfer buys one item whichever dialect presents it.
   */
  async buyProof(
    item: PricedItem,
    input: { email?: string | null | undefined; note?: string | null | undefined },
    proof: ParsedProof,
    secrets: BuyerSecrets = {},
  ): Promise<PurchaseOutcome> {
    const buyer = buyerKey(proof, secrets.idempotencyKey);
    if (!this.configured()) throw notConfigured(this.config);
    const rail = configuredRails(this.config).find((r) => r.chain === proof.chain);
    if (!rail) {
      throw badRequest(
        "rail_not_configured",
        `The ${proof.chain} rail is not configured here; pay on one of the rails in accepts.`,
      );
    }
    await this.settlement.refresh();
    const email = input.email ?? null;
    const note = input.note ?? null;
    const agent = note ? AGENT_NOTE.exec(note) : null;
    const ctx: Ctx = {
      item,
      rail,
      requirements: v2Requirements(rail, item.amountUnits, this.settlement.feePayer()),
      request: { email, note, agent_id: agent?.[1] ?? null },
    };
    const fingerprint = createHash("sha256")
      .update(JSON.stringify([item.kind === "product" ? item.sku : `quote:${item.ref}`, email, note]))
      .digest("hex");
    // A proof seen before is answered from the ledger first (replay, 409, in progress), before
    // any check that depends on this request's price.
    const seen = await this.seenBefore(proof);
    if (seen && (seen.request_fingerprint !== fingerprint || seen.state !== "failed")) {
      return this.existing({ ...seen, request_fingerprint: fingerprint }, item, buyer);
    }
    const prepared = await this.prepare(proof, ctx);
    if ("pending" in prepared) return { kind: "pending", pending: prepared.pending };
    if ("existing" in prepared)
      return this.existing({ ...prepared.existing, request_fingerprint: fingerprint }, item, buyer);
    if (buyer) {
      const holder = await proofStore.byBuyerKey(this.db, buyer.hash);
      if (holder && holder.proof_key !== prepared.proofKey) throw identifierReused();
    }
    const at = nowIso();
    const row: PaymentProofRow = {
      proof_key: prepared.proofKey,
      kind: proof.kind,
      rail: rail.id,
      network: ctx.requirements.network,
      sku: item.sku,
      amount_cents: item.amountCents,
      amount_units: ctx.requirements.amount,
      payer: prepared.payer,
      request_fingerprint: fingerprint,
      request: JSON.stringify(ctx.request),
      state: "reserved",
      payload: JSON.stringify(prepared.payload),
      requirements: JSON.stringify(ctx.requirements),
      expected_tx: prepared.expectedTx,
      settlement_tx: null,
      order_id: null,
      settle_response: null,
      error_reason: null,
      error_detail: null,
      attempts: 0,
      created_at: at,
      updated_at: at,
      settled_at: null,
      buyer_key_hash: buyer?.hash ?? null,
      item_kind: item.kind,
      item_ref: item.ref,
      resource: item.resource,
      item: JSON.stringify(item),
    };
    let won: boolean;
    try {
      won = await proofStore.reserve(this.db, row);
    } catch (err) {
      if (isUniqueViolation(err)) throw identifierReused();
      throw err;
    }
    if (!won) return this.existing(row, item, buyer);
    // A transaction known before settlement (the buyer's own Base transfer, a Solana transaction
    // signature) is held for this proof at once: no other rail or proof can redeem it meanwhile.
    if (prepared.expectedTx) {
      const held = await this.orders.holdPayment(row.proof_key, row.rail, this.paymentOf(row, prepared.expectedTx));
      if (!held) {
        await proofStore.transition(this.db, row.proof_key, ["reserved"], "failed", {
          error_reason: "tx_already_used",
          error_detail: "The transaction already paid for another order.",
        });
        throw conflict(
          "tx_already_used",
          "This on-chain payment already paid for another order (or is being redeemed).",
        );
      }
    }
    return this.settleAndGrant(row, item, "live");
  }

  /** The priced item a ledger row pays for: the value stored with it (older rows: rebuilt from its columns). */
  private itemOf(row: PaymentProofRow): PricedItem {
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
  private paymentOf(row: PaymentProofRow, tx: string, payer?: string | null): OnChainPayment {
    return { chain: row.rail === "x402_solana_usdc" ? "solana" : "evm", tx, payer: payer || row.payer };
  }

  /** What a proof already in the ledger paid for (a retry names the same item), from the header alone. */
  async itemOfProof(header: string): Promise<{ kind: "product" | "quote"; ref: string | null } | undefined> {
    return this.itemOfParsedProof(parsePaymentHeader(header, this.config.x402.baseChainId));
  }

  /** The same for a decoded proof (an MPP credential's). */
  async itemOfParsedProof(proof: ParsedProof): Promise<{ kind: "product" | "quote"; ref: string | null } | undefined> {
    const row = await this.seenBefore(proof);
    return row ? { kind: row.item_kind, ref: row.item_ref } : undefined;
  }

  /** The ledger row of a proof, found from the header alone (no chain access). */
  private async seenBefore(proof: ParsedProof): Promise<PaymentProofRow | undefined> {
    return kindOf(proof).seen(proof, this.env);
  }

  /** Kind-specific local checks; returns the proof key and what to store, or a pending answer. */
  private async prepare(proof: ParsedProof, ctx: Ctx): Promise<Prepared> {
    return kindOf(proof).prepare(proof, { item: ctx.item, requirements: ctx.requirements }, this.env);
  }

  private isBuyer(row: PaymentProofRow, buyer: BuyerKey | undefined): boolean {
    return row.buyer_key_hash !== null && buyer !== undefined && row.buyer_key_hash === buyer.hash;
  }

  /** The proof key was already reserved: replay, conflict, retry or in-progress. */
  private async existing(
    mine: PaymentProofRow,
    item: PricedItem,
    buyer: BuyerKey | undefined,
  ): Promise<PurchaseOutcome> {
    const row = await proofStore.get(this.db, mine.proof_key);
    if (!row) throw new Error("x402: reserved proof vanished");
    if (row.request_fingerprint !== mine.request_fingerprint) {
      throw conflict(
        "payment_proof_already_used",
        "This payment proof was already used for another purchase (different sku or body); a proof buys one order only.",
        { proof_state: row.state },
      );
    }
    switch (row.state) {
      case "granted":
        if (!this.isBuyer(row, buyer)) throw this.answers.redeemed(row);
        return { kind: "granted", purchase: await this.replay(row) };
      case "failed": {
        // A failed proof may be retried (e.g. after a settlement outage) by its buyer, or, when it
        // carried no buyer secret, as long as it never reached the chain (so nobody else can hold it).
        const mayRetry = row.buyer_key_hash
          ? this.isBuyer(row, buyer)
          : !(await proofStore.everBroadcast(this.db, row.proof_key));
        if (!mayRetry) {
          throw conflict(
            "payment_proof_already_used",
            "This payment proof failed earlier and can be retried only with the payment identifier or Idempotency-Key of its first attempt. Sign a new payment instead.",
            { proof_state: row.state },
          );
        }
        // Retry of a failed proof with the same body (e.g. after a settlement outage): claim it again.
        const claimed = await proofStore.transition(this.db, row.proof_key, ["failed"], "reserved", {
          error_reason: null,
          error_detail: null,
          requirements: mine.requirements,
          payload: mine.payload,
          expected_tx: mine.expected_tx ?? row.expected_tx,
        });
        if (!claimed)
          return {
            kind: "pending",
            pending: this.answers.pending("payment_in_progress", "This payment is being settled.", row.state),
          };
        const fresh = await proofStore.get(this.db, row.proof_key);
        if (!fresh) throw new Error("x402: proof vanished");
        return this.settleAndGrant(fresh, item, "live");
      }
      case "pending_unknown": {
        await this.reconcileRow(row, "retry");
        const after = await proofStore.get(this.db, row.proof_key);
        if (after?.state === "granted") {
          if (!this.isBuyer(after, buyer)) throw this.answers.redeemed(after);
          return { kind: "granted", purchase: await this.replay(after) };
        }
        if (after?.state === "failed") {
          throw this.answers.refusal(item, {
            reason: after.error_reason ?? "settlement_failed",
            detail: after.error_detail ?? "Settlement failed.",
          });
        }
        return {
          kind: "pending",
          pending: this.answers.pending(
            "payment_settlement_pending",
            "The settlement outcome is not known yet.",
            after?.state ?? row.state,
          ),
        };
      }
      default:
        return {
          kind: "pending",
          pending: this.answers.pending(
            "payment_in_progress",
            "This payment proof is being settled by another request.",
            row.state,
          ),
        };
    }
  }

  private async replay(row: PaymentProofRow): Promise<Purchase> {
    if (!row.order_id) throw new Error("x402: granted proof without order");
    const response = row.settle_response ? (JSON.parse(row.settle_response) as SettleResponse) : undefined;
    return this.answers.purchase(row.item_kind, row.order_id, row, response, false);
  }

  /** Runs the settlement of a reserved (or reclaimed) proof and grants on success. */
  private async settleAndGrant(
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
    const request = JSON.parse(row.request) as Ctx["request"];
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

  /** Operator view of the proof ledger (no payloads: they are bearer payment authorizations). */
  async listProofs(q: { state?: ProofState; limit: number; offset: number }) {
    const { total, items } = await proofStore.list(this.db, q);
    return {
      total,
      items: items.map((r) => ({
        proof_key: r.proof_key,
        kind: r.kind,
        rail: r.rail,
        network: r.network,
        sku: r.sku,
        amount_units: r.amount_units,
        payer: r.payer,
        state: r.state,
        settlement_tx: r.settlement_tx,
        expected_tx: r.expected_tx,
        order_id: r.order_id,
        error_reason: r.error_reason,
        error_detail: r.error_detail,
        attempts: r.attempts,
        created_at: r.created_at,
        updated_at: r.updated_at,
        settled_at: r.settled_at,
      })),
    };
  }

  /** Decides one unfinished proof from chain state (or by re-settling the same payload). */
  private async reconcileRow(row: PaymentProofRow, source: "reconcile" | "retry"): Promise<void> {
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

export type {
  Challenge,
  JobPurchaseBody,
  Pending,
  ProductPurchaseBody,
  Purchase,
  PurchaseOutcome,
} from "./answers.js";
export { RECOVERY_PATH } from "./answers.js";
