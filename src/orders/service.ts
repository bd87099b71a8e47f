import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import type { Catalog } from "../catalog/service.js";
import { isUniqueViolation, nowIso } from "../db/database.js";
import type { Executor } from "../db/executor.js";
import { AUDIT_CHAIN, AUDIT_KIND, append as appendToChain, auditEntryBody } from "../db/hash-chain.js";
import type { Database } from "../db/schema.js";
import { Problem } from "../http/problem.js";
import { orderStore } from "./store.js";
import type { OrderRow, PaymentChain, PaymentReferenceRow } from "./tables.js";
import { accessToken, hashToken, newLicenseKey, newOrderId } from "./tokens.js";

export interface GrantRequest {
  /** Canonical, rail-specific proof key (e.g. `evm:8453:<asset>:<from>:<nonce>`, `stripe:cs_…`, `claim:<id>`). */
  proofKey: string;
  sku: string;
  rail: string;
  amountCents: number;
  currency?: string;
  transactionRef?: string | null;
  email?: string | null;
  agentId?: string | null;
  meta?: Record<string, unknown>;
  /**
   * The on-chain payment this order is paid by, if any. One on-chain payment buys one order across
   * every rail: the reference is written in the grant transaction and a second holder gets 409.
   */
  payment?: PaymentRefInput;
}

export interface PaymentRefInput {
  chain: PaymentChain;
  tx: string;
  payer?: string | null;
}

/** Canonical reference of an on-chain payment: EVM and BTC ids in lower case, Solana signatures as they are. */
export function paymentRef(chain: PaymentChain, tx: string): { ref: string; tx: string } {
  const t = chain === "solana" ? tx.trim() : tx.trim().toLowerCase();
  return { ref: `${chain}:${t}`, tx: t };
}

/** 409: this on-chain payment already belongs to another order or another pending purchase. */
export function paymentAlreadyUsed(detail?: string): Problem {
  return new Problem(
    409,
    "tx_already_used",
    detail ?? "This on-chain payment already paid for another order (or is being redeemed by another purchase).",
  );
}

export interface OrderView {
  order_id: string;
  sku: string;
  name: string;
  amount_cents: number;
  amount_usd: string;
  currency: string;
  rail: string;
  status: OrderRow["status"];
  transaction: string | null;
  email: string | null;
  agent_id: string | null;
  /**
   * Where `agent_id` comes from: the buyer's own `note: agent:<id>` (x402), never verified, so
   * always shown as self-asserted; null when there is no agent id.
   */
  agent_id_source: "self_asserted" | null;
  license_key: string | null;
  created_at: string;
  revoked_at: string | null;
  revoke_reason: string | null;
}

export interface Granted {
  order: OrderRow;
  /** false when the proof key had already been granted (idempotent replay). */
  created: boolean;
  accessUrl: string;
}

export type GrantListener = (order: OrderRow, db: Executor) => Promise<void>;

/** Creates what a paid quote buys (a suite job), inside the grant transaction; idempotent per quote. */
export type QuoteFulfiller = (
  quoteId: string,
  paid: { by: string; ref: string },
  db: Executor,
) => Promise<{ jobId: string; created: boolean }>;

export interface QuoteGrantRequest {
  /** Canonical proof key of the payment (x402 proof key, `stripe:cs_…`). */
  proofKey: string;
  quoteId: string;
  rail: string;
  payment?: PaymentRefInput;
}

/**
 * Orders and entitlements. `grant` is the single function through which every
 * rail (x402, card checkout, payment link, approved claim) creates an order.
 */
