import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import type { Catalog } from "../catalog/service.js";
import { isUniqueViolation, nowIso } from "../db/database.js";
import type { Executor } from "../db/executor.js";
import { AUDIT_CHAIN, AUDIT_KIND, append as appendToChain, auditEntryBody } from "../db/hash-chain.js";
import type { Database } from "../db/schema.js";
import { Problem } from "../http/problem.js";
import {
  type Fulfilled,
  FulfilmentTable,
  type FulfilmentView,
  type OnChainPayment,
  type PaymentFacts,
} from "./fulfilment.js";
import type { PricedItem } from "./priced-item.js";
import { productFulfiller } from "./product-fulfiller.js";
import { orderStore } from "./store.js";
import type { OrderRow, PaymentChain, PaymentReferenceRow } from "./tables.js";
import { accessToken, hashToken } from "./tokens.js";

/** @deprecated name: the on-chain payment of a purchase (src/orders/fulfilment.ts). */
export type PaymentRefInput = OnChainPayment;

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

/**
 * Orders and entitlements. `grant` is the single function through which every
 * rail (x402, card checkout, payment link, approved claim) creates an order.
 */
export class OrderService {
  constructor(
    private readonly db: Kysely<Database>,
    readonly catalog: Catalog,
    private readonly baseUrl: string,
    private readonly tokenSecret: string,
    /** What each priced-item kind is fulfilled by: products here, quotes by the jobs (src/jobs/service.ts). */
    readonly fulfilment: FulfilmentTable = new FulfilmentTable(),
    private readonly options: {
      /** The signed receipt of a fulfilment (src/receipts), added to every purchase answer; null when none. */
      receipt?: (fulfilled: Pick<Fulfilled, "kind" | "id">) => Promise<string | null>;
    } = {},
  ) {
    fulfilment.register(productFulfiller(catalog, tokenSecret, this));
  }

  accessUrl(orderId: string): string {
    return `${this.baseUrl}/access/${accessToken(this.tokenSecret, orderId)}`;
  }

  amountUsd(order: Pick<OrderRow, "amount_cents">): string {
    return `${Math.trunc(order.amount_cents / 100)}.${String(order.amount_cents % 100).padStart(2, "0")}`;
  }

  /**
   * The single function through which every rail (x402, MPP, card checkout, payment link, approved
   * claim) turns a verified payment into what it bought: the fulfiller of the item's kind runs in one
   * transaction with the hold of the on-chain payment (one on-chain payment, one fulfilment, across
   * every rail) and its binding. A repeated grant with the same proof key answers the same
   * fulfilment (`created: false`). Pass a transaction to join a larger atomic change (a rail marking
   * its proof granted).
   */
  async grant(item: PricedItem, payment: PaymentFacts, trx?: Executor): Promise<Fulfilled> {
    const fulfiller = this.fulfilment.for(item.kind);
    const run = async (db: Executor): Promise<Fulfilled> => {
      if (payment.onChain) {
        const held = await this.holdPayment(payment.proofKey, payment.rail, payment.onChain, db);
        if (!held) throw paymentAlreadyUsed();
      }
      const result = await fulfiller.fulfil(item, payment, db);
      if (payment.onChain) {
        const { ref } = paymentRef(payment.onChain.chain, payment.onChain.tx);
        await orderStore.bindReference(db, ref, payment.proofKey, fulfiller.reference, result.id, nowIso());
      }
      return result;
    };
    if (trx) return run(trx);
    try {
      return await this.db.transaction().execute(run);
    } catch (err) {
      // A concurrent grant of the same proof won the race on PostgreSQL: answer its fulfilment.
      if (isUniqueViolation(err)) {
        const winner = await fulfiller.find(item, payment, this.db);
        if (winner) return winner;
      }
      throw err;
    }
  }

  /** The answer fields of a fulfilment (order id and access URL; job id, token and links). */
  async fulfilmentView(kind: PricedItem["kind"], id: string): Promise<FulfilmentView> {
    const view = await this.fulfilment.view(kind, id);
    const receipt = this.options.receipt ? await this.options.receipt({ kind, id }) : null;
    return receipt ? { ...view, receipt } : view;
  }

  /**
   * Reserves an on-chain payment for a holder (an x402 proof key, `claim:<id>`) before its order
   * exists, e.g. while a settlement is in flight. True when the holder has it (now or before).
   */
  async holdPayment(holder: string, rail: string, payment: OnChainPayment, db: Executor = this.db): Promise<boolean> {
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
      amount_usd: this.amountUsd(order),
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
