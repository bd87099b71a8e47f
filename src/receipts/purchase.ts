import type { Kysely } from "kysely";
import type { Database } from "../db/schema.js";
import type { Fulfilled } from "../orders/fulfilment.js";
import { QUOTE_SKU } from "../orders/priced-item.js";
import type { OrderRow } from "../orders/tables.js";
import { type OrderReceiptContext, receiptFactsFromPurchase } from "./facts.js";
import type { ReceiptFacts } from "./service.js";

/**
 * The receipt of any fulfilment, for the purchase answers of every rail: a product's is its
 * order's (the same bytes as the access page); a paid quote's names its job, with the payment read
 * from the proof ledger when a 402 dialect paid it (USDC units, network, payer, settlement), else
 * in cents (card). Every fact is stored, and the time is the job's creation, so each read gives the
 * same bytes. A free job (nothing paid) has no receipt.
 */
export function purchaseReceipts(deps: {
  db: Kysely<Database>;
  sign: (facts: ReceiptFacts) => string;
  orderReceipt: (order: OrderRow) => string;
  order: (id: string) => Promise<OrderRow>;
  ctx: OrderReceiptContext;
}): (fulfilled: Pick<Fulfilled, "kind" | "id">) => Promise<string | null> {
  return async ({ kind, id }) => {
    if (kind === "product") return deps.orderReceipt(await deps.order(id));
    const job = await deps.db.selectFrom("jobs").selectAll().where("id", "=", id).executeTakeFirst();
    if (!job?.payment_ref) return null;
    const quote = await deps.db.selectFrom("quotes").selectAll().where("id", "=", job.quote_id).executeTakeFirst();
    if (!quote) return null;
    const proof = await deps.db
      .selectFrom("payment_proofs")
      .select(["network", "amount_units", "payer", "settlement_tx"])
      .where("proof_key", "=", job.payment_ref)
      .executeTakeFirst();
    const item = {
      kind: "quote",
      ref: quote.id,
      sku: QUOTE_SKU,
      name: `Suite job ${quote.id}`,
      amountCents: quote.amount_cents,
      resource: `${deps.ctx.baseUrl}/api/jobs/${job.id}`,
    };
    const payment = proof
      ? {
          rail: job.paid_by,
          transactionRef: proof.settlement_tx,
          meta: { network: proof.network, amount_units: proof.amount_units, payer: proof.payer },
        }
      : { rail: job.paid_by, transactionRef: null, amountCents: quote.amount_cents };
    return deps.sign(receiptFactsFromPurchase(item, payment, { kind, id }, job.created_at, deps.ctx));
  };
}