export class OrderService {
  private readonly listeners: GrantListener[] = [];
  private quoteFulfiller: QuoteFulfiller | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly catalog: Catalog,
    private readonly baseUrl: string,
    private readonly tokenSecret: string,
  ) {}

  /** Runs after an order is created, inside the granting transaction (e.g. olympiad seats). */
  onGranted(listener: GrantListener): void {
    this.listeners.push(listener);
  }

  /** The suite registers how a paid quote becomes a job. */
  setQuoteFulfiller(fulfiller: QuoteFulfiller): void {
    this.quoteFulfiller = fulfiller;
  }

  /**
   * The quote counterpart of `grant`: a paid quote buys one job, through the same one-payment-one-
   * fulfilment rule (the on-chain reference is held and bound to the job in the same transaction).
   */
  async grantQuote(req: QuoteGrantRequest, trx: Executor): Promise<{ jobId: string; created: boolean }> {
    if (!this.quoteFulfiller) throw new Error("grantQuote: no quote fulfiller registered");
    if (req.payment) {
      const held = await this.holdPayment(req.proofKey, req.rail, req.payment, trx);
      if (!held) throw paymentAlreadyUsed();
    }
    const result = await this.quoteFulfiller(req.quoteId, { by: req.rail, ref: req.proofKey }, trx);
    if (req.payment) {
      await orderStore.bindReferenceToJob(
        trx,
        paymentRef(req.payment.chain, req.payment.tx).ref,
        req.proofKey,
        result.jobId,
        nowIso(),
      );
    }
    return result;
  }

  accessUrl(orderId: string): string {
    return `${this.baseUrl}/access/${accessToken(this.tokenSecret, orderId)}`;
  }

  /**
   * Grants exactly one order per proof key. A repeated call with the same proof key
   * returns the existing order (`created: false`). Pass a transaction to make the grant
   * part of a larger atomic change (e.g. marking a payment proof settled).
   */
  async grant(req: GrantRequest, trx?: Executor): Promise<Granted> {
    const product = this.catalog.resolve(req.sku);
    if (!Number.isSafeInteger(req.amountCents) || req.amountCents < 0) {
      throw new Error(`grant: amount must be integer cents, got ${req.amountCents}`);
    }
    const run = async (db: Executor): Promise<Granted> => {
      const existing = await orderStore.byProofKey(db, req.proofKey);
      if (existing) return { order: existing, created: false, accessUrl: this.accessUrl(existing.id) };
      const id = newOrderId();
      const at = nowIso();
      if (req.payment) {
        const held = await this.holdPayment(req.proofKey, req.rail, req.payment, db);
        if (!held) throw paymentAlreadyUsed();
      }
      const row: OrderRow = {
        id,
        proof_key: req.proofKey,
        sku: product.sku,
        amount_cents: req.amountCents,
        currency: req.currency ?? "usd",
        rail: req.rail,
        transaction_ref: req.transactionRef ?? null,
        email: req.email ?? null,
        agent_id: req.agentId ?? null,
        status: "active",
        access_token_hash: hashToken(accessToken(this.tokenSecret, id)),
        license_key: product.kind === "license" ? newLicenseKey(product.sku) : null,
        meta: JSON.stringify(req.meta ?? {}),
        created_at: at,
        updated_at: at,
        revoked_at: null,
        revoke_reason: null,
      };
      const inserted = await orderStore.insertIfAbsent(db, row);
      if (!inserted) {
        const winner = await orderStore.byProofKey(db, req.proofKey);
        if (!winner) throw new Error("grant: conflicting insert vanished");
        return { order: winner, created: false, accessUrl: this.accessUrl(winner.id) };
      }
      if (req.payment)
        await orderStore.bindReference(db, paymentRef(req.payment.chain, req.payment.tx).ref, req.proofKey, id, at);
      for (const listener of this.listeners) await listener(row, db);
      return { order: row, created: true, accessUrl: this.accessUrl(id) };
    };
    if (trx) return run(trx);
    try {
      return await this.db.transaction().execute(run);
    } catch (err) {
      // A concurrent grant of the same proof won the race on PostgreSQL: read its order.
      if (isUniqueViolation(err)) {
        const winner = await orderStore.byProofKey(this.db, req.proofKey);
        if (winner) return { order: winner, created: false, accessUrl: this.accessUrl(winner.id) };
      }
      throw err;
    }
  }

  /**
   * Reserves an on-chain payment for a holder (an x402 proof key, `claim:<id>`) before its order
   * exists, e.g. while a settlement is in flight. True when the holder has it (now or before).
   */
  async holdPayment(holder: string, rail: string, payment: PaymentRefInput, db: Executor = this.db): Promise<boolean> {
    const { ref, tx } = paymentRef(payment.chain, payment.tx);
    const row: PaymentReferenceRow = {
      ref,
      chain: payment.chain,
      tx,
      holder,
      order_id: null,
      payer: payment.payer ? (payment.chain === "solana" ? payment.payer : payment.payer.toLowerCase()) : null,
      rail,
      created_at: nowIso(),
      granted_at: null,
      job_id: null,
    };
    const stored = await orderStore.claimReference(db, row);
    return stored.holder === holder;
  }

  /** The holder of an on-chain payment, if anyone holds it. */
  async paymentHolder(chain: PaymentChain, tx: string): Promise<PaymentReferenceRow | undefined> {
    return orderStore.reference(this.db, paymentRef(chain, tx).ref);
  }

  /** Gives up a reservation that never became an order (its settlement failed). */
  async releasePayment(holder: string, payment: { chain: PaymentChain; tx: string }, db: Executor = this.db) {
    await orderStore.releaseReference(db, paymentRef(payment.chain, payment.tx).ref, holder);
  }

  /** Orders paid on chain by one wallet (wallet-signature recovery). */
  async paidBy(chain: PaymentChain, payer: string): Promise<OrderRow[]> {
    return orderStore.ordersPaidBy(this.db, chain, chain === "solana" ? payer : payer.toLowerCase());
  }

  view(order: OrderRow): OrderView {
    const product = this.catalog.find(order.sku);
    return {
      order_id: order.id,
      sku: order.sku,
      name: product?.name ?? order.sku,
      amount_cents: order.amount_cents,
      amount_usd: `${Math.trunc(order.amount_cents / 100)}.${String(order.amount_cents % 100).padStart(2, "0")}`,
      currency: order.currency,
      rail: order.rail,
      status: order.status,
      transaction: order.transaction_ref,
      email: order.email,
      agent_id: order.agent_id,
      agent_id_source: order.agent_id === null ? null : "self_asserted",
      license_key: order.license_key,
      created_at: order.created_at,
      revoked_at: order.revoked_at,
      revoke_reason: order.revoke_reason,
    };
  }

  async get(orderId: string): Promise<OrderRow> {
    const order = await orderStore.byId(this.db, orderId);
    if (!order) throw new Problem(404, "order_not_found", `No order ${orderId}.`);
    return order;
  }

  async byProofKey(proofKey: string): Promise<OrderRow | undefined> {
    return orderStore.byProofKey(this.db, proofKey);
  }

  /** Opens an entitlement by its access token: 404 unknown, 410 revoked or refunded. */
  async open(token: string): Promise<OrderRow> {
    const order = await orderStore.byTokenHash(this.db, hashToken(token));
    if (!order) throw new Problem(404, "access_not_found", "This access link is not valid.");
    if (order.status !== "active") {
      throw new Problem(410, `access_${order.status}`, `This access was ${order.status}.`, {
        order_id: order.id,
        status: order.status,
      });
    }
    return order;
  }

  /** Revokes an order's entitlement (operator action or refund). Idempotent. */
  async revoke(
    orderId: string,
    actor: string,
    reason: string,
    to: "revoked" | "refunded" = "revoked",
  ): Promise<OrderRow> {
    return this.db.transaction().execute(async (trx) => {
      const order = await orderStore.byId(trx, orderId);
      if (!order) throw new Problem(404, "order_not_found", `No order ${orderId}.`);
      const from: OrderRow["status"][] = to === "refunded" ? ["active", "revoked"] : ["active"];
      const changed = await orderStore.setStatus(trx, orderId, from, to, reason, nowIso());
      if (changed) await this.audit(actor, `order.${to}`, orderId, { reason, previous: order.status }, trx);
      const after = await orderStore.byId(trx, orderId);
      if (!after) throw new Error("order vanished");
      return after;
    });
  }

  async list(q: { limit: number; offset: number; sku?: string; status?: string; rail?: string; search?: string }) {
    return orderStore.list(this.db, q);
  }

  /**
   * Appends to the audit log (never updated, never deleted), and the same entry to hash chain
   * `audit` in the same transaction (docs/olympiad-records.md "The audit log on the chain").
   */
  async audit(actor: string, action: string, subject: string, detail: Record<string, unknown>, db: Executor = this.db) {
    const row = { id: randomUUID(), at: nowIso(), actor, action, subject, detail: JSON.stringify(detail) };
    const write = async (trx: Executor) => {
      await trx.insertInto("audit_log").values(row).execute();
      await appendToChain(trx, AUDIT_CHAIN, AUDIT_KIND, auditEntryBody(row), { at: row.at });
    };
    if (db.isTransaction) await write(db);
    else await db.transaction().execute(write);
  }
}
