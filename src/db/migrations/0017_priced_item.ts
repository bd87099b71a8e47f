import type { Kysely } from "kysely";

// Issue #22 item 1: the priced item travels as a value. A payment row (the x402/MPP proof ledger,
// a card checkout session) stores the item it pays for, as JSON (`PricedItem`: kind, ref, sku,
// name, amounts, resource, description), when it is first written; the grant hands that same value
// to the order core, also after a crash (the reconciler reads it back), instead of rebuilding it
// from the sku or quote columns. Rows written before this migration have it null: they are read
// with the item rebuilt from those columns, as before.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("payment_proofs").addColumn("item", "text").execute();
  await db.schema.alterTable("card_sessions").addColumn("item", "text").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("card_sessions").dropColumn("item").execute();
  await db.schema.alterTable("payment_proofs").dropColumn("item").execute();
}
