import type { Kysely } from "kysely";

// Webhook senders over every instance (docs/suite.md "Webhooks", item 4): a claim counts the live
// leases of the delivery's origin (`lease_until >= now`), which this index finds without reading
// every pending delivery (a backlog of retries can hold many).

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex("webhook_deliveries_lease_idx")
    .on("webhook_deliveries")
    .columns(["lease_until"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("webhook_deliveries_lease_idx").execute();
}
