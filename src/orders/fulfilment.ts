import type { Executor } from "../db/executor.js";
import type { PricedItem } from "./priced-item.js";
import type { PaymentChain } from "./tables.js";

/**
 * What a payment buys is fulfilled by the fulfiller of the priced item's kind, chosen from this
 * table: a product grants an order (src/orders/product-fulfiller.ts), a suite quote creates its job
 * (src/jobs/service.ts registers it). A rail never knows what it sells: it hands the order core a
 * priced item and the facts of a verified payment, and answers with the fulfiller's view.
 */

/** The on-chain payment behind a purchase: one on-chain payment buys one item across every rail. */
export interface OnChainPayment {
  chain: PaymentChain;
  tx: string;
  payer?: string | null;
}

/** The facts of one verified, settled payment, as every rail states them. */
export interface PaymentFacts {
  /** Canonical, rail-specific key of the payment (`evm:8453:<asset>:<from>:<nonce>`, `stripe:session:cs_…`, `claim:<id>`): one fulfilment per key. */
  proofKey: string;
  rail: string;
  /** What was charged in integer cents; the item's price when omitted. */
  amountCents?: number;
  currency?: string;
  /** The rail's transaction reference (a chain transaction, a Stripe payment intent). */
  transactionRef?: string | null;
  email?: string | null;
  /** The buyer's self-asserted agent id (x402 `note: agent:<id>`). */
  agentId?: string | null;
  meta?: Record<string, unknown>;
  /** The on-chain payment, held for this proof key and bound to what it bought, in the grant transaction. */
  onChain?: OnChainPayment;
}

/** What a grant produced. `created` is false when the proof key had already been fulfilled (a replay). */
export interface Fulfilled {
  kind: PricedItem["kind"];
  /** The order id (product) or job id (quote). */
  id: string;
  created: boolean;
}

/** What a purchase answer shows of a fulfilment (order id and access URL; job id, token and links). */
export type FulfilmentView = Record<string, string | number | null>;

export interface Fulfiller {
  kind: PricedItem["kind"];
  /** The payment-reference column this kind's id is bound to. */
  reference: "order_id" | "job_id";
  /** Creates what the item buys, inside the grant transaction; idempotent per proof key (and per quote). */
  fulfil(item: PricedItem, payment: PaymentFacts, trx: Executor): Promise<Fulfilled>;
  /** The fulfilment a proof key already has (after a concurrent grant won the race), if any. */
  find(item: PricedItem, payment: PaymentFacts, db: Executor): Promise<Fulfilled | undefined>;
  /** The answer fields of a fulfilment. */
  view(id: string): Promise<FulfilmentView>;
}

/** The fulfillers by priced-item kind: each domain registers its own when it is built. */
export class FulfilmentTable {
  private readonly byKind = new Map<PricedItem["kind"], Fulfiller>();

  register(fulfiller: Fulfiller): void {
    if (this.byKind.has(fulfiller.kind)) throw new Error(`fulfilment: ${fulfiller.kind} is registered twice`);
    this.byKind.set(fulfiller.kind, fulfiller);
  }

  for(kind: PricedItem["kind"]): Fulfiller {
    const fulfiller = this.byKind.get(kind);
    if (!fulfiller) throw new Error(`fulfilment: nothing fulfils a ${kind}`);
    return fulfiller;
  }

  /** The answer fields of a fulfilment of this kind. */
  view(kind: PricedItem["kind"], id: string): Promise<FulfilmentView> {
    return this.for(kind).view(id);
  }
}
