import { createHash } from "node:crypto";
import type { FastifyBaseLogger } from "fastify";
import type { Kysely } from "kysely";
import type { Catalog, Product } from "../../catalog/service.js";
import type { Config } from "../../config.js";
import { isUniqueViolation, nowIso } from "../../db/database.js";
import type { Database } from "../../db/schema.js";
import { badRequest, conflict, Problem } from "../../http/problem.js";
import { type PricedItem, productItem } from "../../orders/priced-item.js";
import type { OrderService } from "../../orders/service.js";
import { type Challenge, identifierReused, notConfigured, type PurchaseOutcome, X402Answers } from "./answers.js";
import { type BuyerKey, buyerKey } from "./buyer.js";
import { ProofGrant, type SettlementEvent, type X402TestHooks } from "./grant.js";
import { type ParsedProof, parsePaymentHeader } from "./proof.js";
import { type KindEnv, kindOf, type Prepared } from "./proof-kinds/index.js";
import { listProofs } from "./proof-list.js";
import type { X402Rail } from "./rails.js";
import { Reconciler } from "./reconciler.js";
import { configuredRails, type V2Requirements, v2Requirements } from "./requirements.js";
import { Settlement } from "./settlement.js";
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
  request: { email: string | null; note: string | null; agent_id: string | null; protocol: "x402" | "mpp" };
}

export class X402Service {
  readonly settlement: Settlement;
  /** Called after every settlement attempt (metrics); must not throw. */
  readonly settlementObservers = new Set<(event: SettlementEvent) => void>();
  readonly answers: X402Answers;
  private readonly env: KindEnv;
  readonly hooks: X402TestHooks = {};
  private readonly reconciler: Reconciler;
  /** Settles reserved proofs and grants settled ones (grant.ts). */
  private readonly grant: ProofGrant;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly config: Config,
    private readonly catalog: Catalog,
    private readonly orders: OrderService,
    readonly log: FastifyBaseLogger,
  ) {
    this.settlement = new Settlement(config);
    this.answers = new X402Answers(config, catalog, this.settlement, orders);
    this.env = { db, config, settlement: this.settlement, answers: this.answers };
    this.grant = new ProofGrant({
      db,
      config,
      catalog,
      orders,
      log,
      answers: this.answers,
      env: this.env,
      hooks: this.hooks,
      settlementObservers: this.settlementObservers,
    });
    this.reconciler = new Reconciler(db, log, this.settlement.settleTimeoutMs, (row) =>
      this.grant.reconcileRow(row, "reconcile"),
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
    let proof: ParsedProof;
    try {
      proof = parsePaymentHeader(header, this.config.x402.baseChainId);
    } catch (err) {
      // As the x402 reference server answers (@x402/core 2.27): a payment header that cannot be
      // decoded gets the 402 with the full challenge, the decode error named in `error`, so the
      // client can pay again. Without a configured rail there is no challenge: the 400 stands.
      if (err instanceof Problem && err.status === 400 && this.configured()) {
        throw this.answers.refusal(item, { reason: err.code, detail: err.detail });
      }
      throw err;
    }
    return this.buyProof(item, input, proof, secrets);
  }

  /**
   * Pays for one priced item with an already decoded proof, whichever dialect carried it (an x402
   * payment header, an MPP credential): one ledger, one proof key per on-chain payment, so one
   * transfer buys one item whichever dialect presents it.
   */
  async buyProof(
    item: PricedItem,
    input: {
      email?: string | null | undefined;
      note?: string | null | undefined;
      /** The 402 dialect that carried the proof (recorded on the order; default x402). */
      protocol?: "x402" | "mpp" | undefined;
    },
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
      request: { email, note, agent_id: agent?.[1] ?? null, protocol: input.protocol ?? "x402" },
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
      if (!isUniqueViolation(err)) throw err;
      // PostgreSQL may report a concurrent insert of the SAME proof (same buyer key) as a violation
      // of the buyer-key index rather than as the proof-key conflict: that is a replay, not a reuse.
      const same = await proofStore.get(this.db, row.proof_key);
      if (!same || same.buyer_key_hash !== row.buyer_key_hash) throw identifierReused();
      won = false;
    }
    if (!won) return this.existing(row, item, buyer);
    // A transaction known before settlement (the buyer's own Base transfer, a Solana transaction
    // signature) is held for this proof at once: no other rail or proof can redeem it meanwhile.
    if (prepared.expectedTx) {
      const held = await this.orders.holdPayment(
        row.proof_key,
        row.rail,
        this.grant.paymentOf(row, prepared.expectedTx),
      );
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
    return this.grant.settleAndGrant(row, item, "live");
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
        return { kind: "granted", purchase: await this.grant.replay(row) };
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
        return this.grant.settleAndGrant(fresh, item, "live");
      }
      case "pending_unknown": {
        await this.grant.reconcileRow(row, "retry");
        const after = await proofStore.get(this.db, row.proof_key);
        if (after?.state === "granted") {
          if (!this.isBuyer(after, buyer)) throw this.answers.redeemed(after);
          return { kind: "granted", purchase: await this.grant.replay(after) };
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

  /** Operator view of the proof ledger (no payloads: they are bearer payment authorizations). */
  listProofs(q: { state?: ProofState; limit: number; offset: number }) {
    return listProofs(this.db, q);
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
export type { SettlementEvent, X402TestHooks } from "./grant.js";
